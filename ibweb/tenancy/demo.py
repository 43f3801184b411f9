"""Tenants and partitions of the demo fabric.

One partition per tenant holding its jobs' hosts (full members), and a shared
storage partition in which the storage servers are full members and every GPU
host a limited one: hosts reach storage, but not each other through it.
"""

from __future__ import annotations

from django.db import transaction
from django.utils.text import slugify

from fabric_engine.scenario import build_emulator
from fabric_engine.topology import ROLES

from . import services
from .models import Partition, Tenant

#: P_Key of each demo tenant's partition.
DEMO_PKEYS = {"acme": 0x0101, "globex": 0x0102, "initech": 0x0103}
#: P_Key of the shared storage partition.
STORAGE_PKEY = 0x0200


def _port_guids(fabric, nodes) -> list[str]:
    """Every port GUID of ``nodes`` (multi-port HCAs have one per port)."""
    slots = [s for n in nodes for s in range(int(fabric.port_offset[n]), int(fabric.port_offset[n] + fabric.nports[n]))]
    return [f"0x{int(fabric.port_guid[s]):016x}" for s in slots]


def ensure_demo_policy(fabric) -> int:
    """Create the demo tenants and their partitions unless the fabric has partitions; returns how many were made."""
    if Partition.objects.filter(fabric=fabric).exists():
        return 0
    emulator = build_emulator(fabric.scenario())
    f = emulator.fabric
    hosts_by_tenant: dict[str, set[int]] = {}
    for job in emulator.jobs:
        hosts_by_tenant.setdefault(job.tenant, set()).update(int(h) for h in job.hosts)
    made = 0
    with transaction.atomic():
        for tenant_slug, hosts in sorted(hosts_by_tenant.items()):
            tenant, _ = Tenant.objects.get_or_create(slug=slugify(tenant_slug),
                                                     defaults={"name": tenant_slug.capitalize()})
            pkey = DEMO_PKEYS.get(tenant_slug, 0x0200 + made)
            partition = Partition.objects.create(fabric=fabric, tenant=tenant, name=f"{tenant.slug}-jobs", pkey=pkey,
                                                 description=f"Hosts of {tenant.name}'s jobs.")
            guids = [f"0x{int(f.port_guid[f.port_offset[h]]):016x}" for h in sorted(hosts)]
            services.add_members(partition, [(g, "full") for g in guids], via="demo")
            made += 1
        servers = [int(n) for n in f.hosts if f.role[n] == ROLES.index("storage")]
        if servers:
            gpus = [int(n) for n in f.hosts if f.role[n] == ROLES.index("gpu")]
            storage = Partition.objects.create(fabric=fabric, name="storage", pkey=STORAGE_PKEY,
                                               description="Storage servers (full) and GPU hosts (limited).")
            entries = [(g, "full") for g in _port_guids(f, servers)] + [(g, "limited") for g in _port_guids(f, gpus)]
            services.add_members(storage, entries, via="demo")
            made += 1
    return made
