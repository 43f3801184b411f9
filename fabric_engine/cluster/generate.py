"""Emulated multi-plane clusters: N compute planes with the same hosts, an optional storage fabric.

A cluster spec::

    {"name": "pod", "planes": 2,
     "plane": {"generator": "fat_tree", "hosts": 64, "radix": 16, "host_prefix": "dgx"},
     "storage": {"generator": "fat_tree", "radix": 16, "storage_servers": 4},   # optional
     "jobs": [{"name": "llm", "tenant": "acme", "hosts": 32, "placement": "packed", "buffer_gb": 8,
               "compute_s": 1.0, "read_gbps": 200, "checkpoint": {...}}],
     "background": {...}, "sharp": {...}, "storage_model": {...}, "tick_s": 1.0, "seed": 1}

Jobs are placed once, on the first plane's hosts (every plane has the same hosts, by name), and each
fabric's spec names them with a ``nodelist``. As NCCL does with one ring or tree per rail, every plane
carries ``1/N`` of each collective's bytes; data loading and checkpoints go over the storage fabric (whose
jobs move no collective bytes), or over the planes when the cluster has no storage fabric. The storage
fabric is built from ``storage`` with the planes' hosts (same count, same names) plus its storage servers.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..errors import FabricEngineError
from ..workload import PLACEMENTS

__all__ = ["ClusterFabric", "cluster_fabrics", "loaded_cluster_spec", "MAX_PLANES"]

#: Most compute planes of one cluster (eight rails per GPU server, twice over).
MAX_PLANES = 16
_STORAGE_ONLY = ("read_gbps", "checkpoint")


@dataclass(frozen=True)
class ClusterFabric:
    """One fabric of a generated cluster: its role, rail (compute planes), name suffix and scenario spec."""

    role: str
    rail: int | None
    suffix: str
    spec: dict


def _placed(plane: dict, jobs: list[dict]) -> list[str]:
    """Each job's hosts as a hostlist, placed once on the plane's GPU hosts."""
    from ..scenario import build_fabric
    from ..twin.hostlist import fold_hostlist

    fabric = build_fabric(plane)
    taken = np.zeros(0, dtype=np.int64)
    lists = []
    for i, job in enumerate(jobs):
        try:
            place = PLACEMENTS[job.get("placement", "packed")]
            hosts = place(fabric, int(job["hosts"]), taken)
        except (KeyError, TypeError, ValueError, FabricEngineError) as exc:
            raise FabricEngineError(f"jobs[{i}]: {exc}") from None
        taken = np.concatenate([taken, hosts])
        lists.append(fold_hostlist(fabric.node_name[hosts].tolist()))
    return lists


def _job(job: dict, nodelist: str, share: float, storage_traffic: bool) -> dict:
    out = {k: v for k, v in job.items() if k not in ("hosts", "placement") + _STORAGE_ONLY}
    out["nodelist"] = nodelist
    out["buffer_gb"] = float(job.get("buffer_gb", 8)) * share
    if storage_traffic:
        out.update({k: job[k] for k in _STORAGE_ONLY if k in job})
    if share == 0:  # the storage fabric's part of a job: no collective, nothing to aggregate
        out.pop("sharp", None)
    return out


def cluster_fabrics(spec: dict) -> list[ClusterFabric]:
    """The fabrics of the cluster ``spec`` (see the module docstring): planes 1..N, then the storage fabric."""
    if not isinstance(spec, dict):
        raise FabricEngineError("cluster: expected an object")
    planes = spec.get("planes")
    if not isinstance(planes, int) or isinstance(planes, bool) or not 1 <= planes <= MAX_PLANES:
        raise FabricEngineError(f"cluster.planes: {planes!r}; expected 1 to {MAX_PLANES}")
    plane = spec.get("plane")
    if not isinstance(plane, dict):
        raise FabricEngineError("cluster.plane: expected a topology object")
    if plane.get("storage_servers") or plane.get("mgmt_nodes"):
        raise FabricEngineError("cluster.plane: storage servers and management nodes belong on the storage fabric")
    jobs = spec.get("jobs") or []
    if not isinstance(jobs, list) or not all(isinstance(j, dict) for j in jobs):
        raise FabricEngineError("cluster.jobs: expected a list of job objects")
    storage = spec.get("storage")
    if storage is not None and not isinstance(storage, dict):
        raise FabricEngineError("cluster.storage: expected a topology object or null")
    name = str(spec.get("name") or "cluster")
    lists = _placed(plane, jobs)
    common = {k: copy.deepcopy(spec[k]) for k in ("background", "sharp", "tick_s") if k in spec}
    seed = int(spec.get("seed", 1))
    out = []
    for rail in range(1, planes + 1):
        plane_spec = {**common, "topology": {**plane, "name": f"{name}-plane{rail}"}, "seed": seed + rail - 1,
                      "jobs": [_job(j, nl, 1.0 / planes, storage is None) for j, nl in zip(jobs, lists, strict=True)]}
        if storage is None and "storage_model" in spec:
            plane_spec["storage"] = copy.deepcopy(spec["storage_model"])
        out.append(ClusterFabric("compute", rail, f"plane{rail}", plane_spec))
    if storage is not None:
        topology = {**storage, "name": f"{name}-storage", "hosts": plane.get("hosts"),
                    "host_prefix": plane.get("host_prefix", "gpu")}
        if topology["hosts"] is None:
            raise FabricEngineError("cluster.storage: needs a plane generated with a host count (fat_tree)")
        storage_spec = {"topology": topology, "seed": seed, "tick_s": spec.get("tick_s", 1.0),
                        "jobs": [_job(j, nl, 0.0, True) for j, nl in zip(jobs, lists, strict=True)]}
        if "storage_model" in spec:
            storage_spec["storage"] = copy.deepcopy(spec["storage_model"])
        out.append(ClusterFabric("storage", None, "storage", storage_spec))
    return out


def loaded_cluster_spec(planes: int, nodes: int, job_nodes: int = 32, tick_s: float = 1.0) -> dict:
    """A fully loaded cluster of ``nodes`` GPU servers with one HCA per rail on each of ``planes`` NDR planes.

    Each plane is a 3-level radix-64 fat tree of ``nodes`` hosts (a 2-level one up to 2,048); jobs of
    ``job_nodes`` servers cover every server, collectives taking turns through the loaded patterns of
    :func:`fabric_engine.scenario.loaded_rail_spec`; 10 % of the hosts send background traffic. 8 planes of
    16,384 are the 131,072-GPU cluster of ``tests/bench/bench_cluster.py``.

    >>> spec = loaded_cluster_spec(8, 16384)
    >>> spec["planes"], spec["plane"]["levels"], len(spec["jobs"])
    (8, 3, 512)
    """
    from ..scenario import LOADED_PATTERNS

    if nodes <= 0 or job_nodes <= 1 or nodes % job_nodes:
        raise FabricEngineError(f"nodes {nodes}: must be a multiple of the job size {job_nodes} (at least 2)")
    jobs = [{"name": f"job{k:03d}", "tenant": f"tenant{k % 8}", "hosts": job_nodes,
             "pattern": LOADED_PATTERNS[k % len(LOADED_PATTERNS)],
             "placement": "packed" if (k // len(LOADED_PATTERNS)) % 2 == 0 else "scattered",
             "buffer_gb": planes * (1 + k % 4), "compute_s": 0.3 + 0.1 * (k % 5)} for k in range(nodes // job_nodes)]
    return {"name": "loaded", "planes": planes,
            "plane": {"generator": "fat_tree", "hosts": nodes, "radix": 64, "levels": 2 if nodes <= 2048 else 3,
                      "speed": "NDR", "host_prefix": "dgx"},
            "jobs": jobs, "background": {"fraction": 0.1, "gbps": 20}, "tick_s": tick_s, "seed": 1}
