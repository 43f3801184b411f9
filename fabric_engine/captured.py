"""Lines that captured terminal text adds around a tool's output, and the warnings that name them.

Operators paste what their terminal showed: a UTF-8 byte-order mark, the shell prompt and the command
on the first line (``[root@ufm01 ~]# ibnetdiscover``), a terminal logger's banner
(``=~=~=~= PuTTY log 2026.01.10 10:00:00 =~=~=~=``), a tool's stderr interleaved with its stdout
(``src/query_smp.c:195; umad (DR path ...) bad status 110``, ``ibwarn: [123] mad_rpc: ...``) and a
prompt as the last line, often without a newline. Readers skip these, and only these, and every
skipped line becomes a :class:`Warning` naming its line, its text and why it was skipped; nothing is
skipped silently and nothing inside a record is guessed at.

Topology readers (:mod:`fabric_engine.formats`) and counter readers (:mod:`fabric_engine.telemetry`) share
this module, so a line is noise, or not, the same way everywhere.
"""

from __future__ import annotations

import re
from typing import TypedDict

__all__ = ["Warning", "warning", "noise", "strip_bom", "capped", "MAX_WARNINGS", "WARNING_TEXT_CHARS", "BOM_REMOVED"]

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


def capped(warnings: list[Warning]) -> list[Warning]:
    """At most :data:`MAX_WARNINGS` warnings; the last says how many more there were."""
    if len(warnings) <= MAX_WARNINGS:
        return warnings
    rest = len(warnings) - MAX_WARNINGS + 1
    last = warnings[MAX_WARNINGS - 1]
    return [*warnings[: MAX_WARNINGS - 1],
            {"line": last["line"], "text": "", "reason": f"{rest:,} more warnings from line {last['line']} on"}]
