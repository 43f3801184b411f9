"""List the ``ERR XXXX`` entries of an OpenSM log: when, which code, what it said.

OpenSM logs every error with ``OSM_LOG(log, OSM_LOG_ERROR, "ERR XXXX: ...")`` (four hex digits naming the source
file's range and the error, e.g. ``ERR 3102`` in ``osm_sm_mad_ctrl.c``); the macro puts the function before it
(``include/opensm/osm_log.h``), ``osm_log`` (``libopensm/osm_log.c``) the entry's head
``"%s %02d %02d:%02d:%02d %06d [%04X] 0x%02x -> "`` (month, day, local time, microseconds, thread, level) and, when
configured, the log prefix. A message may continue on tab-indented lines (kept with it, up to
:data:`MAX_CONTINUATION_LINES` and :data:`MAX_TEXT_CHARS`). The entry's time is read as
:mod:`fabric_engine.health.opensm_log` reads it (no year in the log: the latest not after ``now``; the SM host's
zone ``tz``). The text is scanned for ``ERR XXXX:`` and only the entries holding one are parsed, so a log of
millions of entries costs one scan. Lines before the first entry and a capture's trailing prompt are skipped with a
warning (:mod:`fabric_engine.captured`); an entry whose date is impossible names its line.
"""

from __future__ import annotations

import re
import time
from datetime import tzinfo

from ..captured import noise
from ..errors import FormatError
from ..health._lines import lines_of
from ..health.opensm_log import log_epoch  # the log's time, read one way for link downs and for errors
from .vitals import OpensmError

__all__ = ["read", "looks_like", "MAX_ERRORS", "MAX_TEXT_CHARS"]

#: Most ERR entries listed from one log (the rest are counted in a warning).
MAX_ERRORS = 100_000
#: Longest text kept of one entry (its message and continuation lines).
MAX_TEXT_CHARS = 1024
_MONTH = r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_ERR = re.compile(r"ERR ([0-9A-Fa-f]{4}):[ \t]*")  # a literal first: found by a fast scan of the text
_ENTRY_HEAD = re.compile(rf"{_MONTH} (\d\d) (\d\d):(\d\d):(\d\d) (\d{{6}}) \[[0-9A-Fa-f]{{1,16}}\] 0x[0-9a-f]{{2}} -> ")
_HEAD = re.compile(rf"^{_MONTH} \d\d \d\d:\d\d:\d\d \d{{6}} \[", re.M)
#: Continuation lines kept with an entry.
MAX_CONTINUATION_LINES = 16


def looks_like(text: str) -> bool:
    """Whether ``text`` starts like an OpenSM log (an entry head within its first lines)."""
    return _HEAD.search(text[:4096]) is not None


def read(text: str, source: str = "opensm.log", warnings: list | None = None, *, now: float | None = None,
         tz: tzinfo | None = None) -> list[OpensmError]:
    """The ERR entries of an OpenSM log (or a terminal capture of one), in the log's order."""
    warnings = warnings if warnings is not None else []
    now = time.time() if now is None else float(now)
    if "\r" in text or "\ufeff" in text or "\x1b" in text:
        text = "\n".join(lines_of(text, source, warnings))
    first = _HEAD.search(text)
    _edges(text, first.start() if first else len(text), warnings)
    out: list[OpensmError] = []
    line, counted, done, more = 1, 0, 0, 0  # the line number at ``counted``; entries before ``done`` are read
    for m in _ERR.finditer(text):
        at = m.start()
        if at < done or at and text[at - 1] not in " \t:":
            continue
        start = text.rfind("\n", 0, at) + 1
        head = _ENTRY_HEAD.match(text, start)
        if head is None or head.end() > at:  # in an entry's later line, or not in an entry
            continue
        line += text.count("\n", counted, start)
        counted = start
        eol = _eol(text, m.end())
        parts = [text[m.end():eol].strip()]
        while text.startswith("\t", eol + 1) and len(parts) <= MAX_CONTINUATION_LINES:
            nxt = _eol(text, eol + 1)
            parts.append(text[eol + 1:nxt].strip())
            eol = nxt
        done = eol
        if len(out) >= MAX_ERRORS:
            more += 1
            continue
        try:
            t = log_epoch(*head.group(1, 2, 3, 4, 5, 6), now, tz)
        except ValueError as exc:
            raise FormatError(source, line, f"entry time {text[start:start + 21]!r}: {exc}") from None
        out.append(OpensmError(t, m.group(1).upper(), " ".join(p for p in parts if p)[:MAX_TEXT_CHARS],
                               f"{source}:{line}"))
    if more:
        warnings.append({"line": line, "text": "", "reason": f"{more:,} more ERR entries not listed (at most "
                                                              f"{MAX_ERRORS:,})"})
    _tail(text, warnings)
    return out


def _eol(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _edges(text: str, start: int, warnings: list) -> None:
    """Warnings for the lines before the first entry (a prompt, a banner: anything but the log)."""
    for i, ln in enumerate(text[:start].split("\n")[:-1] if start else [], 1):
        if ln.strip():
            warnings.append({"line": i, "text": ln.strip()[:120],
                             "reason": noise(ln) or "not an OpenSM log entry: skipped"})


def _tail(text: str, warnings: list) -> None:
    """A warning for a capture's last line when it is a prompt (terminal noise), not a log line."""
    end = len(text)
    while end and text[end - 1] == "\n":  # trailing newlines, without copying the text
        end -= 1
    start = text.rfind("\n", 0, end) + 1
    last = text[start:end]
    reason = noise(last) if last.strip() and not last.startswith("\t") and _HEAD.match(last) is None else None
    if reason is not None:
        warnings.append({"line": text.count("\n", 0, start) + 1, "text": last.strip()[:120], "reason": reason})
