"""Reading a fabric's history ring (written by :mod:`ibweb.live.history.ring`, laid out as
:mod:`ibweb.live.history.layout` says): series of links and ports, recablings, whole ticks, and the topologies of
its runs.

Any web process reads a link's series with :func:`series` (by identity,
:mod:`ibweb.live.history.link_identity`, or by directed-link index in the newest topology) or a port's
with :func:`port_series`, and whole ticks with :func:`ticks`. A value the tick
had no measurement for is NaN; a link the tick's topology lacks is NaN and down (:attr:`Series.down`);
a tick that never came is not there (a gap in ``t``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ibweb.live.history import layout
from ibweb.live.history.link_identity import IDENTITY, LinkIdentities, port_key
from ibweb.live.history.ring import index, store, topology

__all__ = ["Series", "Ticks", "Recabling", "newest", "known", "tick_seconds", "series", "port_series",
           "recablings", "ticks"]


def newest(fabric_id: int) -> tuple[str | None, int] | None:
    """``(version, n)`` of the topology of the ring's newest tick (version None: recorded without one), or None."""
    runs = layout.runs(index(fabric_id))
    return (runs[-1][1], runs[-1][2]) if runs else None


def known(fabric_id: int) -> list[LinkIdentities]:
    """The cached topologies of the ring's ticks, newest first."""
    found = (topology(fabric_id, r[1]) for r in reversed(layout.runs(index(fabric_id))))
    return [ids for ids in found if ids is not None]


def tick_seconds(idx: dict | None) -> float:
    """Seconds one tick of the ring stands for: as recorded, else the median spacing of its ticks (1 s when
    fewer than two)."""
    if idx and idx.get("tick_s"):
        return float(idx["tick_s"])
    t = np.asarray(idx["t"] if idx else [], dtype=np.float64)
    gaps = np.diff(t)
    return float(np.median(gaps)) if len(gaps) else 1.0


@dataclass(frozen=True)
class Series:
    """Recent values of some directed links: ``seq`` int64 ``(T,)``, ``t`` float64 ``(T,)``, ``rate`` and
    ``util`` float32 ``(T, K)`` for the K requested links, oldest tick first; NaN where the tick has no value
    of the link: no measurement, or (``down`` bool ``(T, K)``) the tick's topology lacks it (a cable down).
    A tick recorded without a topology is never down (unknown)."""

    seq: np.ndarray
    t: np.ndarray
    rate: np.ndarray
    util: np.ndarray
    down: np.ndarray


@dataclass(frozen=True)
class Ticks:
    """The ticks of one run (one topology): ``identities`` (None: recorded without a topology, or no longer
    cached) and their :class:`Series` of every directed link, ``rate``, ``util`` ``(T, 2L)``."""

    identities: LinkIdentities | None
    series: Series


@dataclass(frozen=True)
class Recabling:
    """A transmitting port's peer changed: at ``t`` (the first tick of the new cabling) its directed link
    ``before`` became ``after`` (:data:`~ibweb.live.history.link_identity.IDENTITY` scalars, same transmitting end)."""

    t: float
    before: np.void
    after: np.void


def _select(idx: dict | None, after: float | None, since: float | None, until: float | None
            ) -> tuple[list[int], list[float]]:
    if not idx:
        return [], []
    pairs = [(s, t) for s, t in zip(idx["seq"], idx["t"], strict=True)
             if (after is None or t > after) and (since is None or t >= since) and (until is None or t < until)]
    return [s for s, _ in pairs], [t for _, t in pairs]


def _empty(k: int) -> Series:
    empty = np.zeros((0, k), dtype=np.float32)
    return Series(np.zeros(0, np.int64), np.zeros(0), empty, empty.copy(), np.zeros((0, k), dtype=bool))


