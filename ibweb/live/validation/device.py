"""A switch's device panel: its vitals as its collectors read them (``ibswinfo``, ibdiagnet's temperature sensing:
fans with their rpm, power supplies with their DC state and watts, temperatures against their thresholds,
firmware, PSID, uptime), ibdiagnet's node record of it, and the validation findings about it. Switches are
fabric-wide: every view that may see the fabric reads them."""

from __future__ import annotations

from dataclasses import asdict

from fabric_engine.topology import KIND_SWITCH

__all__ = ["device_panel", "NotASwitch"]


class NotASwitch(ValueError):
    """The node asked for is a host adapter: device panels are of switches."""


def _mine(records, guid: int, name: str) -> list:
    """The records of one device: by its node GUID, else by its name where the record names no GUID."""
    return [r for r in records or () if (r.guid == guid) or (r.guid is None and r.name == name)]


def device_panel(fabric, node: int, readings, findings: list[dict] | None) -> dict:
    """The panel of switch ``node`` of ``fabric``: ``{"node", "guid", "lid", "ports", "vitals": [...], "node_info":
    [...], "read_at", "findings": [...]}``. ``readings``: the fabric's
    :class:`fabric_engine.devices.DeviceReadings` (None: none read); ``findings``: the shown report's findings
    (None: no report), those naming ``node`` kept."""
    if fabric.kind[node] != KIND_SWITCH:
        raise NotASwitch(f"{fabric.node_name[node]} is not a switch: device panels are of switches")
    guid, name = int(fabric.guid[node]), str(fabric.node_name[node])
    vitals = []
    for v in _mine(getattr(readings, "vitals", None), guid, name):  # a record or two per switch
        d = asdict(v)
        d["guid"] = None if v.guid is None else f"0x{v.guid:016x}"
        d["fans_failed"] = sum(not f.ok or f.rpm == 0 for f in v.fans)
        d["psus_failed"] = sum(not p.ok or p.dc_ok is False for p in v.psus)
        d["temperatures_over"] = sum(t.celsius is not None and t.warning is not None and t.celsius >= t.warning
                                     for t in v.temperatures)
        vitals.append(d)
    info = [{**asdict(n), "guid": f"0x{n.guid:016x}"} for n in _mine(getattr(readings, "nodes_info", None), guid, name)]
    mine = [f for f in findings or () if node in (f.get("nodes") or ())]
    return {"node": name, "guid": f"0x{guid:016x}", "lid": int(fabric.lid[node]), "ports": int(fabric.nports[node]),
            "vitals": vitals, "node_info": info, "read_at": dict(getattr(readings, "read_at", None) or {}),
            "findings": mine}
