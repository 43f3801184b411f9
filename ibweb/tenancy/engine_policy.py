"""Tenancy rows -> the plain data :class:`fabric_engine.policy.Policy` takes, and a change counter.

The live engine asks :func:`policy_version` once per tick (one query by primary key) and,
when it changed, rebuilds its policy with :func:`policy_data` (or
:func:`policy_for`), so a change saved in the admin or the API reaches the
emulation within one tick. Every save or delete of a tenancy model bumps the
version (see ``signals.py``) in the transaction that makes the change: the version is
the fabric row's ``policy_version`` column, committed (or rolled back) with the rows it
stands for, so a number never comes back for other rows.
"""

from __future__ import annotations

from django.db.models import F

from fabric_engine.formats.opensm_qos import parse_sl2vl, parse_vlarb
from fabric_engine.policy import Policy
from ibweb.fabrics.models import Fabric

from .choices import rate_gbps
from .exporters import default_partition_spec
from .inventory import fabric_inventory
from .models import Partition, QosPolicy

__all__ = ["policy_data", "policy_for", "policy_version", "bump_policy_version"]


def policy_version(fabric_id: int) -> int:
    """A number that changes whenever the fabric's partitions or QoS change (0 for no such fabric)."""
    return Fabric.committed_policy_version(fabric_id) or 0


def bump_policy_version(fabric_id: int) -> None:
    """Add one to the fabric's policy version, in the caller's transaction (its rollback undoes the bump)."""
    Fabric.objects.filter(pk=fabric_id).update(policy_version=F("policy_version") + 1)


def policy_data(fabric) -> dict:
    """JSON-ready input of :meth:`Policy.from_dict` for ``fabric`` (default partition first)."""
    default = default_partition_spec(fabric)
    parts = [{"name": default.name, "pkey": default.pkey, "members": [],
              "keywords": {m.target: m.membership for m in default.members if m.target != "SELF"}}]
    rows = (Partition.objects.filter(fabric=fabric).select_related("service_class", "tenant__service_class")
            .prefetch_related("members"))
    for p in rows:
        cls = p.effective_class()
        sl = p.sl if p.sl is not None else (cls.sl if cls else None)
        rate_code = p.rate if p.rate is not None else (cls.rate_limit if cls else None)
        parts.append({"name": p.name, "pkey": p.pkey, "tenant": p.tenant.slug if p.tenant_id else None,
                      "members": [[m.guid, m.membership] for m in p.members.all()],
                      "keywords": {k: v for k, v in p.keyword_members().items() if k != "SELF"},
                      "sl": sl, "rate_limit_gbps": rate_gbps(rate_code)})
    data: dict = {"partitions": parts}
    qos = QosPolicy.objects.filter(fabric=fabric, enabled=True).first()
    if qos is not None:
        data["qos"] = {"sl2vl": parse_sl2vl(qos.sl2vl), "vlarb_high": parse_vlarb(qos.vlarb_high),
                       "vlarb_low": parse_vlarb(qos.vlarb_low), "high_limit": qos.high_limit,
                       "max_vls": qos.max_vls}
    return data


def policy_for(fabric):
    """``(Policy, engine Fabric)`` of a fabric row."""
    inv = fabric_inventory(fabric)
    return Policy.from_dict(inv, policy_data(fabric)), inv