def _read(fabric_id: int, idx: dict | None, after: float | None, k: int,
          resolve: Callable[[list], np.ndarray | None]) -> Series:
    """The values of ``k`` links in the ticks after ``after``; ``resolve(run)`` gives their directed-link
    indices in a run's topology, int64 ``[k]`` (-1: the topology lacks it, down), or None when the run's
    topology is unknown (a gap, not down). Costs one chunk per tick and link."""
    seqs, times = _select(idx, after, None, None)
    if not seqs:
        return _empty(k)
    runs, chunk = layout.runs(idx), idx["chunk"]
    run_of = layout.run_of(runs, seqs)
    plan: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}  # run -> [(chunk, columns, offsets)]
    lacks = np.zeros((len(runs), k), dtype=bool)
    for r in np.unique(run_of).tolist():  # loop over the window's topologies
        found = resolve(runs[r])
        pos = np.full(k, -1, dtype=np.int64) if found is None else np.asarray(found, dtype=np.int64)
        lacks[r] = found is not None and pos < 0
        plan[r] = []
        for c in np.unique(pos[pos >= 0] // chunk).tolist():
            cols = np.flatnonzero((pos >= 0) & (pos // chunk == c))
            plan[r].append((c, cols, pos[cols] % chunk))
    got = store().get_many([layout.chunk_key(fabric_id, s, c) for s, r in zip(seqs, run_of.tolist(), strict=True)
                            for c, _, _ in plan[r]])
    rate = np.full((len(seqs), k), np.nan, dtype=np.float32)
    util = np.full((len(seqs), k), np.nan, dtype=np.float32)
    present = np.ones(len(seqs), dtype=bool)
    for i, (s, r) in enumerate(zip(seqs, run_of.tolist(), strict=True)):  # loop over ticks; each step slices chunks
        for c, cols, offsets in plan[r]:
            blob = got.get(layout.chunk_key(fabric_id, s, c))
            if blob is None:
                present[i] = False
                break
            block = layout.decode(blob)
            rate[i, cols], util[i, cols] = block[0, offsets], block[1, offsets]
    return Series(np.asarray(seqs, np.int64)[present], np.asarray(times)[present], rate[present], util[present],
                  lacks[run_of][present])


def series(fabric_id: int, links: Sequence[int] | np.ndarray, after: float | None = None) -> Series:
    """The ring's values of ``links`` for the ticks after time ``after`` (all kept ticks when None).

    ``links``: identities (:data:`~ibweb.live.history.link_identity.IDENTITY` ``[K]``), followed through every
    topology of the ring, or directed-link indices of the newest tick's topology, read as their
    identities (by position within that topology's ticks when it has none). Ticks whose topology lacks
    a link are NaN for it. Raises ``IndexError`` naming an index outside ``0..2L-1``. Ticks whose data
    expired between reading the index and the chunks are left out.
    """
    idx = index(fabric_id)
    runs = layout.runs(idx)
    keys = np.asarray(links)
    if keys.dtype != IDENTITY:
        d = keys.astype(np.int64).reshape(-1)
        for bad in d[(d < 0) | (d >= idx["n"])].tolist() if idx else []:
            raise IndexError(f"link {bad} is outside 0..{idx['n'] - 1}")
        if not runs:
            return _empty(len(d))
        last = runs[-1]
        ids = topology(fabric_id, last[1])
        if ids is None:
            return _read(fabric_id, idx, after, len(d), lambda run: d if run[1:] == last[1:] else None)
        keys = ids.keys[d]

    def resolve(run: list) -> np.ndarray | None:
        ids = topology(fabric_id, run[1])
        return ids.find(keys) if ids is not None else None

    return _read(fabric_id, idx, after, len(keys), resolve)


def port_series(fabric_id: int, guid: int, port: int, after: float | None = None) -> Series:
    """The values of the directed link leaving port ``port`` of node GUID ``guid`` (column 0) and of the one
    entering it (column 1) in each tick, whatever the port is cabled to; NaN while it is not cabled."""
    key = port_key(guid, port)

    def resolve(run: list) -> np.ndarray | None:
        ids = topology(fabric_id, run[1])
        if ids is None:
            return None
        d = ids.find_ports(key)
        return np.concatenate([d, ids.reverse(d)])

    return _read(fabric_id, index(fabric_id), after, 2, resolve)


def recablings(fabric_id: int, guid: int, port: int, after: float | None = None) -> list[Recabling]:
    """Each change of the peer of port ``port`` of node GUID ``guid`` among the ticks after ``after``.

    A stretch where the port is not cabled is no change (a gap); it counts when the port comes back
    cabled to another peer.
    """
    idx = index(fabric_id)
    seqs, times = _select(idx, after, None, None)
    if not seqs:
        return []
    runs, key = layout.runs(idx), port_key(guid, port)
    run_of = layout.run_of(runs, seqs)
    starts = np.flatnonzero(np.diff(run_of, prepend=-1))  # first tick of each run in the window
    out: list[Recabling] = []
    before: np.void | None = None
    for i in starts.tolist():  # loop over the window's topologies
        ids = topology(fabric_id, runs[run_of[i]][1])
        d = int(ids.find_ports(key)[0]) if ids is not None else -1
        if d < 0:
            continue
        now = ids.keys[d]
        if before is not None and (now["rx_guid"], now["rx_port"]) != (before["rx_guid"], before["rx_port"]):
            out.append(Recabling(float(times[i]), before, now))
        before = now
    return out


def ticks(fabric_id: int, since: float, until: float) -> list[Ticks]:
    """Every directed link's values for the ticks with ``since <= t < until``, one :class:`Ticks` per topology."""
    idx = index(fabric_id)
    seqs, times = _select(idx, None, since, until)
    if not seqs:
        return []
    runs, chunk = layout.runs(idx), idx["chunk"]
    run_of = layout.run_of(runs, seqs)
    out = []
    for r in np.unique(run_of).tolist():  # loop over topologies, ticks and chunks, vectorized within a chunk
        mine = np.flatnonzero(run_of == r)
        n = runs[r][2]
        chunks = math.ceil(n / chunk)
        part = [seqs[i] for i in mine.tolist()]
        got = store().get_many([layout.chunk_key(fabric_id, s, c) for s in part for c in range(chunks)])
        rate = np.zeros((len(part), n), dtype=np.float32)
        util = np.zeros((len(part), n), dtype=np.float32)
        present = np.ones(len(part), dtype=bool)
        for i, s in enumerate(part):
            for c in range(chunks):
                blob = got.get(layout.chunk_key(fabric_id, s, c))
                if blob is None:
                    present[i] = False
                    break
                block = layout.decode(blob)
                rate[i, c * chunk:c * chunk + block.shape[1]] = block[0]
                util[i, c * chunk:c * chunk + block.shape[1]] = block[1]
        if present.any():
            s = Series(np.asarray(part, np.int64)[present], np.asarray(times)[mine][present], rate[present],
                       util[present], np.broadcast_to(False, (int(present.sum()), n)))
            out.append(Ticks(topology(fabric_id, runs[r][1]), s))
    return out
