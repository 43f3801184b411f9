"""The ``sharp_allreduce`` pattern: a streaming all-reduce on a job's reduction tree.

With a buffer of ``S`` bytes every host sends ``S`` up to its leaf and receives the
``S`` result back; every tree edge between switches carries ``S`` up (the reduced
data of its subtree) and ``S`` down, instead of the ring's ``2 (n - 1) / n S`` in
each direction on every host link and its crossings of spine links. One flow per
tree link and direction, each on that link alone (its own incidence row), all in
lock step (one collective group), each capped at ``efficiency x`` the tree's
slowest link: a streaming aggregation runs at the bottleneck link rate times the
efficiency (:data:`~.resources.DEFAULT_EFFICIENCY`).

The ``src``/``dst`` of a flow are job hosts (a host and rank 0, or rank 0 and 1 for
switch edges), so partition policy treats it as the job's own traffic.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import FabricEngineError
from ..topology import Fabric
from ..workload import KIND_SHARP, PatternFlows, register_pattern
from .resources import DEFAULT_EFFICIENCY
from .tree import SharpTree

__all__ = ["sharp_allreduce", "sharp_job_params", "link_bytes", "aggregated_bytes", "TREE_PARAM"]

#: Key of ``Job.params`` holding the job's :class:`SharpTree` (set by the emulator from the manager).
TREE_PARAM = "sharp_tree"
_EFF_PARAM = "sharp_efficiency"


def sharp_job_params(params: dict, tree: SharpTree, efficiency: float = DEFAULT_EFFICIENCY) -> dict:
    """``params`` of a job plus its tree and the aggregation efficiency."""
    return {**params, TREE_PARAM: tree, _EFF_PARAM: float(efficiency)}


def sharp_allreduce(job, fabric: Fabric) -> PatternFlows:
    """Flows of one SHARP all-reduce of ``job.buffer_bytes`` on the tree in ``job.params``."""
    tree = job.params.get(TREE_PARAM)
    if not isinstance(tree, SharpTree):
        raise FabricEngineError("sharp_allreduce needs a tree from the aggregation manager (set sharp on the job)")
    if not np.array_equal(np.sort(tree.hosts), np.sort(np.asarray(job.hosts))):
        raise FabricEngineError("its SHARP tree was built for other hosts")
    eff = float(job.params.get(_EFF_PARAM, DEFAULT_EFFICIENCY))
    h = np.asarray(tree.hosts, dtype=np.int64)
    up = tree.links_up
    m = len(tree.up_links)
    links = np.concatenate([up, fabric.reverse(up)]).astype(np.int64)
    ref = np.where(h == h[0], h[1], h[0])
    src_up = np.concatenate([h, np.full(m, h[0])])
    dst_up = np.concatenate([ref, np.full(m, h[1])])
    src = np.concatenate([src_up, dst_up])
    dst = np.concatenate([dst_up, src_up])
    f = len(links)
    inc = sp.csr_matrix((np.ones(f), (np.arange(f), links)), shape=(f, 2 * fabric.num_links))
    rate = eff * float(fabric.capacity_gbps[links].min())
    return PatternFlows(src, dst, np.full(f, float(job.buffer_bytes)), inc, np.full(f, rate), KIND_SHARP)


def link_bytes(nbytes: np.ndarray, incidence: sp.csr_matrix) -> float:
    """Bytes times links crossed, summed over flows: what the flows put on the wire."""
    hops = np.asarray(incidence.sum(axis=1)).ravel()
    return float(np.dot(np.asarray(nbytes, dtype=np.float64), hops))


def aggregated_bytes(tree: SharpTree, buffer_bytes: float) -> float:
    """Bytes the tree's switches reduce per all-reduce: ``S`` per child (hosts and child switches)."""
    return float(buffer_bytes) * (len(tree.host_links) + len(tree.up_links))


register_pattern("sharp_allreduce", sharp_allreduce)
