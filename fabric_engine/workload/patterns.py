"""Communication patterns of training jobs, expanded into rank-to-rank transfers.

A pattern is a function ``(job, fabric) -> PatternFlows``: for every transfer its
source and destination host and the bytes it moves per iteration. All of them
are vectorised over ranks. Byte counts follow how NCCL runs each collective on a
buffer of ``S = job.buffer_bytes``:

* ``ring_allreduce``: rank ``i`` sends ``2 (n - 1) / n * S`` to rank ``i + 1``
  (reduce-scatter then all-gather around one ring).
* ``tree_allreduce``: NCCL's double binary tree; each tree reduces and broadcasts
  half the buffer, so every tree edge carries ``S / 2`` up and ``S / 2`` down. The
  second tree mirrors the ranks (even ``n``) or shifts them by one (odd ``n``), so
  leaves of one tree are inner nodes of the other.
* ``hierarchical_allreduce``: rail-aware two-level all-reduce; ranks under the
  same leaf switch form a group, reduce-scatter and all-gather around a ring inside
  the group (``2 (m - 1) / m * S``), and all-reduce their ``S / m`` shard around a
  ring of the ranks with the same position in the other groups (``2 (g - 1) / g * S / m``).
* ``all_to_all``: MoE expert parallelism; every rank sends ``S / n`` to every other rank.
* ``pipeline``: ``params["stages"]`` consecutive stages (default 4); rank ``j`` of
  stage ``s`` sends ``S`` of activations to rank ``j`` of stage ``s + 1`` and gets
  ``S`` of gradients back.
* ``uniform_random``: every rank sends ``S`` to one random other rank of the job
  (``params["seed"]``).

A pattern may also return its own incidence rows (e.g. a SHARP reduction tree,
whose transfers end at switches rather than hosts); :func:`register_pattern`
adds patterns from other modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import scipy.sparse as sp

from ..errors import FabricEngineError
from ..topology import Fabric

if TYPE_CHECKING:
    from .job import Job

__all__ = ["PatternFlows", "PATTERNS", "register_pattern", "ring_pairs", "rings_within", "btree_parents",
           "background_pairs"]


class PatternFlows(NamedTuple):
    """Transfers of one job per iteration: ``src``, ``dst`` node indices, ``nbytes`` float64, all ``(F,)``.

    ``incidence`` (CSR ``(F, 2L)``), when given, replaces the routed paths of these flows;
    ``demand_gbps`` (float64 ``(F,)``), when given, caps their rates (default: greedy);
    ``kind`` is the flow kind code (default :data:`~.traffic.KIND_COLLECTIVE`).
    """

    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    incidence: sp.csr_matrix | None = None
    demand_gbps: np.ndarray | None = None
    kind: int | None = None


def ring_pairs(hosts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Source and destination of every ring step: rank ``i`` sends to rank ``i + 1 mod n``."""
    h = np.asarray(hosts, dtype=np.int64)
    return h, np.roll(h, -1)


