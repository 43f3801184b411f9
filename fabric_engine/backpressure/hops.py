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

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError

__all__ = ["Hops", "order_paths"]


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
        queue = np.arange(rows, dtype=np.int64) if queue is None else np.asarray(queue, dtype=np.int64)
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
        input_keys, hop_input = np.unique(buffer_key, return_inverse=True)
        lane_key = links * n_vls + hop_vl
        lane_keys, hop_lane = np.unique(lane_key, return_inverse=True)
        pair_key = hop_input.astype(np.int64) * len(lane_keys) + hop_lane
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


def order_paths(incidence: sp.spmatrix | sp.sparray, link_src: np.ndarray, link_dst: np.ndarray,
                row_src: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Put each row's links in path order: ``(indptr, links)`` for :meth:`Hops.from_paths`.

    ``incidence``: rows x links, any order within a row, entries of 1 (one path per row; a flow over
    several paths is several rows). ``link_src``/``link_dst``: each directed link's end nodes;
    ``row_src``: each row's source node (default: the start of the one link no other link of the row
    ends at). A row whose links do not form one simple path from its source raises :class:`SolverError`
    naming the row.
    """
    a = sp.csr_matrix(incidence)
    rows = a.shape[0]
    link_src = np.asarray(link_src, dtype=np.int64)
    link_dst = np.asarray(link_dst, dtype=np.int64)
    if a.nnz and (a.data != 1).any():
        raise SolverError("order_paths: fractional entries (split flows) need one row per path")
    length = np.diff(a.indptr)
    row = np.repeat(np.arange(rows, dtype=np.int64), length)
    cols = a.indices.astype(np.int64)
    n_nodes = int(max(link_src.max(initial=0), link_dst.max(initial=0))) + 1
    if row_src is None:
        starts = ~np.isin(row * n_nodes + link_src[cols], row * n_nodes + link_dst[cols])
        bad = np.flatnonzero((np.bincount(row[starts], minlength=rows) != 1) & (length > 0))
        if len(bad):
            raise SolverError(f"order_paths: row {int(bad[0])}'s links do not form one path (no single start)")
        row_src = np.zeros(rows, np.int64)
        row_src[row[starts]] = link_src[cols[starts]]
    row_src = np.asarray(row_src, dtype=np.int64)
    n_nodes = max(n_nodes, int(row_src.max(initial=0)) + 1)
    # Each entry's successor: the entry of the same row whose link starts where this one ends.
    key = row * n_nodes + link_src[cols]
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    if len(sorted_key) > 1 and (np.diff(sorted_key) == 0).any():
        bad = int(row[order[1:][np.diff(sorted_key) == 0][0]])
        raise SolverError(f"order_paths: row {bad} leaves a node twice (not one simple path)")
    start_key = np.arange(rows, dtype=np.int64) * n_nodes + row_src
    pos = np.searchsorted(sorted_key, start_key)
    ok = (pos < len(sorted_key)) & (sorted_key[np.minimum(pos, len(sorted_key) - 1)] == start_key)
    if rows and not ok[length > 0].all():
        bad = int(np.flatnonzero(~ok & (length > 0))[0])
        raise SolverError(f"order_paths: row {bad} has no link leaving its source")
    nxt_key = row * n_nodes + link_dst[cols]
    npos = np.searchsorted(sorted_key, nxt_key)
    has = (npos < len(sorted_key)) & (sorted_key[np.minimum(npos, len(sorted_key) - 1)] == nxt_key)
    succ = np.where(has, order[np.minimum(npos, len(order) - 1)], -1)
    # Walk all rows at once, one hop per step (paths are short: a fat tree's are 2..6 links).
    out = np.empty(len(cols), np.int64)
    cur = np.where(length > 0, order[np.minimum(pos, len(order) - 1)], -1)
    offset = a.indptr[:-1].astype(np.int64).copy()
    live = np.flatnonzero(cur >= 0)
    for _ in range(int(length.max(initial=0))):
        if not len(live):
            break
        out[offset[live]] = cols[cur[live]]
        offset[live] += 1
        cur[live] = succ[cur[live]]
        live = live[cur[live] >= 0]
    if (offset != a.indptr[1:]).any():
        bad = int(np.flatnonzero(offset != a.indptr[1:])[0])
        raise SolverError(f"order_paths: row {bad}'s links do not form one path from its source")
    return a.indptr.astype(np.int64), out
