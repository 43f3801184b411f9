"""Lines of a captured tool output for the health readers: LF ends, byte-order marks and terminal noise.

Each reader keeps its own grammar; this module only prepares lines and decides, for a line the
grammar does not read, whether it is noise (a shell prompt, a tool's stderr, another tool's output:
:mod:`fabric_engine.captured`) skipped with a warning, or an error naming the file and line.
"""

from __future__ import annotations

import re

from ..captured import BOM_REMOVED, Session, noise, warning
from ..errors import FormatError

__all__ = ["lines_of", "Skipper", "ESCAPES"]

#: ANSI colour escapes (mlxlink colours values and resets the colour at the start of the next line).
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# NVIDIA tools' messages on stderr (mlxlink, mlxcables, ibdiagnet): "-E- ...", "-W- ...", "-I- ...".
_MFT_MESSAGE = re.compile(r"-[EWI]- .*")


def lines_of(text: str, source: str, warnings: list) -> list[str]:
    """``text`` split into lines (CR LF read as LF, a byte-order mark at a line start removed with a warning)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if "\ufeff" in text:
        for i, ln in enumerate(lines):
            if ln.startswith("\ufeff"):
                lines[i] = ln[1:]
                warnings.append(warning(i + 1, "", BOM_REMOVED))
    if "\x1b" in text:
        lines = [ESCAPES.sub("", ln) for ln in lines]
    return lines


class Skipper:
    """Decides about lines a reader's grammar does not read: noise (a warning) or an error."""

    def __init__(self, source: str, tool: str, warnings: list) -> None:
        self.source, self.tool, self.warnings = source, tool, warnings
        self.session = Session(tool)

    def skip(self, lineno: int, line: str, inside: bool = False) -> None:
        """Skip ``line`` (1-based ``lineno``) with a warning if it is noise, else raise :class:`FormatError`.

        ``inside``: the line is inside a record of the reader's own, where another tool's output is an error.
        """
        reason = noise(line)
        if reason is None and _MFT_MESSAGE.fullmatch(line.strip()):
            reason = "tool message (stderr)"
        if reason is not None:
            self.warnings.append(warning(lineno, line, reason))
            return
        if not inside and self.session.foreign(lineno, line) is not None:
            return
        raise FormatError(self.source, lineno, f"not a line of {self.tool} output: {line.strip()[:80]!r}")

    def finish(self) -> None:
        """Add the one warning per other tool of the session."""
        self.warnings.extend(self.session.warnings())
