"""A fabric's port inventory, for validating partition members.

The inventory is the fabric its engine runs on, read from the fabric's runtime record
(:mod:`ibweb.runtime.record`): the emulated scenario's fabric, or a telemetry-fed fabric's
discovery. Before any engine published (an emulated fabric saved a moment ago), the
fabric is built once from the spec and published as the record's first version, which the
engine's own replaces; a telemetry-fed fabric without a discovery has no inventory yet.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re

import numpy as np
from django.core.exceptions import ValidationError

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats.opensm_partitions import format_guid
from fabric_engine.scenario import build_fabric
from fabric_engine.topology import Fabric
from ibweb.runtime import record

__all__ = ["UnknownGuid", "fabric_inventory", "normalize_guid", "check_guids", "unknown_guids", "hosts_matching",
           "member_nodes"]

_GUID_RE = re.compile(r"^(0[xX])?[0-9a-fA-F]{1,16}$")


class UnknownGuid(ValidationError):
    """A GUID that is not a port of the fabric; ``guid`` names it."""

    def __init__(self, message: dict, guid: str) -> None:
        super().__init__(message)
        self.guid = guid


def fabric_inventory(fabric) -> Fabric:
    """The engine fabric of a :class:`ibweb.fabrics.models.Fabric` row, from its runtime record."""
    row = record.row_identity(fabric)
    h = record.head(fabric.pk, row)
    f = record.fabric(fabric.pk, h) if h is not None else None
    topology = (fabric.spec or {}).get("topology") if fabric.mode == "emulated" else None
    digest = _digest(topology) if topology else None
    if f is not None and (h["info"].get("source") != "spec" or h["info"].get("spec") == digest):
        return f
    if not topology:
        raise ValidationError(f"fabric {fabric.slug}: its engine has not published the fabric yet (no discovery), "
                              f"so its port GUIDs cannot be checked; try again once it runs")
    try:
        built = build_fabric(topology)
    except FabricEngineError as exc:
        raise ValidationError(f"fabric {fabric.slug}: {exc}") from exc
    # first version, or one derived from a spec edited since; an engine's own record is never replaced
    record.publish(fabric.pk, row, built, None, [], {"source": "spec", "spec": digest}, only_if_absent=h is None)
    return built


def _digest(topology: dict) -> str:
    return hashlib.sha256(json.dumps(topology, sort_keys=True).encode()).hexdigest()[:16]


def normalize_guid(text: str | int, field: str = "guid") -> str:
    """``0x`` + 16 lower-case hex digits; raises :class:`ValidationError` on a malformed GUID."""
    if isinstance(text, int):
        value = text
    else:
        t = str(text).strip().replace(":", "")
        if not _GUID_RE.match(t):
            raise ValidationError({field: f"malformed GUID {str(text)!r}: use up to 16 hex digits, e.g. "
                                          f"0xb83fd20300000011"})
        value = int(t, 16)
    if not 0 < value < 1 << 64:
        raise ValidationError({field: f"malformed GUID {text!r}: must be a non-zero 64-bit number"})
    return format_guid(value)


def _lookup(inv: Fabric, guids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(port slot of each GUID, whether it is a port)`` in ``inv``, one sorted search for all of them."""
    values = np.array([int(g, 16) for g in guids], dtype=np.uint64)
    order = np.argsort(inv.port_guid)
    sorted_guid = inv.port_guid[order]
    pos = np.minimum(np.searchsorted(sorted_guid, values), len(sorted_guid) - 1)
    return order[pos], sorted_guid[pos] == values


def unknown_guids(fabric, guids: list[str]) -> set[str]:
    """The GUIDs (already normalized) among ``guids`` that are not ports of ``fabric``: one inventory read for all."""
    inv = fabric_inventory(fabric)
    if not guids:
        return set()
    _, known = _lookup(inv, guids)
    return {guids[i] for i in np.flatnonzero(~known)}


def check_guids(fabric, guids: list[str], field: str = "guids") -> np.ndarray:
    """Node index of every port GUID (already normalized); :class:`ValidationError` names the first unknown one."""
    inv = fabric_inventory(fabric)
    if not guids:
        return np.zeros(0, dtype=np.int64)
    slots, known = _lookup(inv, guids)
    missing = np.flatnonzero(~known)
    if missing.size:
        bad = guids[int(missing[0])]
        more = f" (and {missing.size - 1} more)" if missing.size > 1 else ""
        raise UnknownGuid({field: f"GUID {bad} is not a port of fabric {fabric.slug}{more}"}, bad)
    return inv.port_node[slots].astype(np.int64)


def hosts_matching(fabric, pattern: str) -> list[str]:
    """First-port GUIDs of the hosts whose name matches the shell pattern (``gpu00[0-3]*``)."""
    inv = fabric_inventory(fabric)
    hosts = inv.hosts
    names = [str(n) for n in inv.node_name[hosts]]
    regex = re.compile(fnmatch.translate(pattern.strip()))
    hit = np.array([bool(regex.match(n)) for n in names], dtype=bool)
    slots = inv.port_offset[hosts[hit]]
    return [format_guid(int(g)) for g in inv.port_guid[slots]]


def member_nodes(fabric, guids: list[str]) -> list[dict]:
    """Where members sit on the topology: ``{"guid", "node", "kind", "leaf"}`` per GUID (unknown ones skipped)."""
    inv = fabric_inventory(fabric)
    out = []
    for g in guids:
        try:
            n = inv.node(int(g, 16))
        except KeyError:
            continue
        leaf = int(inv.host_leaf[n])
        out.append({"guid": g, "node": str(inv.node_name[n]), "kind": str(inv.kind_label[n]),
                    "leaf": str(inv.node_name[leaf]) if leaf >= 0 else ""})
    return out
