"""Lines that captured terminal text adds around a tool's output, and the warnings that name them.

Operators paste what their terminal showed: a UTF-8 byte-order mark, the shell prompt and the command
on the first line (``[root@ufm01 ~]# ibnetdiscover``), a terminal logger's banner
(``=~=~=~= PuTTY log 2026.01.10 10:00:00 =~=~=~=``), a tool's stderr interleaved with its stdout
(``src/query_smp.c:195; umad (DR path ...) bad status 110``, ``ibwarn: [123] mad_rpc: ...``) and a
prompt as the last line, often without a newline. Readers skip these, and only these, and every
skipped line becomes a :class:`Warning` naming its line, its text and why it was skipped; nothing is
skipped silently and nothing inside a record is guessed at.

A terminal session often holds several tools (``ibswitches``, ``ibstat``, ``sminfo``... then the one
being read). :class:`Session` recognises the other tools' lines and gathers them into one warning per
tool naming its lines (``ibswitches output skipped (lines 2-5, 9)``); a reader asks it only about a line
its own grammar does not read, so the common path costs nothing more, and never skips one inside a
record of its own (such a line is still an error naming it).

Topology readers (:mod:`fabric_engine.formats`) and counter readers (:mod:`fabric_engine.telemetry`) share
this module, so a line is noise, or not, the same way everywhere.
"""

from __future__ import annotations

import re
from typing import TypedDict

__all__ = ["Warning", "warning", "source_warning", "noise", "strip_bom", "plain_lines", "capped", "Session",
           "MAX_WARNINGS", "WARNING_TEXT_CHARS", "BOM_REMOVED"]

#: Warnings kept per file; a file with more says how many were left out in the last one.
MAX_WARNINGS = 200
#: Longest excerpt of a skipped line a warning keeps.
WARNING_TEXT_CHARS = 120
#: Reason of the warning for a removed UTF-8 byte-order mark.
BOM_REMOVED = "UTF-8 byte-order mark removed"
# Terminal escape sequences (a coloured prompt, a window title), removed before a line is classified.
_ESCAPES = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?)")
# Whole lines (fullmatch), each as infiniband-diags (libibmad's IBWARN "[pid] function: ", the
# "file.c:line; " of umad errors, "<tool>: iberror: ") or the terminal writes it. Linear in the line.
_NOISE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"=~=~=~=~=~=~=~=~=~=~=~= PuTTY log \d{4}\.\d\d\.\d\d \d\d:\d\d:\d\d =~=~=~=~=~=~=~=~=~=~=~="
                r"|Script (?:started|done) on .*"), "terminal logger banner"),
    (re.compile(r"(?:\([\w.-]+\) )?\[[\w.-]+@[\w.-]+(?: [^\]\n]*)?\][#$%](?: .*)?"), "shell prompt"),
    (re.compile(r"(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+(?::[^\s#$%]*)? ?[#$%](?: .*)?|[$%] \S.*"), "shell prompt"),
    (re.compile(r"ib(?:warn|panic|debug): \[\d+\] \w+: .*"), "tool diagnostic (stderr)"),
    (re.compile(r"[\w./-]+\.c:\d+; .*"), "tool diagnostic (stderr)"),
    (re.compile(r"(?:Failed to (?:open|find port|get local Node Info)|discover failed|WARN: string buffer overflow"
                r"|loading cached fabric failed)\b.*"), "tool diagnostic (stderr)"),
    (re.compile(r"[\w.-]+: iberror: .*"), "tool error message: the output stops there"),
)


# Other tools' lines (fullmatch on the stripped line), each with the tool that prints them. ibnodes prints
# ibswitches' and ibhosts' lines (ibnetdiscover -l). A block body line counts only right after its block's lines.
_TOOL_LINES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'Switch\s*: 0x[0-9A-Fa-f]{1,16} ports \d+ "[^"]*".*'), "ibswitches"),
    (re.compile(r'Ca\s*: 0x[0-9A-Fa-f]{1,16} ports \d+ "[^"]*".*'), "ibhosts"),
    (re.compile(r'Router\s*: 0x[0-9A-Fa-f]{1,16} ports \d+ "[^"]*".*'), "ibrouters"),
    (re.compile(r"sminfo: sm lid \d+ sm guid 0x[0-9A-Fa-f]{1,16}\b.*"), "sminfo"),
    (re.compile(r"(?:SW|CA|RT)\s+\d+\s+\d+\s+0x[0-9A-Fa-f]{1,16}\s+(?:\d+x|\?\?)\s+\S+\s.*"), "ibnetdiscover -p"),
    (re.compile(r"CA '[^']+'"), "ibstat"),
    (re.compile(r"Infiniband device '[^']+' port \d+ status:"), "ibstatus"),
)
_BLOCK_BODY: dict[str, re.Pattern[str]] = {
    "ibstat": re.compile(r"(?:CA type|Number of ports|Firmware version|Hardware version|Node GUID|System image GUID"
                         r"|Port \d+|State|Physical state|Rate|Base lid|LMC|SM lid|Capability mask|Port GUID"
                         r"|Link layer|Transport type):.*"),
    "ibstatus": re.compile(r"(?:default gid|base lid|sm lid|state|phys state|rate|link_layer):.*"),
}


