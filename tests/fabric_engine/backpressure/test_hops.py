"""fabric_engine.backpressure.hops: paths become hops (input buffer, output port, lane); unordered rows get ordered."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from fabric_engine.backpressure import Hops, order_paths
from fabric_engine.errors import SolverError


def test_hops_name_buffers_by_previous_link_and_lane():
    # links: 0 a->s, 1 b->s, 2 s->c ; rows: a->c on VL 0, b->c on VL 1, a->c again on VL 0 sharing row 0's queue
    h = Hops.from_paths(np.array([0, 2, 4, 6]), np.array([0, 2, 1, 2, 0, 2]), 3, vl=np.array([0, 1, 0]),
                        queue=np.array([0, 1, 0]))
    assert h.n_vls == 2
    assert h.prev.tolist() == [-1, 0, -1, 2, -1, 4]
    assert h.last.tolist() == [1, 3, 5]
    # rows 0 and 2 share their send queue, and their buffer at the switch (link 0, VL 0)
    assert h.pair[0] == h.pair[4] and h.pair[1] == h.pair[5]
    assert h.pair[1] != h.pair[3]
    lanes = {(int(a), int(b)) for a, b in zip(h.lane_link, h.lane_vl, strict=True)}
    assert lanes == {(0, 0), (1, 1), (2, 0), (2, 1)}
    buffers = h.input_lane[h.input_lane >= 0]
    assert sorted((int(h.lane_link[i]), int(h.lane_vl[i])) for i in buffers) == [(0, 0), (1, 1)]


def test_bad_paths_are_refused():
    with pytest.raises(SolverError, match="link index"):
        Hops.from_paths(np.array([0, 1]), np.array([5]), 3)
    with pytest.raises(SolverError, match="every row a link"):
        Hops.from_paths(np.array([0, 0, 1]), np.array([0]), 3)


def test_order_paths_recovers_hop_order_from_any_column_order():
    # a line of nodes 0-1-2-3-4 with links both ways: link 2i = i->i+1, 2i+1 = i+1->i
    src = np.array([0, 1, 1, 2, 2, 3, 3, 4])
    dst = np.array([1, 0, 2, 1, 3, 2, 4, 3])
    paths = [[0, 2, 4, 6], [7, 5, 3], [4]]  # 0->4, 4->1, 2->3
    rows = np.repeat(np.arange(3), [len(p) for p in paths])
    a = sp.csr_matrix((np.ones(len(rows)), (rows, np.concatenate(paths))), shape=(3, 8))  # columns sorted
    indptr, links = order_paths(a, src, dst, np.array([0, 4, 2]))
    assert [links[indptr[r]:indptr[r + 1]].tolist() for r in range(3)] == paths


def test_order_paths_names_a_row_that_is_not_a_path():
    src = np.array([0, 1, 5])
    dst = np.array([1, 2, 6])
    a = sp.csr_matrix((np.ones(3), ([0, 0, 1], [0, 2, 1])), shape=(2, 3))
    with pytest.raises(SolverError, match="row 0"):
        order_paths(a, src, dst, np.array([0, 1]))
    with pytest.raises(SolverError, match="row 0 has no link leaving its source"):
        order_paths(sp.csr_matrix(([1.0], ([0], [1])), shape=(1, 3)), src, dst, np.array([0]))


def test_order_paths_finds_each_rows_source_itself():
    src = np.array([0, 1, 1, 2, 2, 3, 3, 4])
    dst = np.array([1, 0, 2, 1, 3, 2, 4, 3])
    paths = [[0, 2, 4, 6], [7, 5, 3]]
    rows = np.repeat(np.arange(2), [4, 3])
    a = sp.csr_matrix((np.ones(7), (rows, np.concatenate(paths))), shape=(2, 8))
    indptr, links = order_paths(a, src, dst)
    assert [links[indptr[r]:indptr[r + 1]].tolist() for r in range(2)] == paths
    loop = sp.csr_matrix((np.ones(2), ([0, 0], [2, 3])), shape=(1, 8))  # 1->2 and 2->1: no start
    with pytest.raises(SolverError, match="row 0"):
        order_paths(loop, src, dst)


def _line(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes 0..n on a line, links both ways: link 2i = i->i+1, 2i+1 = i+1->i."""
    src = np.ravel(np.column_stack([np.arange(n), np.arange(1, n + 1)]))
    dst = np.ravel(np.column_stack([np.arange(1, n + 1), np.arange(n)]))
    return src, dst


@pytest.mark.parametrize("length", [3, 16, 17, 40])  # ordered all-to-all up to 16 links, by one sort above
def test_order_paths_orders_short_and_long_rows_alike(length: int):
    src, dst = _line(50)
    rng = np.random.default_rng(length)
    paths = [list(range(0, 2 * length, 2)), list(range(2 * length - 1, 0, -2))[:length - 1], [8]]
    rows = np.repeat(np.arange(3), [len(p) for p in paths])
    cols = np.concatenate([rng.permutation(p) for p in paths])  # any order within a row
    a = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(3, len(src)))
    indptr, links = order_paths(a, src, dst)
    assert [links[indptr[r]:indptr[r + 1]].tolist() for r in range(3)] == paths
    # a row that comes back to a node it left is refused, naming it
    back = sp.csr_matrix((np.ones(length + 1), (np.zeros(length + 1, int), list(range(0, 2 * length, 2)) + [1])),
                         shape=(1, len(src)))
    with pytest.raises(SolverError, match="row 0"):
        order_paths(back, src, dst)
