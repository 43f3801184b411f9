"""What the "Tenants and policy" page reads about a fabric besides its tenancy rows.

The fabric itself (to place GUIDs on hosts and leaves) and the job catalog (which hosts
each job runs on) come from the fabric's runtime record (:mod:`ibweb.runtime.record`,
published by its runner); the live state (each job's bandwidth now) from its newest frame.
Nothing here builds a fabric or writes a record, except :func:`engine_fabric` asked by a write.
"""

from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError

from fabric_engine.topology import Fabric
from ibweb.runtime.published import published_fabric

__all__ = ["engine_fabric", "job_catalog", "live_jobs", "member_rows", "leaves_with_hosts"]


def engine_fabric(fabric, *, build: bool = False) -> Fabric | None:
    """The engine :class:`Fabric` of a fabric row: its runtime record's (``None`` while there is none).

    ``build=True`` is for write paths (a member change checks its GUIDs against it): without a
    current record it builds the fabric from the spec and publishes it
    (:func:`ibweb.tenancy.inventory.fabric_inventory`). Reads never do.
    """
    if not build:
        return published_fabric(fabric)
    from ibweb.tenancy.inventory import fabric_inventory

    try:
        return fabric_inventory(fabric)
    except ValidationError:  # a telemetry-fed fabric before its first discovery
        return None


def job_catalog(fabric) -> list[dict]:
    """``[{"id", "tenant", "hosts": [node]}]``: the jobs of the fabric's runtime record (none before it runs)."""
    from ibweb.runtime import record

    h = record.head_of(fabric)
    jobs = (record.jobs(fabric.pk, h) or []) if h is not None else []
    return [{"id": j["id"], "tenant": j.get("tenant"), "hosts": np.asarray(j.get("hosts", []), dtype=np.int64)}
            for j in jobs]


def live_jobs(fabric) -> dict[str, dict]:
    """The jobs of the newest frame by id (``achieved_gbps``, ``active``, ...); empty before the first frame."""
    from ibweb.runtime.frames import newest_frame

    frame = newest_frame(fabric.pk) or {}
    return {j["id"]: j for j in frame.get("jobs", [])}


def member_rows(f: Fabric | None, members: list[tuple[str, str]]) -> list[dict]:
    """``{"guid", "membership", "node", "leaf", "kind"}`` per member, placed on ``f`` (vectorized)."""
    if not members:
        return []
    if f is None:
        return [{"guid": g, "membership": m, "node": "", "leaf": "", "kind": ""} for g, m in members]
    node, _ = f.guid_index.nodes(np.array([int(g, 16) for g, _ in members], dtype=np.uint64))
    leaf = np.where(node >= 0, f.host_leaf[np.maximum(node, 0)], -1)
    names, kinds = f.node_name, f.kind_label
    return [{"guid": g, "membership": m, "node": str(names[n]) if n >= 0 else "",
             "leaf": str(names[lf]) if lf >= 0 else "", "kind": str(kinds[n]) if n >= 0 else ""}
            for (g, m), n, lf in zip(members, node.tolist(), leaf.tolist(), strict=True)]


def leaves_with_hosts(f: Fabric | None) -> list[str]:
    """Names of the switches that have hosts cabled to them (for "add a leaf's hosts")."""
    if f is None:
        return []
    leaves = np.unique(f.host_leaf[f.hosts])
    return [str(f.node_name[x]) for x in leaves if x >= 0]
