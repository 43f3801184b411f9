"""Generated clusters made into rows: a :class:`Cluster` and its fabrics, all or nothing; the demo's cluster."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from fabric_engine.cluster import cluster_fabrics
from fabric_engine.errors import FabricEngineError

from .choices import FabricRole
from .models import Cluster, Fabric

__all__ = ["create_cluster", "ensure_demo_cluster", "DEMO_CLUSTER_SPEC", "DEMO_CLUSTER_SLUG"]

DEMO_CLUSTER_SLUG = "pod"

#: The demo's cluster: two compute planes of 64 single-HCA-per-rail servers (one NDR fat tree each) and a
#: storage fabric of the same servers and four storage servers; five jobs of the demo tenants, their collectives
#: split over both rails, data loading and checkpoints over the storage fabric.
DEMO_CLUSTER_SPEC: dict = {
    "name": "pod", "planes": 2,
    "plane": {"generator": "fat_tree", "hosts": 64, "radix": 16, "speed": "NDR", "host_prefix": "dgx"},
    "storage": {"generator": "fat_tree", "radix": 16, "speed": "NDR", "storage_servers": 4, "storage_ports": 2},
    "jobs": [
        {"name": "pod-llm", "tenant": "acme", "hosts": 24, "placement": "packed", "buffer_gb": 12, "compute_s": 1.2,
         "read_gbps": 300, "checkpoint": {"params": 13e9, "every": 15}},
        {"name": "pod-moe", "tenant": "acme", "hosts": 16, "placement": "scattered", "pattern": "all_to_all",
         "buffer_gb": 6, "compute_s": 0.8},
        {"name": "pod-vit", "tenant": "globex", "hosts": 12, "placement": "scattered", "pattern": "tree_allreduce",
         "buffer_gb": 4, "compute_s": 0.6, "read_gbps": 400},
        {"name": "pod-ft", "tenant": "initech", "hosts": 8, "placement": "packed", "buffer_gb": 2, "compute_s": 0.5},
    ],
    "background": {"fraction": 0.1, "gbps": 20},
    "storage_model": {"read_gbps": 200, "write_gbps": 100, "background_read_gbps": 50, "background_fraction": 0.05},
    "tick_s": 1.0, "seed": 7,
}


def create_cluster(spec: dict, slug: str, name: str, description: str = "", routing_engine: str = "minhop") -> Cluster:
    """A cluster and one emulated fabric per plane (``<slug>-plane<N>``) and storage fabric (``<slug>-storage``).

    Raises :class:`~django.core.exceptions.ValidationError` (nothing is created) for a bad spec or a taken slug.
    """
    try:
        parts = cluster_fabrics(spec)
    except FabricEngineError as exc:
        raise ValidationError({"spec": str(exc)}) from exc
    with transaction.atomic():
        cluster = Cluster(slug=slug, name=name, description=description)
        cluster.full_clean()
        cluster.save()
        for part in parts:
            role = FabricRole(part.role)
            fabric = Fabric(name=f"{name}: plane {part.rail}" if part.rail else f"{name}: {role.value}",
                            slug=f"{slug}-{part.suffix}", mode="emulated", spec=part.spec,
                            routing_engine=routing_engine, tick_s=float(part.spec.get("tick_s", 1.0)),
                            cluster=cluster, cluster_role=role, rail=part.rail)
            fabric.full_clean()
            fabric.save()
    return cluster


def ensure_demo_cluster() -> tuple[Cluster, bool]:
    """Create the demo's cluster unless it exists; returns it and whether it was created."""
    found = Cluster.objects.filter(slug=DEMO_CLUSTER_SLUG).first()
    if found is not None:
        return found, False
    return create_cluster(DEMO_CLUSTER_SPEC, DEMO_CLUSTER_SLUG, "Demo pod",
                          "Two NDR compute planes (one rail each) of 64 servers and a storage fabric with 4 storage "
                          "servers; jobs' collectives split over both rails, data and checkpoints over storage."), True
