""":class:`Hops`: every flow's path as a list of hops, each an (input buffer, output port, lane) of one switch.

A flow's path is its directed links in order. At the switch between link ``e`` and the next link ``o``
the flow waits in the input buffer of ``e`` on its virtual lane (IB keeps one buffer per input port and
VL) and asks output port ``o``. Its first hop leaves the source's send queue instead (one per flow; rows
that spread one flow over several paths share it). The arrays are built once per flow set.

Indices: ``inputs`` number the input buffers ``(link, vl)`` and the send queues together; ``pairs``
the (input, output) pairs a switch's arbiter sees; ``lanes`` the (output link, VL) pairs that the VL
arbiter of a port sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError

__all__ = ["Hops", "order_paths", "concat_ranges"]

_BLOCK = 16  # rows up to this many links are ordered by comparing their links all to all


@dataclass(frozen=True)
class Hops:
    """The hop table of ``rows`` paths over ``n_links`` links with ``n_vls`` lanes.

    Per hop ``[H]``: ``row``, ``out`` (link), ``prev`` (the row's previous hop, -1 at the first), ``pair``.
    Per pair ``[P]``: ``pair_input``, ``pair_lane``. Per lane ``[L]``: ``lane_link``, ``lane_vl``.
    Per input ``[I]``: ``input_lane`` (the lane feeding the buffer: the upstream port's (link, VL);
    -1 for a send queue). ``last``: each row's last hop ``[R]``.
    """

    rows: int
    n_links: int
    n_vls: int
    row: np.ndarray
    out: np.ndarray
    prev: np.ndarray
    pair: np.ndarray
    last: np.ndarray
    pair_input: np.ndarray
    pair_lane: np.ndarray
    lane_link: np.ndarray
    lane_vl: np.ndarray
    input_lane: np.ndarray

    @property
    def n_pairs(self) -> int:
        return len(self.pair_input)

    @property
    def n_lanes(self) -> int:
        return len(self.lane_link)

    @property
    def n_inputs(self) -> int:
        return len(self.input_lane)

    @cached_property
    def first(self) -> np.ndarray:
        """Each row's first hop ``[R]``."""
        return np.r_[0, self.last[:-1] + 1] if self.rows else np.zeros(0, np.int64)

    @cached_property
    def first_link(self) -> np.ndarray:
        """Each row's first link ``[R]`` (its source's)."""
        return self.out[self.first]

    @cached_property
    def last_link(self) -> np.ndarray:
        """Each row's last link ``[R]`` (its destination's)."""
        return self.out[self.last]

    @cached_property
    def lane_input(self) -> np.ndarray:
        """The input buffer each lane feeds ``[L]`` (the downstream port's buffer of that link and VL; -1 for a lane
        of a row's last link, which feeds none)."""
        out = np.full(self.n_lanes, -1, np.int64)
        buffers = np.flatnonzero(self.input_lane >= 0)
        out[self.input_lane[buffers]] = buffers
        return out

    @cached_property
    def longest(self) -> int:
        """The most hops of a row."""
        return int(np.diff(self.last, prepend=-1).max(initial=1))

    @cached_property
    def incidence(self) -> sp.csr_matrix:
        """Rows x links, 1 where a row crosses a link (for max-min on the same rows)."""
        return sp.csr_matrix((np.ones(len(self.row)), (self.row, self.out)), shape=(self.rows, self.n_links))

    @cached_property
    def lane_siblings(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lane, sibling)`` for every lane and every lane of its link (itself too), by lane then by sibling
        ascending: the members of each lane's VL arbiter, for what a lane gets if it asks for all."""
        t = self.tables
        link_ptr = t["link_ptr"]
        count = np.diff(link_ptr)[self.lane_link]
        group = np.repeat(np.arange(self.n_lanes, dtype=np.int64), count)
        at = concat_ranges(link_ptr[self.lane_link], count)
        return group, t["link_lanes"][at]

    @cached_property
    def tables(self) -> dict[str, np.ndarray | bool]:
        """Index tables the iteration walks (int64): ``prev``, ``hop_input`` per hop; ``lane_pairs``/``lane_ptr``
        (the pairs of each lane, ascending), ``input_ptr`` (pairs are sorted by input), ``link_lanes``/``link_ptr``
        (the lanes of each link), ``widest`` (the most members of an arbiter). Built once per hop table."""
        lane_pairs = np.argsort(self.pair_lane, kind="stable").astype(np.int64)
        link_lanes = np.argsort(self.lane_link, kind="stable").astype(np.int64)
        def ptr(group: np.ndarray, n: int) -> np.ndarray:
            return np.r_[0, np.cumsum(np.bincount(group, minlength=n))].astype(np.int64)

        lane_ptr, link_ptr = ptr(self.pair_lane, self.n_lanes), ptr(self.lane_link, self.n_links)
        return {"prev": np.ascontiguousarray(self.prev, dtype=np.int64), "hop_input": self.pair_input[self.pair],
                "lane_pairs": lane_pairs, "lane_ptr": lane_ptr, "input_ptr": ptr(self.pair_input, self.n_inputs),
                "link_lanes": link_lanes, "link_ptr": link_ptr,
                "widest": np.int64(max(1, np.diff(lane_ptr).max(initial=0), np.diff(link_ptr).max(initial=0)))}

    @staticmethod
    def from_paths(indptr: np.ndarray, links: np.ndarray, n_links: int, vl: np.ndarray | None = None,
                   queue: np.ndarray | None = None, n_vls: int | None = None) -> Hops:
        """Hops of paths given in order: row ``r`` crosses ``links[indptr[r]:indptr[r+1]]``, first to last.

        ``vl``: each row's virtual lane (default 0); ``queue``: each row's send queue (default: its own).
        """
        indptr = np.asarray(indptr, dtype=np.int64)
        links = np.asarray(links, dtype=np.int64)
        rows = len(indptr) - 1
        if rows < 0 or indptr[0] != 0 or indptr[-1] != len(links) or (np.diff(indptr) < 1).any():
            raise SolverError("paths: indptr must start at 0, end at len(links) and give every row a link")
        if len(links) and (links.min() < 0 or links.max() >= n_links):
            raise SolverError(f"paths: a link index outside 0..{n_links - 1}")
        vl = np.zeros(rows, np.int64) if vl is None else np.asarray(vl, dtype=np.int64)
        own_queues = queue is None
        queue = np.arange(rows, dtype=np.int64) if own_queues else np.asarray(queue, dtype=np.int64)
        if vl.shape != (rows,) or queue.shape != (rows,):
            raise SolverError(f"paths: vl and queue need one entry per row ({rows})")
        if rows and (vl.min() < 0 or queue.min() < 0):
            raise SolverError("paths: negative vl or queue")
        n_vls = int(vl.max(initial=-1)) + 1 if n_vls is None else int(n_vls)
        n_vls = max(n_vls, 1)
        if rows and vl.max() >= n_vls:
            raise SolverError(f"paths: a vl of {int(vl.max())} with {n_vls} lanes")
        length = np.diff(indptr)
        row = np.repeat(np.arange(rows, dtype=np.int64), length)
        first = np.zeros(len(links), bool)
        first[indptr[:-1]] = True
        prev = np.where(first, -1, np.arange(len(links)) - 1)
        hop_vl = vl[row]
        # Input: the buffer of the previous link on the row's lane, or the row's send queue.
        buffer_key = np.where(first, n_links * n_vls + queue[row], links[np.maximum(prev, 0)] * n_vls + hop_vl)
        input_keys, hop_input = _dense_unique(buffer_key, n_links * n_vls + int(queue.max(initial=-1)) + 1)
        lane_keys, hop_lane = _dense_unique(links * n_vls + hop_vl, n_links * n_vls)
        pair_key = hop_input * len(lane_keys) + hop_lane
        if own_queues:  # a row's own queue has one pair, numbered after every buffer's: sort the others only
            keys, inverse = np.unique(pair_key[~first], return_inverse=True)
            pair_keys = np.r_[keys, pair_key[first]]
            pair = np.empty(len(links), np.int64)
            pair[~first] = inverse
            pair[first] = len(keys) + np.arange(rows)
        else:
            pair_keys, pair = np.unique(pair_key, return_inverse=True)
        pair_input = pair_keys // len(lane_keys)
        pair_lane = pair_keys % len(lane_keys)
        is_buffer = input_keys < n_links * n_vls
        # Every buffer (link e, vl v) is fed by the hops leaving on lane (e, v): that lane exists.
        input_lane = np.full(len(input_keys), -1, np.int64)
        input_lane[is_buffer] = np.searchsorted(lane_keys, input_keys[is_buffer])
        return Hops(rows=rows, n_links=int(n_links), n_vls=n_vls, row=row, out=links, prev=prev,
                    pair=pair.astype(np.int64), last=indptr[1:] - 1, pair_input=pair_input.astype(np.int64),
                    pair_lane=pair_lane.astype(np.int64), lane_link=lane_keys // n_vls,
                    lane_vl=lane_keys % n_vls, input_lane=input_lane)


def concat_ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The indices ``start[i], ..., start[i] + count[i] - 1`` of every range ``i``, one range after the other."""
    return np.repeat(start - np.cumsum(count) + count, count) + np.arange(int(count.sum()))


def _dense_unique(key: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for keys in ``0..size-1``, by a presence table (no sort)."""
    seen = np.zeros(max(size, 1), bool)
    seen[key] = True
    keys = np.flatnonzero(seen)
    rank = np.cumsum(seen) - 1
    return keys.astype(np.int64), rank[key].astype(np.int64)


def order_paths(incidence: sp.spmatrix | sp.sparray, link_src: np.ndarray, link_dst: np.ndarray,
                row_src: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Put each row's links in path order: ``(indptr, links)`` for :meth:`Hops.from_paths`.

    ``incidence``: rows x links, any order within a row, entries of 1 (one path per row; a flow over
    several paths is several rows). ``link_src``/``link_dst``: each directed link's end nodes;
    ``row_src``: each row's source node (default: the start of the one link no other link of the row
    ends at). A row whose links do not form one simple path from its source raises :class:`SolverError`
    naming the row.

    Vectorized: each entry's successor comes from comparing a row's links all to all (rows of one length
    at a time; rows longer than 16 links by one sort by (row, start node)); pointer jumping (log2 of the
    longest path steps over all entries at once) gives each its distance to the path's end, hence its place.
    """
    a = sp.csr_matrix(incidence)
    rows = a.shape[0]
    link_src = np.asarray(link_src, dtype=np.int64)
    link_dst = np.asarray(link_dst, dtype=np.int64)
    if a.nnz and (a.data != 1).any():
        raise SolverError("order_paths: fractional entries (split flows) need one row per path")
    indptr = a.indptr.astype(np.int64)
    length = np.diff(indptr)
    row = np.repeat(np.arange(rows, dtype=np.int64), length)
    cols = a.indices.astype(np.int64)
    n = len(cols)
    n_nodes = int(max(link_src.max(initial=0), link_dst.max(initial=0))) + 1
    if row_src is not None:
        row_src = np.asarray(row_src, dtype=np.int64)
        n_nodes = max(n_nodes, int(row_src.max(initial=0)) + 1)
    # Each entry's successor: the entry of the same row whose link starts where this one ends.
    succ = np.full(n, -1, np.int64)
    short = length <= _BLOCK
    for ell in np.flatnonzero(np.bincount(length[short & (length > 1)])):  # a few (a fat tree's: 2, 4, 6)
        ent = indptr[:-1][length == ell][:, None] + np.arange(ell)  # (rows of that length, ell) entries
        s_node, d_node = link_src[cols[ent]], link_dst[cols[ent]]
        twice = (s_node[:, :, None] == s_node[:, None, :]).sum(axis=2) > 1
        if twice.any():
            raise SolverError(f"order_paths: row {int(row[ent[twice.any(axis=1)][0, 0]])} leaves a node twice "
                              "(not one simple path)")
        meets = d_node[:, :, None] == s_node[:, None, :]
        succ[ent] = np.where(meets.any(axis=2), np.take_along_axis(ent, meets.argmax(axis=2), axis=1), -1)
    if not short.all():  # long rows: one sort of their entries by (row, start node)
        long_ent = np.flatnonzero(~short[row])
        key = row[long_ent] * n_nodes + link_src[cols[long_ent]]
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        twice = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
        if len(twice):
            raise SolverError(f"order_paths: row {int(row[long_ent[order[twice[0] + 1]]])} leaves a node twice "
                              "(not one simple path)")
        nxt_key = row[long_ent] * n_nodes + link_dst[cols[long_ent]]
        npos = np.minimum(np.searchsorted(sorted_key, nxt_key), len(key) - 1)
        succ[long_ent] = np.where(sorted_key[npos] == nxt_key, long_ent[order[npos]], -1)
    has_pred = np.zeros(n, bool)
    has_pred[succ[succ >= 0]] = True
    starts = np.flatnonzero(~has_pred)
    n_starts = np.bincount(row[starts], minlength=rows)
    bad = np.flatnonzero((n_starts != 1) & (length > 0))
    if len(bad):
        raise SolverError(f"order_paths: row {int(bad[0])}'s links do not form one path (no single start)")
    if row_src is not None:
        off = np.flatnonzero(link_src[cols[starts]] != row_src[row[starts]])
        if len(off):
            raise SolverError(f"order_paths: row {int(row[starts[off[0]]])} has no link leaving its source")
    # Distance of each entry to its path's end by pointer jumping.
    dist = (succ >= 0).astype(np.int64)
    jump = succ.copy()
    for _ in range(int(np.ceil(np.log2(max(int(length.max(initial=1)), 2)))) + 1):
        on = jump >= 0
        if not on.any():
            break
        dist[on] += dist[jump[on]]
        jump[on] = jump[jump[on]]
    start_dist = np.zeros(rows, np.int64)
    start_dist[row[starts]] = dist[starts]
    bad = np.flatnonzero((start_dist != length - 1) & (length > 0))
    if len(bad) or (jump >= 0).any():
        r = int(bad[0]) if len(bad) else int(row[np.flatnonzero(jump >= 0)[0]])
        raise SolverError(f"order_paths: row {r}'s links do not form one path from its source")
    out = np.empty(n, np.int64)
    out[indptr[row] + length[row] - 1 - dist] = cols
    return indptr, out
