"""OpenSM's min-hop routing: shortest paths, destinations spread over equal ports.

OpenSM (``osm_ucast_mgr.c``, ``osm_switch_recommend_path`` in ``osm_switch.c``) routes every
LID on every switch through a port with the least hop count to the LID; among those ports it
takes the one with the fewest LIDs routed so far on this switch (the lowest port on ties).
LIDs of switches are routed the same way but are not counted
(``port_profile_switch_nodes`` is off by default). Every switch visits the LIDs in the same
order, ``port_order_list`` (:mod:`.order`): the adapters of the switch with the most adapters
first, switch by switch in GUID order, each switch's adapters in port order; switch LIDs last.

Done LID by LID that is a loop over ``switches x LIDs``. Here it is closed form:
the ports that are one hop closer to a target switch form the *candidate set* of
``(switch, target)``. When the candidate sets a switch sees are pairwise equal or
disjoint (always so in a fat tree) the greedy least-loaded choice is a round robin
over each set, so the ``k``-th counted LID routed through a set takes its
``k mod size``-th port. Switches whose sets overlap (degraded or irregular
fabrics) take the greedy loop, vectorised over those switches only. Targets are
numbered in OpenSM's visiting order throughout, so the result depends on GUIDs, port
numbers and LIDs only, never on the order of records in the file the fabric came from.
"""

from __future__ import annotations

import numpy as np

from ..topology import Fabric
from .graph import lid_targets, switch_distances, switch_port_peers
from .order import OpenSMOrder
from .tables import NO_PATH, Routing

__all__ = ["minhop", "switch_distances", "lid_targets", "switch_port_peers", "minhop_tables"]

#: Cells (switch x port x target) handled at once when building candidate sets.
_CHUNK_CELLS = 1 << 24

try:
    from . import _lidgreedy
except ImportError:  # not built: the numpy choice, same tables, slower
    _lidgreedy = None


