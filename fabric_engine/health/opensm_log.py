"""OpenSM's log as link-down evidence: the ports it unlinked and linked, and the link state change traps, timed.

Every entry OpenSM writes (``osm_log`` in ``libopensm/osm_log.c``) starts
``"%s %02d %02d:%02d:%02d %06d [%04X] 0x%02x -> %s"``: month abbreviation, day, local time, microseconds,
the thread (hex), the entry's level and the message, which ``OSM_LOG`` prefixes with its function
(``"%s: "``). A message may hold newlines (its later lines start with tabs); any line that is not an entry's
start belongs to the entry before. The log has no year (it is taken so that a time is not after ``now``) and no
zone (local time of the SM host, ``tz``). What is read (format strings of OpenSM's sources):

* ``Unlinking local node 0x%016llx, port %u\\n\\t\\t\\t\\tand remote node 0x%016llx, port %u`` (level VERBOSE,
  0x04; ``osm_port_info_rcv.c`` when a port reads LinkDown, ``osm_drop_mgr.c`` also ``... due to missing
  PortInfo``): both ends of the link down;
* ``Creating new link between:\\n\\t\\t\\t\\tnode 0x%llx, port number %u and\\n\\t\\t\\t\\tnode 0x%llx, port number
  %u`` (DEBUG, 0x08; ``osm_node_info_rcv.c``): both ends up;
* trap 128 (``SM_LINK_STATE_CHANGED_TRAP``), which a switch sends when the link state of a port of it changed
  (it names the switch, not the port): ``Received Generic Notice type:%u num:128 (Link state change)
  Producer:%u (%s) from LID:%u ...`` (ERROR, always logged, ``osm_trap_rcv.c``) and ``Reporting Urgent Notice
  "Link state change" from switch LID %u, GUID 0x%016llx`` (INFO, ``osm_inform.c``). OpenSM sweeps on the trap:
  the newest trap of either end's node at most ``trap_window_s`` before an unlinking or linking of the link, when
  that change is among the node's first after the trap (the sweep the trap started) and after that port's
  previous one, gives it its time: the event is ``exact``, the trap's time (its receipt; the report right after
  it is the same trap).

OpenSM's default level (``-D 0x03``) logs the traps only: per-port evidence needs ``-D 0x07`` (``-v``), and
``0x0f`` (or ``-V``, ``-D 0xFF``) for the links made again. The log is ``/var/log/opensm.log`` unless ``-f``
says otherwise; OpenSM reopens it on SIGUSR1 (logrotate). A big log is read in pieces (:func:`tail`): from a
byte offset, up to the last complete line, holding back an entry whose later lines are not written yet; a log
smaller than the offset (truncated by OpenSM's ``-L`` limit or rotated with ``copytruncate``) or of another
inode (rotated) is read from its start again.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

import numpy as np

from ..captured import noise
from ..errors import FormatError
from ..topology.limits import MAX_UNICAST_LID
from ._lines import lines_of

__all__ = ["LogEvidence", "read", "tail", "TailState", "feed", "looks_like", "TRAP_WINDOW_S"]

#: Longest a link state change trap may come before the unlinking (or linking) it times: OpenSM sweeps on a trap
#: at once (``sweep_on_trap``), so the change is seen within a sweep's time.
TRAP_WINDOW_S = 30.0
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                        "Dec"), 1)}
_HEAD = re.compile(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d\d) (\d\d):(\d\d):(\d\d) (\d{6}) "
                   r"\[[0-9A-Fa-f]{1,16}\] 0x([0-9a-f]{2}) -> (.*)")
_HEX = r"0x([0-9A-Fa-f]{1,16})"
_UNLINK = re.compile(rf"Unlinking local node {_HEX}, port (\d{{1,3}})\s+and remote node {_HEX}, port (\d{{1,3}})")
_NEWLINK = re.compile(rf"Creating new link between:\s+node {_HEX}, port number (\d{{1,3}}) and\s+node {_HEX}, "
                      r"port number (\d{1,3})")
_HEAD_BYTES = re.compile(rb"(?m)^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d\d \d\d:\d\d:\d\d ")
_OPENS = re.compile(r"Unlinking local node|Creating new link between")  # a message that waits for its later lines
_WANTED = re.compile(r"Unlinking local node|Creating new link between|Link state change")  # entries read further
_KEYWORDS = re.compile(_WANTED.pattern.encode())
#: Later lines kept of an entry read further (an unlinking has one, a linking two).
_KEEP_LINES = 4
_TRAP_REPORT = re.compile(rf'Reporting Urgent Notice "Link state change" from switch LID (\d{{1,5}}), GUID {_HEX}')
_TRAP_RECEIVED = re.compile(r"Received Generic Notice type:\d+ num:128 \(Link state change\) Producer:\d+ "
                            r"\([^)]*\) from LID:(\d{1,5})")


@dataclass
class LogEvidence:
    """Port state changes read from the log (one row per port end) and the link state change traps.

    Ports: ``t`` (epoch seconds), ``guid`` (node GUID), ``port``, ``up`` (0 down, 1 up), ``exact`` (``t`` is a
    trap's time), ``line``. Traps: ``trap_t``, ``trap_lid``, ``trap_guid`` (0: not named), ``trap_line``.
    """

    t: np.ndarray
    guid: np.ndarray
    port: np.ndarray
    up: np.ndarray
    exact: np.ndarray
    line: np.ndarray
    trap_t: np.ndarray
    trap_lid: np.ndarray
    trap_guid: np.ndarray
    trap_line: np.ndarray
    warnings: list = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.t.size)

    def as_json(self) -> dict:
        """Plain lists (to keep in a cache or send)."""
        return {"t": self.t.tolist(), "guid": [f"0x{int(g):016x}" for g in self.guid.tolist()],
                "port": self.port.tolist(), "up": self.up.tolist(), "exact": self.exact.tolist()}


def looks_like(text: str) -> bool:
    """Whether ``text`` starts like an OpenSM log (its first entry line within the first lines)."""
    return any(_HEAD.fullmatch(ln.rstrip()) for ln in text[:4096].splitlines()[:20])


def log_epoch(month: str, day: str, hh: str, mm: str, ss: str, us: str, now: float, tz: tzinfo | None) -> float:
    ref = datetime.fromtimestamp(now, tz)
    for year in (ref.year, ref.year - 1):  # a December entry read in January is last year's
        try:
            when = datetime(year, _MONTHS[month], int(day), int(hh), int(mm), int(ss), int(us), tzinfo=tz)
        except ValueError:  # 29 Feb of a year without it
            continue
        if when <= ref + timedelta(days=1):
            return when.timestamp()
    raise ValueError(f"{month} {day} is not a date")


def read(text: str, source: str = "opensm.log", warnings: list | None = None, *, now: float | None = None,
         tz: tzinfo | None = None, trap_window_s: float = TRAP_WINDOW_S, first_line: int = 1,
         earlier_traps: tuple[np.ndarray, np.ndarray] | None = None) -> LogEvidence:
    """The evidence in ``text`` (whole entries of an OpenSM log, or a terminal capture of one).

    ``now``: the time the log was read (the year of its entries; default: now); ``tz``: the SM host's zone
    (default: this process's local time). ``first_line``: the number of ``text``'s first line in the file.
    A line before the first entry, or a terminal's own line (a shell prompt) outside an entry, is skipped with
    a warning; an entry whose fields are out of range is a :class:`FormatError` naming its line.
    ``earlier_traps``: (times, switch GUIDs) of traps read before ``text`` (the previous piece of the log), which
    may time its first changes; they are not returned again.
    """
    warnings = warnings if warnings is not None else []
    now = time.time() if now is None else float(now)
    lines = lines_of(text, source, warnings)
    entries: list[tuple[int, float, list[str]]] = []  # (line, time, message and its later lines) of those wanted
    current: list[str] | None = None  # the lines of the entry being read, if it is wanted
    seen = False  # an entry's first line was read
    last = first_line + len(lines) - 1 - (not lines[-1].strip() if lines else 0)
    for i, ln in enumerate(lines, first_line):
        if ln[:3] in _MONTHS and " -> " in ln[30:64]:  # an entry's first line (checked in full if wanted)
            seen, current = True, None
            if not _WANTED.search(ln):  # most entries: neither parsed nor kept
                continue
            m = _HEAD.fullmatch(ln)
            if m is not None:
                try:
                    t = log_epoch(*m.group(1, 2, 3, 4, 5, 6), now, tz)
                except ValueError as exc:
                    raise FormatError(source, i, f"entry time {m.group(0)[:21]!r}: {exc}") from None
                current = [m.group(8)]
                entries.append((i, t, current))
                continue
            warnings.append({"line": i, "text": ln[:120], "reason": "not an OpenSM log entry line: skipped"})
            continue
        if not ln.strip():
            continue
        # OpenSM indents a message's later lines; the unindented ones (its tables) are noise-checked only before
        # the first entry, inside an entry read further and at the end (a capture's last prompt): a busy log has many
        reason = None if ln[0] in " \t" or (seen and current is None and i != last) else noise(ln)
        if reason is not None or not seen:
            warnings.append({"line": i, "text": ln[:120], "reason": reason or "not an OpenSM log entry: skipped"})
            continue
        if current is not None and len(current) <= _KEEP_LINES:
            current.append(ln)
    return _evidence(entries, source, warnings, trap_window_s, earlier_traps)


def _guid(text: str, source: str, line: int) -> int:
    value = int(text, 16)
    if value == 0:
        raise FormatError(source, line, "node GUID 0x0")
    return value


def _evidence(entries: list[tuple[int, float, list[str]]], source: str, warnings: list, trap_window_s: float,
              earlier: tuple[np.ndarray, np.ndarray] | None) -> LogEvidence:
    links: list[tuple[float, int, int, int, int, int, int]] = []  # t, up, guid a, port a, guid b, port b, line
    traps: list[tuple[float, int, int, int]] = []  # t, lid, guid, line
    for line, t, parts in entries:  # one entry at a time: the log's text, never its ports
        msg = "\n".join(parts)
        for pattern, up in ((_UNLINK, 0), (_NEWLINK, 1)):
            m = pattern.search(msg)
            if m is not None:
                pa, pb = int(m.group(2)), int(m.group(4))
                if not (0 <= pa <= 255 and 0 <= pb <= 255):
                    raise FormatError(source, line, f"port {max(pa, pb)} out of range 0..255")
                links.append((t, up, _guid(m.group(1), source, line), pa, _guid(m.group(3), source, line), pb, line))
                break
        else:
            if _OPENS.search(msg):
                warnings.append({"line": line, "text": msg[:120], "reason": "entry cut short: its ports not read"})
                continue
            m = _TRAP_REPORT.search(msg) or _TRAP_RECEIVED.search(msg)
            if m is not None:
                lid = int(m.group(1))
                if not 0 < lid <= MAX_UNICAST_LID:
                    raise FormatError(source, line, f"LID {lid} out of range 1..{MAX_UNICAST_LID}")
                if m.re is _TRAP_RECEIVED:
                    traps.append((t, lid, 0, line))
                    continue
                guid = int(m.group(2), 16)
                last = traps[-1] if traps else None
                if last is not None and last[1] == lid and last[2] == 0 and 0 <= t - last[0] <= 1.0:
                    traps[-1] = (last[0], lid, guid, last[3])  # the report of the trap just received: one trap
                else:
                    traps.append((t, lid, guid, line))
    trap = np.array(traps, dtype=np.float64).reshape(-1, 4)
    trap_t, trap_lid, trap_line = trap[:, 0], trap[:, 1].astype(np.int64), trap[:, 3].astype(np.int64)
    trap_guid = np.array([g for _, _, g, _ in traps], np.uint64)
    trap_guid = _name_traps(trap_lid, trap_guid)
    cols = list(zip(*links, strict=True)) if links else [()] * 7
    t, up = np.array(cols[0], np.float64), np.array(cols[1], np.int8)
    ga, pa, gb, pb = (np.array(cols[k], dt) for k, dt in ((2, np.uint64), (3, np.int64), (4, np.uint64),
                                                          (5, np.int64)))
    line = np.array(cols[6], np.int64)
    all_t, all_guid = trap_t, trap_guid
    if earlier is not None:
        all_t, all_guid = np.r_[earlier[0], trap_t], np.r_[np.asarray(earlier[1], np.uint64), trap_guid]
    when, exact = _trap_times(t, ga, pa, gb, pb, all_t, all_guid, trap_window_s)
    return LogEvidence(np.r_[when, when], np.r_[ga, gb], np.r_[pa, pb].astype(np.int16),
                       np.r_[up, up], np.r_[exact, exact], np.r_[line, line], trap_t, trap_lid, trap_guid, trap_line,
                       warnings)


def _name_traps(lid: np.ndarray, guid: np.ndarray) -> np.ndarray:
    """Each trap's switch GUID: its own, else that of the nearest earlier (else later) trap of its LID naming one
    (OpenSM logs a trap received, by LID, then reports it, by LID and GUID)."""
    named = guid != 0
    if named.all() or not named.any():
        return guid
    order = np.lexsort((np.arange(lid.size), lid))
    lids, g = lid[order], guid[order]
    idx = np.arange(g.size)
    before = np.maximum.accumulate(np.where(g != 0, idx, -1))
    after = np.minimum.accumulate(np.where(g != 0, idx, g.size)[::-1])[::-1]
    pick = np.where((before >= 0) & (lids[np.maximum(before, 0)] == lids), before,
                    np.where((after < g.size) & (lids[np.minimum(after, g.size - 1)] == lids), after, -1))
    out = np.empty_like(guid)
    out[order] = np.where((g == 0) & (pick >= 0), g[np.maximum(pick, 0)], g)
    return out


def _search(key_guid: np.ndarray, key_t: np.ndarray, want_guid: np.ndarray, want_t: np.ndarray,
            after: bool = False) -> np.ndarray:
    """Index of the newest (guid, t) pair of the same GUID at or before ``want_t`` (``after``: the oldest at or
    after it); -1: none."""
    if not key_guid.size or not want_guid.size:
        return np.full(want_guid.size, -1, np.int64)
    uniq = np.unique(key_guid)
    rank = np.searchsorted(uniq, key_guid)
    want_rank = np.minimum(np.searchsorted(uniq, want_guid), uniq.size - 1)
    t0 = min(float(key_t.min()), float(want_t.min()))
    span = max(float(key_t.max()), float(want_t.max())) - t0 + 1.0
    key = rank * span + (key_t - t0)  # one sorted axis: GUID rank, then time within it
    order = np.argsort(key, kind="stable")
    want = want_rank * span + (want_t - t0)
    pos = np.searchsorted(key[order], want, side="left") if after else \
        np.searchsorted(key[order], want, side="right") - 1
    ok = (pos >= 0) & (pos < key.size)
    hit = order[np.clip(pos, 0, key.size - 1)]
    found = ok & (uniq[want_rank] == want_guid) & (rank[hit] == want_rank)
    return np.where(found, hit, -1)


#: Changes of one node OpenSM finds in the sweep a trap starts come within this of the first of them.
_BURST_S = 1.0


def _trap_times(t: np.ndarray, ga: np.ndarray, pa: np.ndarray, gb: np.ndarray, pb: np.ndarray, trap_t: np.ndarray,
                trap_guid: np.ndarray, window: float) -> tuple[np.ndarray, np.ndarray]:
    """Each link event's time made a trap's, where the newest trap of either end's node came at most ``window``
    before it, the event is among the node's first changes after the trap (within :data:`_BURST_S` of the first:
    the sweep the trap started) and after the previous event of either end's port; and whether it was."""
    ends_g, ends_p, ends_t = np.r_[ga, gb], np.r_[pa, pb], np.r_[t, t]
    best = np.full(t.size, -np.inf)
    for g in (ga, gb) if trap_t.size else ():
        i = _search(trap_guid, trap_t, g, t)
        when = np.where(i >= 0, trap_t[np.maximum(i, 0)], np.nan)
        first = _search(ends_g, ends_t, g, np.where(i >= 0, when, t), after=True)
        burst = (i >= 0) & (t - ends_t[np.maximum(first, 0)] <= _BURST_S)
        best = np.fmax(best, np.where(burst, when, -np.inf))
    prev = np.full(t.size, -np.inf)  # the previous event of either end's port
    if t.size:
        ends_i = np.r_[np.arange(t.size), np.arange(t.size)]
        order = np.lexsort((ends_i, ends_t, ends_p, ends_g))
        og, op, ot = ends_g[order], ends_p[order], ends_t[order]
        same = np.r_[False, (og[1:] == og[:-1]) & (op[1:] == op[:-1])]
        np.maximum.at(prev, ends_i[order], np.where(same, np.r_[-np.inf, ot[:-1]], -np.inf))
    ok = (best >= t - window) & (best > prev)
    return np.where(ok, best, t), ok


@dataclass
class TailState:
    """Where the previous :func:`tail` stopped: the file's inode, byte offset and line number there, and the
    traps of the last :data:`TRAP_WINDOW_S` read so far (``[[t, guid], ...]``: a change in the next piece may
    follow its trap in this one)."""

    inode: int = 0
    offset: int = 0
    line: int = 1
    traps: list = field(default_factory=list)

    def as_json(self) -> dict:
        return {"inode": self.inode, "offset": self.offset, "line": self.line, "traps": self.traps}

    @classmethod
    def from_json(cls, data: dict | None) -> TailState:
        data = data or {}
        traps = [[float(t), int(g)] for t, g in data.get("traps") or ()]
        return cls(int(data.get("inode", 0)), int(data.get("offset", 0)), int(data.get("line", 1)), traps)


def tail(path: str | Path, state: TailState | None = None, warnings: list | None = None, *, max_bytes: int = 64 << 20,
         now: float | None = None, tz: tzinfo | None = None) -> tuple[LogEvidence, TailState]:
    """The evidence written to the log at ``path`` since ``state`` (None: from its start), and where to go on.

    Reads at most ``max_bytes`` (the rest at the next call), up to the last complete line, and holds back a last
    entry that waits for its later lines. A file smaller than the offset or of another inode is read from its
    start (with a warning). The file's bytes are read as UTF-8, a bad byte replaced.
    """
    warnings = warnings if warnings is not None else []
    state = state or TailState()
    path = Path(path)
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        if state.inode and (st.st_ino != state.inode or st.st_size < state.offset):
            warnings.append({"line": None, "text": str(path), "reason": "log rotated or truncated since the last "
                                                                      "read: read from its start again"})
            state = TailState()
        fh.seek(state.offset)
        chunk = fh.read(max_bytes)
    chunk = chunk[:chunk.rfind(b"\n") + 1]  # a line still being written is read next time
    starts = [m.start() for m in _HEAD_BYTES.finditer(chunk, max(0, len(chunk) - 65536))]
    if starts:  # hold back a last entry still waiting for its later lines
        entry = chunk[starts[-1]:].decode("utf-8", "replace")
        if _OPENS.search(entry) and not (_UNLINK.search(entry) or _NEWLINK.search(entry)):
            chunk = chunk[:starts[-1]]
    if not _KEYWORDS.search(chunk):  # most of a busy log: nothing of links in it, not parsed line by line
        chunk_lines = chunk.count(b"\n")
        return read("", str(path), warnings), TailState(st.st_ino, state.offset + len(chunk), state.line + chunk_lines,
                                                        state.traps)
    text = chunk.decode("utf-8", "replace")
    before = np.array([t for t, _ in state.traps], np.float64), np.array([g for _, g in state.traps], np.uint64)
    ev = read(text, str(path), warnings, now=now, tz=tz, first_line=state.line, earlier_traps=before)
    times, guids = np.r_[before[0], ev.trap_t], np.r_[before[1], ev.trap_guid]
    newest = max(float(times.max(initial=-np.inf)), float(ev.t.max(initial=-np.inf)))
    recent = (times >= newest - TRAP_WINDOW_S) & (guids != 0)
    traps = [[float(t), int(g)] for t, g in zip(times[recent][-1000:], guids[recent][-1000:], strict=True)]
    return ev, TailState(st.st_ino, state.offset + len(chunk), state.line + text.count("\n"), traps)


def feed(tracker, ev: LogEvidence | dict,
         tag_of: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> int:
    """Observe ``ev``'s port changes (a :class:`LogEvidence`, or its arrays ``t``, ``guid``, ``port``, ``up``,
    ``exact`` as a dict) with :class:`~.downs.DownTracker` ``tracker`` (its public ``observe`` and ``last_seen``), in
    time order, a port at most once per call; a change not newer than what the tracker saw of its port last (the
    sweep saw it first, or it was fed before) is left out, so the same evidence fed again changes nothing.
    ``tag_of``: ``(guids, ports)`` -> the tag each down opening an episode keeps (the jobs on the link:
    :meth:`~.down_jobs.DownJobs.tag`). Returns the changes observed."""
    col = ev.get if isinstance(ev, dict) else lambda f: getattr(ev, f)
    t, guid, port = np.asarray(col("t"), np.float64), np.asarray(col("guid"), np.uint64), np.asarray(col("port"))
    up, exact = np.asarray(col("up"), np.int8), np.asarray(col("exact"), bool)
    if not t.size:
        return 0
    keep = t > tracker.last_seen(guid, port)
    order = np.flatnonzero(keep)
    order = order[np.argsort(t[order], kind="stable")]
    g, p = guid[order], port[order].astype(np.int64)
    # the k-th change of a port goes in round k: each round names a port once, rounds in time order per port
    key_order = np.lexsort((np.arange(order.size), p, g))
    sg, sp = g[key_order], p[key_order]
    first = np.r_[True, (sg[1:] != sg[:-1]) | (sp[1:] != sp[:-1])]
    starts = np.flatnonzero(first)
    rank = np.empty(order.size, np.int64)
    rank[key_order] = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
    seen = 0
    for k in range(int(rank.max(initial=-1)) + 1):  # rounds: as many as the most changes of one port, not ports
        rows = order[rank == k]
        g, p = guid[rows], port[rows]
        tag = (lambda i, g=g, p=p: tag_of(g[i], p[i])) if tag_of is not None else None
        tracker.observe(t[rows], g, p, up[rows], exact=exact[rows], tag=tag)
        seen += rows.size
    return seen
