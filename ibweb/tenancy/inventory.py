"""A fabric's port inventory, for validating partition members.

The engine's :class:`~fabric_engine.topology.Fabric` is rebuilt from the fabric's
topology spec (deterministic) and cached in memory per spec hash, so a spec edit
invalidates it and a hundred member checks cost one build.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import threading
from collections import OrderedDict

import numpy as np
from django.core.exceptions import ValidationError

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats.opensm_partitions import format_guid
from fabric_engine.scenario import build_fabric
from fabric_engine.topology import KIND_HOST, Fabric

__all__ = ["UnknownGuid", "fabric_inventory", "normalize_guid", "check_guids", "hosts_matching", "member_nodes"]

_GUID_RE = re.compile(r"^(0x)?[0-9a-fA-F]{1,16}$")
_CACHE: OrderedDict[str, Fabric] = OrderedDict()
_CACHE_SIZE = 8
_LOCK = threading.Lock()


class UnknownGuid(ValidationError):
    """A GUID that is not a port of the fabric; ``guid`` names it."""

    def __init__(self, message: dict, guid: str) -> None:
        super().__init__(message)
        self.guid = guid


def _spec_hash(topology: dict) -> str:
    return hashlib.sha256(json.dumps(topology, sort_keys=True).encode()).hexdigest()


def fabric_inventory(fabric) -> Fabric:
    """The engine fabric of a :class:`ibweb.fabrics.models.Fabric` row (cached by topology spec hash)."""
    topology = (fabric.spec or {}).get("topology")
    if not topology:
        raise ValidationError(f"fabric {fabric.slug} has no topology, so its port GUIDs cannot be checked")
    key = _spec_hash(topology)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    try:
        built = build_fabric(topology)
    except FabricEngineError as exc:
        raise ValidationError(f"fabric {fabric.slug}: {exc}") from exc
    with _LOCK:
        _CACHE[key] = built
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return built


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


def check_guids(fabric, guids: list[str], field: str = "guids") -> np.ndarray:
    """Node index of every port GUID (already normalized); :class:`ValidationError` names the first unknown one."""
    inv = fabric_inventory(fabric)
    if not guids:
        return np.zeros(0, dtype=np.int64)
    values = np.array([int(g, 16) for g in guids], dtype=np.uint64)
    order = np.argsort(inv.port_guid)
    sorted_guid = inv.port_guid[order]
    pos = np.minimum(np.searchsorted(sorted_guid, values), len(sorted_guid) - 1)
    missing = np.flatnonzero(sorted_guid[pos] != values)
    if missing.size:
        bad = guids[int(missing[0])]
        more = f" (and {missing.size - 1} more)" if missing.size > 1 else ""
        raise UnknownGuid({field: f"GUID {bad} is not a port of fabric {fabric.slug}{more}"}, bad)
    return inv.port_node[order[pos]].astype(np.int64)


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
        out.append({"guid": g, "node": str(inv.node_name[n]), "kind": "host" if inv.kind[n] == KIND_HOST else "switch",
                    "leaf": str(inv.node_name[leaf]) if leaf >= 0 else ""})
    return out