def _candidate_keys(dist: np.ndarray, peer: np.ndarray, cand_fn=None, cols: np.ndarray | None = None) -> np.ndarray:
    """Candidate sets as bit words, uint64 ``[S, T, W]``: bit ``p`` set if port ``p + 1`` is one hop closer.

    ``dist`` columns are targets in visiting order (``cols`` maps them to switch indices).
    ``cand_fn(switches)``, when given, returns the candidate mask ``[S, P, len(switches)]`` towards
    those target switches instead (engines with turn restrictions, such as up/down, define
    "closer" their own way).
    """
    s_count, pmax = peer.shape
    words = max(1, -(-pmax // 64))
    keys = np.zeros((s_count, s_count, words), dtype=np.uint64)
    valid = peer >= 0
    pc = np.maximum(peer, 0)
    small = dist.astype(np.int8) if dist.max(initial=0) < 127 else dist
    step = max(1, _CHUNK_CELLS // max(1, s_count * pmax))
    for t0 in range(0, s_count, step):
        d_here = np.ascontiguousarray(small[:, t0:t0 + step])  # [S, c]
        want = d_here - 1
        ok = d_here > 0
        block = None if cand_fn is None else cand_fn(cols[t0:t0 + d_here.shape[1]])
        for w in range(words):
            ports = range(64 * w, min(pmax, 64 * (w + 1)))
            # the narrowest integer that holds this word's bits: less memory traffic per port
            dt = next(d for d in (np.uint8, np.uint16, np.uint32, np.uint64) if np.iinfo(d).bits >= len(ports))
            acc = np.zeros((s_count, d_here.shape[1]), dtype=dt)
            for p in ports:  # one bit per port: cheaper than building and packing [S, P, c]
                c = ((d_here[pc[:, p]] == want) & ok & valid[:, p:p + 1]) if block is None else block[:, p, :]
                acc |= c.astype(dt) << dt(p % 64)
            keys[:, t0:t0 + step, w] = acc
    return keys


def _lowest_bit(keys: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit over the words of ``keys[..., W]`` (-1 when empty), int32."""
    out = np.full(keys.shape[:-1], -1, dtype=np.int32)
    for w in range(keys.shape[-1] - 1, -1, -1):
        k = keys[..., w]
        nz = k != 0
        low = np.bitwise_count((k & (~k + np.uint64(1))) - np.uint64(1)).astype(np.int32)
        out = np.where(nz, low + 64 * w, out)
    return out


def minhop_tables(fabric: Fabric, dist: np.ndarray | None = None, cand_fn=None) -> tuple[np.ndarray, dict]:
    """The min-hop LFT of ``fabric`` and facts about how it was computed (see module doc).

    ``dist`` (switch hop counts, -1 unreachable) and ``cand_fn`` (see ``_candidate_keys``)
    let other engines reuse the least-loaded port selection on their own path metric.
    """
    f = fabric
    dist = switch_distances(f) if dist is None else dist
    peer = switch_port_peers(f)
    s_count, pmax = peer.shape
    lft = np.full((s_count, f.max_lid + 1), NO_PATH, dtype=np.uint8)
    osm = OpenSMOrder(f, lid_targets(f))
    tg = osm.targets  # target = the delivering switch's rank in OpenSM's visiting order
    if s_count == 0 or len(tg.lids) == 0:
        return lft, {"greedy_switches": 0}
    dist = np.ascontiguousarray(dist[:, osm.target_order])  # columns: targets in visiting order
    keys = _candidate_keys(dist, peer, cand_fn, osm.target_order)  # [S, T, W]
    low = _lowest_bit(keys)  # [S, T]
    rows = np.arange(s_count)[:, None]
    counted = tg.is_host.astype(np.int64)
    ncount = np.bincount(tg.target, weights=counted, minlength=s_count).astype(np.int64)
    # Only targets with counted (host) LIDs move the port loads. The set registered under its
    # lowest port must be the same for every such target, and the registered sets of one switch
    # must not share ports: then the sets are disjoint and the greedy choice is a round robin.
    low_c = np.where(ncount[None, :] > 0, low, -1)
    reg = np.zeros((s_count, pmax + 1, keys.shape[2]), dtype=np.uint64)
    lc = np.where(low_c >= 0, low_c, pmax)
    reg[np.broadcast_to(rows, low.shape), lc] = keys
    reg[:, pmax] = 0
    lsafe = np.maximum(low, 0)
    same = (reg[rows, lsafe] == keys).all(axis=2)  # the set equals the one registered under its lowest port
    consistent = (same | (low_c < 0)).all(axis=1)
    pop_sum = np.bitwise_count(reg).sum(axis=(1, 2), dtype=np.int64)
    pop_or = np.bitwise_count(np.bitwise_or.reduce(reg, axis=1)).sum(axis=1, dtype=np.int64)
    laminar = consistent & (pop_sum == pop_or)

    # Ports of every class (switch, lowest port), in ascending order; class and position of every port.
    bits = np.unpackbits(reg[:, :pmax].view(np.uint8), axis=2, bitorder="little")[:, :, :pmax].astype(bool)
    bits = bits.reshape(s_count * pmax, pmax)
    size = bits.sum(axis=1).astype(np.int64)
    r_idx, c_idx = np.nonzero(bits)
    table = np.zeros((s_count * pmax, max(1, pmax)), dtype=np.uint8)
    starts = np.r_[0, np.cumsum(size)[:-1]]
    pos_in = np.arange(len(r_idx)) - starts[r_idx]
    table[r_idx, pos_in] = c_idx + 1
    port_cls = np.full((s_count, pmax), -1, dtype=np.int64)
    port_pos = np.zeros((s_count, pmax), dtype=np.int64)
    port_cls[r_idx // pmax, c_idx] = r_idx % pmax
    port_pos[r_idx // pmax, c_idx] = pos_in

    # Each LID's position among its target's counted LIDs.
    first = np.searchsorted(tg.target, tg.target)
    cum = np.cumsum(counted) - counted
    within = (cum - cum[first]).astype(np.int64)

    # A target without counted LIDs (a switch without hosts) reads the loads without moving them:
    # when its candidate set is a whole class, the least-loaded port is that class's next one.
    pop = np.bitwise_count(keys).sum(axis=2, dtype=np.int32)  # [S, T]
    whole = (low >= 0) & same
    low_all = np.where((low_c >= 0) | (whole & (ncount[None, :] == 0)), low, -1)

    # offset[s, t]: counted LIDs of earlier targets in the same class of switch s.
    cls = np.where(low_all >= 0, rows * pmax + low_all, -1).astype(np.int32).ravel()
    # small class ids sort as int16 (numpy's stable sort is a radix sort for 16-bit keys)
    order = np.argsort(cls.astype(np.int16) if s_count * pmax < 32767 else cls, kind="stable")
    w = ncount[order % s_count]
    cs = np.cumsum(w) - w
    sc = cls[order]
    gstart = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
    glen = np.diff(np.r_[gstart, len(sc)])
    offset = np.empty(len(cls), dtype=np.int64)
    offset[order] = cs - np.repeat(cs[gstart], glen)
    offset = offset.reshape(s_count, s_count)
    # Targets without counted LIDs are visited after all others: they see the final loads.
    has = cls >= 0
    total = np.bincount(cls[has], weights=np.broadcast_to(ncount, (s_count, s_count)).ravel()[has],
                        minlength=s_count * pmax + 1).astype(np.int64)
    late = ncount == 0
    offset[:, late] = total[cls.reshape(s_count, s_count)[:, late]]

    # Per (switch, target): where the round robin over its class's ports starts.
    cls2 = cls.reshape(s_count, s_count)
    has_cls = cls2 >= 0
    csafe = np.maximum(cls2, 0)
    # ext[c, k] = the k-th port of class c taken round robin, k < width + most LIDs of a target,
    # so a LID's port is ext[c, offset % size + its position] without a modulo per LID.
    span = int(np.bincount(tg.target, minlength=s_count).max(initial=1))
    width = table.shape[1] + span
    used = np.flatnonzero(size > 1)  # classes of several ports (a few per switch)
    compact = np.zeros(len(size), dtype=np.int64)
    compact[used] = np.arange(len(used))
    k = np.arange(width, dtype=np.int32)[None, :]
    ext = np.zeros((1, width), dtype=np.uint8)
    if len(used):
        rows_u = (used.astype(np.int32) * table.shape[1])[:, None]
        ext = table.ravel()[rows_u + k % size[used].astype(np.int32)[:, None]]
    # A fixed answer overrides the class: the port of a one-port set, or NO_PATH. Fixed answers read
    # rows of ext that hold one value throughout, so every cell is one gather.
    fixed = np.zeros((s_count, s_count), dtype=np.uint8)
    single = pop == 1
    fixed[single] = (low[single] + 1).astype(np.uint8)
    fixed[(dist < 0) | (~has_cls & ~single & (dist != 0))] = NO_PATH
    const_row = len(ext)
    ext = np.concatenate([ext, np.repeat(np.arange(256, dtype=np.uint8)[:, None], width, axis=1)]).ravel()
    size32 = np.maximum(size, 1).astype(np.int32)
    start = np.where(fixed != 0, (const_row + fixed.astype(np.int32)) * width,
                     compact[csafe].astype(np.int32) * width + offset.astype(np.int32) % size32[csafe])
    del offset, csafe, fixed
    per_target = np.bincount(tg.target, minlength=s_count)  # LIDs are grouped by target: repeat columns
    within32 = within.astype(np.int32)[None, :]
    # [S, LIDs] cells (90 million at 32,768 GPUs) in blocks of switches: the index arrays stay small.
    step = max(1, _CHUNK_CELLS // max(1, len(tg.lids)))
    for r0 in range(0, s_count, step):
        cell = np.repeat(start[r0:r0 + step], per_target, axis=1)
        cell += within32
        lft[r0:r0 + step, tg.lids] = ext[cell]
    lft[osm.switch, tg.lids] = tg.exit_port.astype(np.uint8)  # the delivering switch itself

    # Switch LIDs with several candidate ports: OpenSM visits them after every adapter, so they see
    # the final loads (from the class histories); the LID-by-LID switches below do the same.
    rs, ts = np.nonzero((pop > 1) & laminar[:, None])
    if rs.size:
        switch_lid = f.lid[f.switches[osm.target_order]].astype(np.int64)
        _route_uncounted(lft, rs, ts, keys, switch_lid, total, port_cls, port_pos, size, pmax)

    greedy = np.flatnonzero(~laminar)
    if greedy.size:
        _greedy(lft, greedy, keys, dist, tg, pmax)
    return lft, {"greedy_switches": int(greedy.size)}


def _route_uncounted(lft, rs, ts, keys, switch_lid, total, port_cls, port_pos, size, pmax) -> None:
    """Route the LID of target switch ``ts[i]`` on switch ``rs[i]`` through its least-loaded candidate port.

    Switch LIDs are visited after every adapter, so they see the final port loads (lowest port on ties).
    """
    s_count = keys.shape[0]
    # Final load of every port: its class took ``R`` LIDs, its ``k``-th port R // size + (k < R % size).
    gcls = np.arange(s_count)[:, None] * pmax + np.maximum(port_cls, 0)
    r = total[gcls]
    cz = np.maximum(size[gcls], 1)
    load = np.where(port_cls >= 0, r // cz + (port_pos < r % cz), 0).astype(np.int32)  # [S, P]
    # The choice depends on (switch, candidate set) only: decide once per distinct pair.
    kk = keys[rs, ts]  # [n, W]
    u_rs, u_keys, inv = _distinct_sets(rs, kk)
    cand = np.unpackbits(np.ascontiguousarray(u_keys).view(np.uint8), axis=1, bitorder="little")
    cand = cand[:, :pmax].astype(bool)  # [u, P]
    # least-loaded candidate, lowest port on ties: minimum of load * 256 + port, reduced over ports
    score = np.where(cand, load[u_rs] * 256 + np.arange(pmax, dtype=np.int32)[None, :], np.iinfo(np.int32).max)
    choice = (score.min(axis=1) % 256)[inv]
    lft[rs, switch_lid[ts]] = (choice + 1).astype(np.uint8)


def _distinct_sets(rs: np.ndarray, kk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``(switch, candidate set)`` pairs of ``rs`` and ``kk[n, W]``: their switches, sets and the inverse.

    A fat tree has millions of (switch, switch LID) pairs but a few distinct sets per switch; deciding
    once per distinct pair keeps the ``[pairs, ports]`` work arrays small (issue 15: 3.8 GB at 32,768 GPUs).
    """
    if kk.shape[1] == 1:
        _, first, set_id = np.unique(kk[:, 0], return_index=True, return_inverse=True)
    else:
        rows = np.ascontiguousarray(kk).view(np.dtype((np.void, 8 * kk.shape[1]))).ravel()
        _, first, set_id = np.unique(rows, return_index=True, return_inverse=True)
    uniq, inv = np.unique(rs.astype(np.int64) * len(first) + set_id.ravel(), return_inverse=True)
    return uniq // len(first), kk[first[uniq % len(first)]], inv.ravel()


def _greedy(lft, rows, keys, dist, tg, pmax) -> None:
    """OpenSM's LID-by-LID least-loaded choice for the switches ``rows``: compiled (``_lidgreedy.c``: a LID
    costs its candidate ports), else :func:`_greedy_numpy`. LIDs are visited adapters first, then switches."""
    if _lidgreedy is None:
        _greedy_numpy(lft, rows, keys, dist, tg, pmax)
        return
    visit = np.argsort(~tg.is_host, kind="stable")
    _lidgreedy.greedy(np.ascontiguousarray(keys, dtype=np.uint64), np.ascontiguousarray(rows, dtype=np.int64),
                      np.ascontiguousarray(tg.target[visit], dtype=np.int64),
                      np.ascontiguousarray(tg.lids[visit], dtype=np.int64),
                      np.ascontiguousarray(tg.is_host[visit], dtype=np.uint8), lft)


def _greedy_numpy(lft, rows, keys, dist, tg, pmax) -> None:
    """OpenSM's LID-by-LID least-loaded choice for the switches ``rows`` (vectorised over them).

    LIDs are visited in ``port_order_list`` order (``tg`` is in that order, adapters before switches).
    The candidate ports of a target are the same for all its LIDs: they are unpacked once per run of
    adapter LIDs of one target, and each LID costs one add and one ``argmin`` over ``[rows, ports]``.
    Switch LIDs move no load: they all see the final loads and are decided together, in blocks.
    """
    load = np.zeros((len(rows), pmax), dtype=np.int32)  # a port carries fewer than 49,151 LIDs
    big = np.int32(1 << 30)  # above any load: a port that is no candidate is never the minimum
    ar = np.arange(len(rows))
    host = np.flatnonzero(tg.is_host)
    target = tg.target[host]
    runs = np.flatnonzero(np.r_[True, target[1:] != target[:-1], True])
    for a, b in zip(runs[:-1].tolist(), runs[1:].tolist(), strict=True):
        c = _unpack(keys[rows, int(target[a])], pmax)
        ok = c.any(axis=1)
        if not ok.any():
            continue
        pen = np.where(c[ok], np.int32(0), big)
        sel, sel_rows = ar[ok], rows[ok]
        sub = load[sel]
        for k in host[a:b].tolist():
            choice = (sub + pen).argmin(axis=1)
            lft[sel_rows, tg.lids[k]] = (choice + 1).astype(np.uint8)
            sub[np.arange(len(sel)), choice] += 1
        load[sel] = sub
    others = np.flatnonzero(~tg.is_host)
    block = max(1, _CHUNK_CELLS // max(1, len(rows) * pmax * 8))
    for i in range(0, len(others), block):
        k = others[i:i + block]
        c = _unpack(keys[rows][:, tg.target[k]], pmax)  # [R, K, P]
        choice = np.where(c, load[:, None, :], big).argmin(axis=2)
        ok = c.any(axis=2)
        r, j = np.nonzero(ok)
        lft[rows[r], tg.lids[k][j]] = (choice[r, j] + 1).astype(np.uint8)


def _unpack(keys: np.ndarray, pmax: int) -> np.ndarray:
    """Candidate bit sets ``[..., W]`` (uint64 words) as booleans ``[..., pmax]``."""
    return np.unpackbits(np.ascontiguousarray(keys).view(np.uint8), axis=-1, bitorder="little")[..., :pmax] \
        .astype(bool)


def minhop(fabric: Fabric) -> Routing:
    """Route every LID on a shortest path, spreading LIDs over equal-cost ports (OpenSM ``minhop``).

    >>> from fabric_engine.topology.generate import fat_tree
    >>> r = minhop(fat_tree(hosts=8, radix=4))
    >>> int(r.lft[0, 9]), int(r.lft[0, 10])  # leaf01 -> the two hosts of leaf02: one per spine
    (3, 4)
    """
    lft, info = minhop_tables(fabric)
    return Routing(fabric, lft, "minhop", info)
