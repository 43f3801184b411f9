"""Which hosts each tenant's partitions hold on a fabric: what the fabric's runner publishes for redaction."""

from __future__ import annotations

import numpy as np
from django.apps import apps

from fabric_engine.topology import KIND_HOST

__all__ = ["tenant_host_sets", "host_tenants"]


def tenant_host_sets(fabric, topology) -> dict[int, dict]:
    """Per tenant with partitions on ``fabric`` (a row): the hosts of ``topology`` its partitions hold.

    ``{tenant id: {"slug", "name", "nodes": [host index], "guids": [host node GUID]}}``, JSON-ready,
    what the fabric's runner stores in its runtime record (:func:`ibweb.runtime.record.publish_tenants`).
    Member GUIDs that are not ports of ``topology`` name no host.
    """
    tenant, member = apps.get_model("tenancy", "Tenant"), apps.get_model("tenancy", "PartitionMember")
    tenants = tenant.objects.filter(partitions__fabric=fabric).distinct().values_list("pk", "slug", "name")
    out = {pk: {"slug": slug, "name": name, "nodes": [], "guids": []} for pk, slug, name in tenants}
    rows = list(member.objects.filter(partition__fabric=fabric, partition__tenant__isnull=False)
                .values_list("partition__tenant_id", "guid").distinct())
    if not rows or not topology.num_nodes:
        return out
    owner = np.array([r[0] for r in rows], dtype=np.int64)
    node, hit = topology.guid_index.nodes(np.array([int(r[1], 16) for r in rows], dtype=np.uint64))
    owner, node = owner[hit], node[hit]
    host = topology.kind[node] == KIND_HOST
    pairs = np.unique(np.stack([owner[host], node[host]], axis=1), axis=0) if host.any() else np.zeros((0, 2), int)
    for tid in np.unique(pairs[:, 0]).tolist():  # one slice per tenant
        nodes = pairs[pairs[:, 0] == tid, 1]
        if tid in out:
            out[tid]["nodes"] = nodes.tolist()
            out[tid]["guids"] = [int(g) for g in topology.guid[nodes]]
    return out


def host_tenants(fabric, topology, nodes) -> list[list[str]]:
    """Slugs of the tenants whose partitions on ``fabric`` (a row) hold each of ``nodes`` (indices in
    ``topology``), by their port GUIDs: a host's tenants as that topology places it, kept with what names it
    after it left (:mod:`ibweb.telemetry.message_parts`, :mod:`.alert_objects`). A switch, or a host of no
    partition, has none."""
    owners: list[list[str]] = [[] for _ in nodes]
    where: dict[int, list[int]] = {}
    for k, n in enumerate(nodes):
        where.setdefault(int(n), []).append(k)
    for t in tenant_host_sets(fabric, topology).values():  # a handful of tenants
        for n in set(t["nodes"]) & where.keys():
            for k in where[n]:
                owners[k].append(t["slug"])
    return [sorted(o) for o in owners]
