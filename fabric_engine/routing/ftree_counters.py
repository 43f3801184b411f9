"""Up-group counters moved by routes over same-level cables, as OpenSM's ftree moves them.

In ``fabric_route_downgoing_by_going_up`` (OpenSM 3.3.23, ``osm_ucast_ftree.c``) a switch walks its
sibling groups after its up groups; for every sibling it routes (one not yet routed with fewer
hops) whose walk created a route, it adds one to ``p_min_group->counter_down`` -- its up group that
was least loaded when it sorted them at this visit (``bubble_sort_down``; on a main path, the group
the main path just took). For a real LID the same switch's ``fabric_route_upgoing_by_going_down``
has already routed the sibling at the same hop count, so the walk skips it: only *dummy* compute
nodes (LID 0, for which the sibling groups are left out of the downward walk) move these counters.
For a dummy on leaf ``l``, each parent ``a`` of ``l`` that ``l`` visits (the main path's first, then
the secondary ones in ``l``'s load order) routes every sibling ``b`` that ``l`` visits later or not at
all.

:class:`UpCounters` replays the counters of the switches such routes touch: least loaded, lowest index
(the up groups are kept in index order), over the main paths and these extra counts in destination
order. The loop runs over the events of one switch (main paths and bumps), vectorized over switches.
"""

from __future__ import annotations

import numpy as np

__all__ = ["UpCounters", "dummy_sibling_bumps"]


def dummy_sibling_bumps(parents: np.ndarray, sib_a: np.ndarray, sib_b: np.ndarray,
                        reach: np.ndarray) -> np.ndarray:
    """``out[i, k]``: sibling routes the ``k``-th parent ``parents[i, k]`` of a dummy's leaf lays (0, 1, ...).

    ``parents`` (int ``[D, W]``, -1 padded): the leaf's up groups' upper switches in the leaf's load order
    at the dummy's turn (the main path's first). ``sib_a``/``sib_b``: same-level cables, both directions.
    ``reach[b]``: routing sibling ``b`` creates a route (OpenSM counts only then).
    """
    out = np.zeros(parents.shape, dtype=np.int64)
    w = parents.shape[1]
    k = np.arange(w)[None, :]
    for a, b in zip(sib_a.tolist(), sib_b.tolist(), strict=True):  # one per same-level cable
        if not reach[b]:
            continue
        is_a, is_b = parents == a, parents == b
        pos_b = np.where(is_b.any(axis=1), is_b.argmax(axis=1), w)
        out += is_a & (k < pos_b[:, None])
    return out


class UpCounters:
    """Up-group picks of the switches whose counters also move by sibling routes.

    Parameters
    ----------
    x, d : int64 ``[E]``
        Events: switch and destination id (a main path through ``x``, or sibling routes at ``x`` only).
    inc, main : int64 ``[E]``, bool ``[E]``
        How much the least loaded group's counter grows, and whether the event is a main path.
    n_up : int64 ``[S]``
        Up groups per switch.
    """

    def __init__(self, x: np.ndarray, d: np.ndarray, inc: np.ndarray, main: np.ndarray, n_up: np.ndarray) -> None:
        o = np.lexsort((d, x))
        x, d, inc, main = x[o], d[o], inc[o], main[o]
        self.switches = sw = np.unique(x)
        xi = np.searchsorted(sw, x)
        start = np.searchsorted(xi, np.arange(len(sw)))
        rank = np.arange(len(x)) - start[xi]
        width = int(n_up[sw].max(initial=1)) or 1
        big = np.iinfo(np.int64).max // 4
        counter = np.where(np.arange(width)[None, :] < n_up[sw][:, None], 0, big).astype(np.int64)
        mains = np.zeros((len(sw), width), dtype=np.int64)
        pick = np.zeros(len(x), dtype=np.int64)
        prior = np.zeros(len(x), dtype=np.int64)
        by_rank = np.argsort(rank, kind="stable")
        bounds = np.searchsorted(rank[by_rank], np.arange(int(rank.max(initial=-1)) + 2))
        for t in range(len(bounds) - 1):  # one step per event of a switch, all switches at once
            ev = by_rank[bounds[t]:bounds[t + 1]]
            row = xi[ev]
            p = counter[row].argmin(axis=1)  # least loaded, lowest index
            pick[ev] = p
            prior[ev] = mains[row, p]
            counter[row, p] += inc[ev]
            mains[row, p] += main[ev]
        self.final = counter.argmin(axis=1)
        self._x, self._d, self._key = xi, d, xi * (int(d.max(initial=0)) + 2) + d
        self._n = int(d.max(initial=0)) + 2
        self.pick, self.prior, self.inc, self.main = pick, prior, inc, main

    def main_picks(self, x: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Group position (in index order) the main path of ``d`` takes at ``x``, and the group's main paths before."""
        at = np.searchsorted(self._key, np.searchsorted(self.switches, x) * self._n + d)
        return self.pick[at], self.prior[at]

    def next_pos(self, ids: np.ndarray) -> np.ndarray:
        """``out[i, j]``: first up group (position) in the load order of ``switches[j]`` at destination ``ids[i]``."""
        q = np.arange(len(self.switches))[None, :] * self._n + ids[:, None]
        at = np.searchsorted(self._key, q)
        nxt = np.minimum(at, max(len(self._key) - 1, 0))
        same = (at < len(self._key)) & (self._x[nxt] == np.arange(len(self.switches))[None, :])
        return np.where(same, self.pick[nxt], self.final[None, :])

    def extra_load(self, g0: np.ndarray, n_groups: int) -> np.ndarray:
        """Counts added to every up group (index into the switches' groups) beyond its main paths."""
        out = np.zeros(n_groups, dtype=np.int64)
        np.add.at(out, g0[self.switches[self._x]] + self.pick, self.inc - self.main)
        return out