def rings_within(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A ring through the members of every group, in index order.

    Returns ``(next_index, group_size)``, both ``(n,)``: the member after ``i`` in
    ``i``'s group (itself for a group of one) and the size of ``i``'s group.

    >>> rings_within(np.array([0, 1, 0, 1, 0]))[0].tolist()
    [2, 3, 4, 1, 0]
    """
    g = np.asarray(group)
    n = len(g)
    order = np.argsort(g, kind="stable")
    gs = g[order]
    start = np.searchsorted(gs, gs, side="left")
    size = np.searchsorted(gs, gs, side="right") - start
    pos = np.arange(n) - start
    nxt_sorted = start + (pos + 1) % size
    nxt = np.empty(n, dtype=np.int64)
    nxt[order] = order[nxt_sorted]
    out_size = np.empty(n, dtype=np.int64)
    out_size[order] = size
    return nxt, out_size


def btree_parents(n: int) -> np.ndarray:
    """Parent rank in NCCL's in-order binary tree over ranks ``0..n-1`` (``-1`` for the root, rank 0).

    The parent of ``r`` clears its lowest set bit and sets the next one up,
    falling back to just clearing it when that leaves the range.

    >>> btree_parents(8).tolist()
    [-1, 2, 4, 2, 0, 6, 4, 6]
    """
    r = np.arange(n, dtype=np.int64)
    low = r & -r
    up = (r ^ low) | (low << 1)
    up = np.where(up >= n, r ^ low, up)
    if n:
        up[0] = -1
    return up


def background_pairs(hosts: np.ndarray, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform random pairs: a ``fraction`` of hosts each send to a random other host."""
    h = np.asarray(hosts, dtype=np.int64)
    senders = rng.choice(h, size=int(round(fraction * len(h))), replace=False)
    offset = rng.integers(1, len(h), size=len(senders))
    pos = np.searchsorted(h, senders)
    return senders, h[(pos + offset) % len(h)]


# ------------------------------------------------------------------- patterns
def _ring_allreduce(job: Job, fabric: Fabric) -> PatternFlows:
    src, dst = ring_pairs(job.hosts)
    n = len(src)
    return PatternFlows(src, dst, np.full(n, 2.0 * (n - 1) / n * job.buffer_bytes))


def _tree_allreduce(job: Job, fabric: Fabric) -> PatternFlows:
    h = np.asarray(job.hosts, dtype=np.int64)
    n = len(h)
    parent = btree_parents(n)
    pos = np.arange(n)
    # Tree 2 relabels ranks: mirror for even n, shift by one for odd n (as NCCL's double tree).
    to_pos = (n - 1 - pos) if n % 2 == 0 else (pos - 1) % n
    from_pos = (n - 1 - pos) if n % 2 == 0 else (pos + 1) % n
    child1 = pos[parent >= 0]
    par1 = parent[parent >= 0]
    p2 = parent[to_pos]
    child2 = pos[p2 >= 0]
    par2 = from_pos[p2[p2 >= 0]]
    child = np.concatenate([child1, child2])
    par = np.concatenate([par1, par2])
    src = np.concatenate([h[child], h[par]])
    dst = np.concatenate([h[par], h[child]])
    return PatternFlows(src, dst, np.full(len(src), job.buffer_bytes / 2.0))


def _hierarchical_allreduce(job: Job, fabric: Fabric) -> PatternFlows:
    h = np.asarray(job.hosts, dtype=np.int64)
    n = len(h)
    _, group = np.unique(fabric.host_leaf[h], return_inverse=True)
    nxt, m = rings_within(group)
    order = np.lexsort((np.arange(n), group))
    local = np.empty(n, dtype=np.int64)
    gs = group[order]
    local[order] = np.arange(n) - np.searchsorted(gs, gs, side="left")
    nxt2, g = rings_within(local)
    s = float(job.buffer_bytes)
    intra = m > 1
    inter = g > 1
    src = np.concatenate([h[intra], h[inter]])
    dst = np.concatenate([h[nxt[intra]], h[nxt2[inter]]])
    nbytes = np.concatenate([2.0 * (m[intra] - 1) / m[intra] * s,
                             2.0 * (g[inter] - 1) / g[inter] * s / m[inter]])
    return PatternFlows(src, dst, nbytes)


def _all_to_all(job: Job, fabric: Fabric) -> PatternFlows:
    h = np.asarray(job.hosts, dtype=np.int64)
    n = len(h)
    src, dst = np.repeat(h, n), np.tile(h, n)
    keep = src != dst
    return PatternFlows(src[keep], dst[keep], np.full(int(keep.sum()), job.buffer_bytes / n))


def _pipeline(job: Job, fabric: Fabric) -> PatternFlows:
    h = np.asarray(job.hosts, dtype=np.int64)
    stages = int(job.params.get("stages", 4))
    if not 2 <= stages <= len(h):
        raise FabricEngineError(f"job {job.name}: pipeline stages {stages} outside 2..{len(h)}")
    per = len(h) // stages
    ranks = h[:stages * per].reshape(stages, per)
    fwd_src, fwd_dst = ranks[:-1].ravel(), ranks[1:].ravel()
    src = np.concatenate([fwd_src, fwd_dst])
    dst = np.concatenate([fwd_dst, fwd_src])
    return PatternFlows(src, dst, np.full(len(src), float(job.buffer_bytes)))


def _uniform_random(job: Job, fabric: Fabric) -> PatternFlows:
    h = np.asarray(job.hosts, dtype=np.int64)
    n = len(h)
    rng = np.random.default_rng(int(job.params.get("seed", 0)))
    dst = h[(np.arange(n) + rng.integers(1, n, size=n)) % n]
    return PatternFlows(h, dst, np.full(n, float(job.buffer_bytes)))


#: Pattern name -> expansion function ``(job, fabric) -> PatternFlows``.
PATTERNS: dict[str, Callable[[Job, Fabric], PatternFlows]] = {
    "ring_allreduce": _ring_allreduce,
    "tree_allreduce": _tree_allreduce,
    "hierarchical_allreduce": _hierarchical_allreduce,
    "all_to_all": _all_to_all,
    "pipeline": _pipeline,
    "uniform_random": _uniform_random,
}


def register_pattern(name: str, expand: Callable[[Job, Fabric], PatternFlows]) -> None:
    """Make ``name`` usable as ``Job.pattern`` (e.g. ``"sharp_allreduce"`` from the SHARP module)."""
    PATTERNS[name] = expand
