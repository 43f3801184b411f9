"""Switches with a large share of their cabled ports unhealthy: the ASIC (or its board) suspected.

Bad cables are spread over the fabric; when one switch has, say, half its cabled ports graded warning or
worse at once, the common part is the switch. The share and the least number of ports are settings.
Vectorized per switch with ``np.bincount`` over port slots.
"""

from __future__ import annotations

import numpy as np

from ..health.grade import GRADES
from ..health.grade import WARNING as GRADE_WARNING
from ..topology import KIND_SWITCH, Fabric
from .findings import ERROR, Finding
from .names import port_name

__all__ = ["check_asic", "CHECK"]

CHECK = "asic_suspected"


def check_asic(fabric: Fabric, port_grade: np.ndarray, *, share: float = 0.5, min_ports: int = 4,
               grade: int = GRADE_WARNING, most: int = 16) -> list[Finding]:
    """A finding per switch with at least ``share`` of its cabled ports (and at least ``min_ports`` of them)
    graded ``grade`` or worse (``port_grade``: :func:`.ports.port_grades`)."""
    if not 0 < share <= 1:
        raise ValueError(f"share {share}: expected a fraction in (0, 1]")
    cabled = fabric.port_out_link >= 0
    on_switch = fabric.kind[fabric.port_node] == KIND_SWITCH
    bad = cabled & on_switch & (port_grade >= grade)
    n = fabric.num_nodes
    total = np.bincount(fabric.port_node[cabled & on_switch], minlength=n)
    unhealthy = np.bincount(fabric.port_node[bad], minlength=n)
    hit = np.flatnonzero((unhealthy >= min_ports) & (unhealthy >= share * np.maximum(total, 1)) & (total > 0))
    out = []
    for s in hit.tolist():  # the suspected switches only
        lo = int(fabric.port_offset[s])
        slots = lo + np.flatnonzero(bad[lo:lo + int(fabric.nports[s])])
        ports = [port_name(fabric, s, int(fabric.port_num[x])) for x in slots[:most].tolist()]
        frac = unhealthy[s] / total[s]
        out.append(Finding(CHECK, ERROR, str(fabric.node_name[s]),
                           f"{fabric.node_name[s]}: {unhealthy[s]} of its {total[s]} cabled ports graded "
                           f"{GRADES[grade + 1]} or worse ({frac:.0%}): the switch ASIC is suspected",
                           {"cabled_ports": int(total[s]), "unhealthy_ports": int(unhealthy[s]),
                            "share": round(float(frac), 4), "threshold": share, "ports": ports}))
    return out
