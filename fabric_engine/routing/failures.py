"""Routing after failures: reroute a fabric with cables removed and diff the paths.

:func:`reroute_without` builds ``fabric.without_links(cables)`` and routes it with the
same engine; :func:`diff_paths` compares two routings of fabrics that share their
nodes (same node indices) for a set of host pairs and says which paths changed and
which broke. Paths are compared as sets of directed links by node and port (the
cable indices of the two fabrics differ once cables are removed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import RoutingError
from .tables import Routing

__all__ = ["PathDiff", "diff_paths", "reroute_without", "all_pairs"]


@dataclass(frozen=True, eq=False)
class PathDiff:
    """Host pairs whose path changed or broke; arrays of node indices (``src``, ``dst``)."""

    src: np.ndarray
    dst: np.ndarray
    changed: np.ndarray  # bool: both routed, different links
    broke: np.ndarray  # bool: routed before, broken after
    healed: np.ndarray  # bool: broken before, routed after

    @property
    def changed_pairs(self) -> np.ndarray:
        return np.stack([self.src[self.changed], self.dst[self.changed]], axis=1)

    @property
    def broken_pairs(self) -> np.ndarray:
        return np.stack([self.src[self.broke], self.dst[self.broke]], axis=1)

    def summary(self) -> dict:
        return {"pairs": int(len(self.src)), "changed": int(self.changed.sum()), "broken": int(self.broke.sum()),
                "healed": int(self.healed.sum())}


def all_pairs(routing: Routing) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of distinct hosts."""
    h = routing.fabric.hosts
    s, d = np.meshgrid(h, h, indexing="ij")
    keep = s != d
    return s[keep], d[keep]


def _link_keys(routing: Routing) -> np.ndarray:
    """Per directed link: a key (source node, out port) that survives removing other cables."""
    f = routing.fabric
    return f.dl_src.astype(np.int64) * 4096 + f.dl_src_port


def diff_paths(before: Routing, after: Routing, src=None, dst=None) -> PathDiff:
    """Compare the paths of host pairs (default: all pairs) under two routings of the same nodes."""
    fb, fa = before.fabric, after.fabric
    if fb.num_nodes != fa.num_nodes or not np.array_equal(fb.guid, fa.guid):
        raise RoutingError("diff_paths: the two routings are for fabrics with different nodes")
    if src is None or dst is None:
        src, dst = all_pairs(before)
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    mb, bb = before.paths(src, dst, return_broken=True)
    ma, ba = after.paths(src, dst, return_broken=True)
    kb = _link_keys(before)[mb.indices]
    ka = _link_keys(after)[ma.indices]
    rows_b = np.repeat(np.arange(len(src)), np.diff(mb.indptr))
    rows_a = np.repeat(np.arange(len(src)), np.diff(ma.indptr))
    # Same path iff same number of links and the same multiset of keys: compare sorted (row, key) lists.
    same_len = np.diff(mb.indptr) == np.diff(ma.indptr)
    ob = np.lexsort((kb, rows_b))
    oa = np.lexsort((ka, rows_a))
    differ = np.zeros(len(src), dtype=bool)
    both = same_len[rows_b[ob]]
    # Rows of equal length line up entry by entry after sorting.
    lb_rows, lb_keys = rows_b[ob][both], kb[ob][both]
    rows_a_sorted, keys_a_sorted = rows_a[oa], ka[oa]
    keep_a = same_len[rows_a_sorted]
    mismatch = lb_keys != keys_a_sorted[keep_a]
    differ[np.unique(lb_rows[mismatch])] = True
    differ |= ~same_len
    changed = differ & ~bb & ~ba
    return PathDiff(src, dst, changed, ~bb & ba, bb & ~ba)


def reroute_without(routing: Routing, cables: Iterable[int], **options) -> tuple[Routing, PathDiff]:
    """Route ``routing.fabric`` without ``cables`` with the same engine; return it and the path diff."""
    from . import route

    f = routing.fabric.without_links(cables)
    engine = routing.engine if routing.engine in _engines() else "minhop"
    after = route(f, engine, **options)
    return after, diff_paths(routing, after)


def _engines():
    from . import ENGINES
    return ENGINES
