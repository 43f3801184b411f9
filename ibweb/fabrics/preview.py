"""What a new fabric will be, before it is created: hosts, switches, cables, LIDs, bisection, routing time.

:func:`summary` describes an engine fabric (``fabric_engine.summary.describe``: nodes by
tier and role, cables by rate, bisection as the max flow between the two halves of the
hosts, oversubscription per tier), counts the LIDs it takes of the subnet's 49,151,
and estimates how long its routing engine will take (:mod:`.routing_estimate`).
:func:`topology_errors` turns the engine's and the bounds' messages into form fields.
"""

from __future__ import annotations

import re

import numpy as np

from fabric_engine.summary import describe
from fabric_engine.topology import Fabric
from fabric_engine.topology.limits import MAX_UNICAST_LID

from .routing_estimate import estimate

__all__ = ["summary", "topology_errors", "line_of"]

_FIELD = re.compile(r"^topology\.(\w+): (.*)$", re.S)
_LINE = re.compile(r"^[^\n]*?:(\d+):")


def summary(fabric: Fabric, routing_engine: str) -> dict:
    """JSON-ready preview of ``fabric`` routed by ``routing_engine``."""
    d = describe(fabric)
    lids = int(np.unique(fabric.port_lid[fabric.port_lid > 0]).size)
    return {
        "name": d["name"], "hosts": d["nodes"]["hosts"], "switches": d["nodes"]["switches"],
        "switch_tiers": d["switch_tiers"], "host_roles": d["host_roles"], "cables": d["links"]["total"],
        "cables_by_rate": d["links"]["by_rate"], "host_ports": d["host_ports"],
        "switch_ports_used": d["switch_ports_used"], "switch_ports": d["switch_ports"],
        "lids": lids, "lids_max": MAX_UNICAST_LID, "bisection_gbps": round(d["bisection_gbps"], 1),
        "oversubscription": d["oversubscription"], "sharp": d["sharp"], "chassis": d["chassis"],
        "loopbacks": d["links"]["loopbacks"], "trained_down": d["links"]["trained_down"],
        "host_systems": d["nodes"].get("host_systems"),
        "warnings": d["warnings"],
        "routing": {"engine": routing_engine, "estimate": estimate(routing_engine, fabric.num_switches,
                                                                   fabric.num_nodes)},
    }


def topology_errors(message: str) -> dict[str, str]:
    """``{"<param>": message}`` when the message names a generator parameter (``topology.radix: ...``),
    else ``{"topology": message}``."""
    m = _FIELD.match(message)
    return {m.group(1): m.group(2)} if m else {"topology": message}


def line_of(message: str) -> int | None:
    """The line number a file error names (``fabric.txt:12: ...``), or ``None``."""
    m = _LINE.match(message)
    return int(m.group(1)) if m else None
