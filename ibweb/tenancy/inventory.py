"""A fabric's port inventory, for validating partition members (writes).

The inventory is the fabric its engine runs on, read from the fabric's runtime record
(:func:`ibweb.runtime.published.published_fabric`): the emulated scenario's fabric, or a
telemetry-fed fabric's discovery. Before any engine published (an emulated fabric saved a
moment ago), a write that checks GUIDs builds the fabric once from the spec and publishes it as
the record's first version, which the engine's own replaces; a telemetry-fed fabric without a
discovery has no inventory yet. Read paths use ``published_fabric`` and never build.
"""

from __future__ import annotations

import fnmatch
import re

import numpy as np
from django.core.exceptions import ValidationError

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats.opensm_partitions import format_guid
from fabric_engine.scenario import build_fabric
from fabric_engine.topology import Fabric
from ibweb.runtime import record
from ibweb.runtime.published import published_fabric, spec_digest, spec_topology

__all__ = ["UnknownGuid", "fabric_inventory", "normalize_guid", "check_guids", "unknown_guids", "hosts_matching"]

_GUID_RE = re.compile(r"^(0[xX])?[0-9a-fA-F]{1,16}$")


class UnknownGuid(ValidationError):
    """A GUID that is not a port of the fabric; ``guid`` names it."""

    def __init__(self, message: dict, guid: str) -> None:
        super().__init__(message)
        self.guid = guid


def fabric_inventory(fabric) -> Fabric:
    """The engine fabric of a :class:`ibweb.fabrics.models.Fabric` row, built and published when none is current.

    For writes (GUID checks) only: it may build a fabric and write a record.
    """
    published = published_fabric(fabric)
    if published is not None:
        return published
    topology = spec_topology(fabric)
    if not topology:
        raise ValidationError(f"fabric {fabric.slug}: its engine has not published the fabric yet (no discovery), "
                              f"so its port GUIDs cannot be checked; try again once it runs")
    try:
        built = build_fabric(topology)
    except FabricEngineError as exc:
        raise ValidationError(f"fabric {fabric.slug}: {exc}") from exc
    # first version, or one derived from a spec edited since; an engine's own record is never replaced
    row = record.row_identity(fabric)
    record.publish(fabric.pk, row, built, None, [], {"source": "spec", "spec": spec_digest(topology)},
                   only_if_absent=record.head_of(fabric) is None)
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


def _guids(guids: list[str]) -> np.ndarray:
    return np.array([int(g, 16) for g in guids], dtype=np.uint64)


def unknown_guids(fabric, guids: list[str]) -> set[str]:
    """The GUIDs (already normalized) among ``guids`` that are not ports of ``fabric``: one inventory read for all."""
    inv = fabric_inventory(fabric)
    if not guids:
        return set()
    _, known = inv.guid_index.slots(_guids(guids))
    return {guids[i] for i in np.flatnonzero(~known)}


def check_guids(fabric, guids: list[str], field: str = "guids") -> np.ndarray:
    """Node index of every port GUID (already normalized); :class:`ValidationError` names the first unknown one."""
    inv = fabric_inventory(fabric)
    if not guids:
        return np.zeros(0, dtype=np.int64)
    nodes, known = inv.guid_index.nodes(_guids(guids))
    missing = np.flatnonzero(~known)
    if missing.size:
        bad = guids[int(missing[0])]
        more = f" (and {missing.size - 1} more)" if missing.size > 1 else ""
        raise UnknownGuid({field: f"GUID {bad} is not a port of fabric {fabric.slug}{more}"}, bad)
    return nodes


def hosts_matching(fabric, pattern: str) -> list[str]:
    """First-port GUIDs of the hosts whose name matches the shell pattern (``gpu00[0-3]*``)."""
    inv = fabric_inventory(fabric)
    hosts = inv.hosts
    names = [str(n) for n in inv.node_name[hosts]]
    regex = re.compile(fnmatch.translate(pattern.strip()))
    hit = np.array([bool(regex.match(n)) for n in names], dtype=bool)
    slots = inv.port_offset[hosts[hit]]
    return [format_guid(int(g)) for g in inv.port_guid[slots]]

