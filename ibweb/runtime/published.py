"""The fabric a fabric row's runtime record holds, read only: what read paths (pages, redaction) place GUIDs on.

Never builds and never writes: before a record is published (or while the one there was derived
from a spec edited since) the answer is None. Writes that must check GUIDs without a record use
:func:`ibweb.tenancy.inventory.fabric_inventory`, which builds one from the spec and publishes it.
"""

from __future__ import annotations

import hashlib
import json

from fabric_engine.topology import Fabric

from . import record

__all__ = ["published_fabric", "spec_digest", "spec_topology"]


def spec_topology(fabric_row) -> dict | None:
    """The ``topology`` of an emulated fabric row's spec (None for a telemetry-fed fabric or an empty spec)."""
    return (fabric_row.spec or {}).get("topology") if fabric_row.mode == "emulated" else None


def spec_digest(topology: dict) -> str:
    """What a record built from a spec's ``topology`` carries in ``info["spec"]``."""
    return hashlib.sha256(json.dumps(topology, sort_keys=True).encode()).hexdigest()[:16]


def published_fabric(fabric_row) -> Fabric | None:
    """The engine :class:`Fabric` of ``fabric_row``'s runtime record while it is current, else None.

    A record its engine published is current; one built from the spec (``info["source"] == "spec"``)
    only while the row's spec still has the topology it was built from.
    """
    h = record.head_of(fabric_row)
    if h is None:
        return None
    info = h.get("info") or {}
    if info.get("source") == "spec":
        topology = spec_topology(fabric_row)
        if not topology or info.get("spec") != spec_digest(topology):
            return None
    return record.fabric(fabric_row.pk, h)