class Warning(TypedDict):  # noqa: A001 - the name the API and docs use
    """One skipped or adjusted line: 1-based ``line``, its ``text`` (shortened), the ``reason``."""

    line: int
    text: str
    reason: str


def warning(line: int, text: str, reason: str) -> Warning:
    """A :class:`Warning` with the line's text stripped and shortened for display."""
    text = text.strip()
    return {"line": line, "text": text if len(text) <= WARNING_TEXT_CHARS else text[: WARNING_TEXT_CHARS - 1] + "…",
            "reason": reason}


def source_warning(source: str, line: int, text: str, reason: str) -> dict:
    """A :func:`warning` about line ``line`` of ``source``, naming it (``"source"``)."""
    return {**warning(line, text, reason), "source": source}


def noise(line: str) -> str | None:
    """Why ``line`` is captured-terminal noise rather than a tool's output, or ``None`` if it is not.

    >>> noise("[root@ufm01 ~]# perfquery -x 5 1"), noise("PortXmitData:....1") is None
    ('shell prompt', True)
    """
    plain = _ESCAPES.sub("", line).strip() if "\x1b" in line else line.strip()
    for pattern, reason in _NOISE:
        if pattern.fullmatch(plain):
            return reason
    return None


def strip_bom(text: str, warnings: list[Warning]) -> str:
    """``text`` without a leading UTF-8 byte-order mark (a warning says it was there)."""
    if text.startswith("\ufeff"):
        warnings.append(warning(1, "", BOM_REMOVED))
        return text[1:]
    return text


def plain_lines(text: str, source: str, warnings: list | None) -> str:
    """``text`` with LF line ends and without byte order marks at line starts (a :func:`source_warning` each
    into ``warnings``, if given), its lines kept: a capture saved on Windows, or such files joined with cat."""
    if "\ufeff" in text:
        lines = text.split("\n")
        for i, ln in enumerate(lines):
            if ln.startswith("\ufeff"):
                lines[i] = ln[1:]
                if warnings is not None:
                    warnings.append(source_warning(source, i + 1, "", BOM_REMOVED))
        text = "\n".join(lines)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return text


class Session:
    """The lines of other tools in one captured terminal session, gathered per tool (see the module doc).

    >>> s = Session()
    >>> s.foreign(2, 'Switch\t: 0x08c0eb0300add04e ports 41 "Quantum" base port 0 lid 10 lmc 0')
    'ibswitches'
    >>> s.foreign(3, "CA 'mlx5_0'"), s.foreign(4, "    Port 1:"), s.foreign(9, "Port 1:")
    ('ibstat', 'ibstat', None)
    >>> [w["reason"] for w in s.warnings()]
    ['ibswitches output skipped (line 2)', 'ibstat output skipped (lines 3-4)']
    """

    def __init__(self, own: str = "") -> None:
        """``own``: the tool whose output is being read (``"ibnetdiscover -p"``): its lines are never foreign."""
        self._own = own
        self._lines: dict[str, list[int]] = {}
        self._text: dict[str, str] = {}
        self._last = (0, "")  # (line, tool) of the last foreign line

    def foreign(self, lineno: int, line: str) -> str | None:
        """The tool that printed ``line`` (1-based ``lineno``) if it is another tool's, remembered; else ``None``."""
        plain = _ESCAPES.sub("", line).strip() if "\x1b" in line else line.strip()
        tool = None
        last_line, last_tool = self._last
        body = _BLOCK_BODY.get(last_tool)
        if body is not None and last_line == lineno - 1 and body.fullmatch(plain):
            tool = last_tool
        else:
            tool = next((name for pattern, name in _TOOL_LINES if name != self._own and pattern.fullmatch(plain)), None)
        if tool is not None:
            self._lines.setdefault(tool, []).append(lineno)
            self._text.setdefault(tool, plain)
            self._last = (lineno, tool)
        return tool

    def warnings(self) -> list[Warning]:
        """One warning per tool, at its first line: the tool and the ranges of its lines."""
        out = []
        for tool, lines in self._lines.items():
            ranges, start = [], lines[0]
            for prev, cur in zip(lines, lines[1:] + [0], strict=True):
                if cur != prev + 1:
                    ranges.append(f"{start}" if start == prev else f"{start}-{prev}")
                    start = cur
            what = "line" if len(lines) == 1 else "lines"
            shown = ", ".join(ranges[:20]) + (f", ... ({len(ranges) - 20} more runs)" if len(ranges) > 20 else "")
            out.append(warning(lines[0], self._text[tool], f"{tool} output skipped ({what} {shown})"))
        return out


def capped(warnings: list[Warning]) -> list[Warning]:
    """At most :data:`MAX_WARNINGS` warnings; the last says how many more there were."""
    if len(warnings) <= MAX_WARNINGS:
        return warnings
    rest = len(warnings) - MAX_WARNINGS + 1
    last = warnings[MAX_WARNINGS - 1]
    return [*warnings[: MAX_WARNINGS - 1],
            {"line": last["line"], "text": "", "reason": f"{rest:,} more warnings from line {last['line']} on"}]
