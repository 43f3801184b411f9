"""What a view reads of a fabric's scenario spec: the fabric-wide keys, and its own tenants' jobs."""

from __future__ import annotations

from .jobs import job_tenants
from .view import View

__all__ = ["scenario_spec", "FABRIC_WIDE_SPEC_KEYS", "OPERATOR_TOPOLOGY_KEYS"]

#: Keys of an uploaded ``topology`` spec that only a view of the whole fabric sees.
OPERATOR_TOPOLOGY_KEYS = frozenset({"warnings"})
#: Keys of a scenario spec that name no tenant, job or host (all that a view below ``ALL`` sees of it besides
#: its own tenants' jobs and SHARP grant).
FABRIC_WIDE_SPEC_KEYS = frozenset({"topology", "routing", "background", "storage", "tick_s", "seed", "adaptive",
                                   "ecn_threshold", "xmit_wait_tick"})


def scenario_spec(view: View, spec: dict) -> dict:
    """A fabric's scenario ``spec`` as ``view`` sees it.

    Below ``ALL``: the fabric-wide keys (an uploaded topology without its reader's warnings and
    what the file said beyond the graph), the jobs of the view's tenants, and of SHARP's
    ``allowed_tenants`` only the view's tenants; anything else (a ``policy`` with
    partitions and members, keys added later) is left out.
    """
    if view.sees_all:
        return spec
    tenants = job_tenants(view) or frozenset()
    out = {k: v for k, v in spec.items() if k in FABRIC_WIDE_SPEC_KEYS}
    topology = out.get("topology")
    if isinstance(topology, dict):  # a capture's warnings and descriptions name every node: operators only
        out["topology"] = {k: v for k, v in topology.items() if k not in OPERATOR_TOPOLOGY_KEYS}
        if isinstance(topology.get("fabric"), dict):
            out["topology"]["fabric"] = {k: v for k, v in topology["fabric"].items() if k != "as_read"}
    if "jobs" in spec:
        out["jobs"] = [j for j in spec["jobs"] if isinstance(j, dict) and j.get("tenant") in tenants]
    sharp = spec.get("sharp")
    if isinstance(sharp, dict):
        allowed = sharp.get("allowed_tenants")
        out["sharp"] = {**sharp, "allowed_tenants": [t for t in allowed if t in tenants]} \
            if isinstance(allowed, list) else sharp
    return out
