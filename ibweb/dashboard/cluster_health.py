"""The Health page of a cluster: the worst ports of all its fabrics (planes) ranked together with their evidence.

Each fabric's report is its own (:mod:`ibweb.live.health.report`, graded by its leader whichever process that is),
as the viewer may see it (:func:`ibweb.live.health.shown.report_for`: hosts the viewer may not name read as
``host-<index>``); only the fabrics the viewer may open count (:func:`ibweb.access.visible_fabrics`). The worst
ports are merged by grade, then raw BER (the order each report ranks its own by), at most
:data:`~ibweb.live.health.report.WORST`; each keeps its plane, a link to the plane's Health page at the port and
to the port's cable on the plane's map.
"""

from __future__ import annotations

from ibweb.access import View
from ibweb.fabrics.models import Cluster
from ibweb.live.health.report import WORST
from ibweb.live.health.shown import report_for
from ibweb.runtime import record

from .cluster import _fabrics

__all__ = ["port_anchor", "cluster_health"]

_RANK = {"error": 2, "warning": 1, "normal": 0, "unknown": -1}
_SUMMED = ("ports", "modules", "module_alarms", "module_warnings", "links_down")


def port_anchor(node: str, port: int) -> str:
    """The id of a port's row on a fabric's Health page."""
    return "port-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{node}-{port}")


def _map_link(fabric, entry: dict, topology) -> str | None:
    """The plane's map focused on the cable of ``entry``'s port (None: not on the fabric now)."""
    i = entry.get("node_index", -1)
    if topology is None or i is None or not 0 <= i < topology.num_nodes or \
            not 1 <= entry["port"] <= int(topology.nports[i]):
        return None
    d = int(topology.out_link(i, entry["port"]))
    return f"/fabrics/{fabric.slug}/?focus=link:{d}" if d >= 0 else None


def cluster_health(view: View, user, cluster: Cluster, worst: int = WORST) -> dict:
    """The cluster page's health: ``planes`` (per fabric the viewer may open: its slug, name, role, rail, graded
    time ``t``, ``summary``, or ``summary`` None without a report), ``summary`` (their counts summed), ``worst``
    (the ports ranked across the fabrics, each with ``plane``, ``health_url`` and ``map_url``)."""
    planes, ranked = [], []
    total = {k: 0 for k in _SUMMED} | {"ber": {"normal": 0, "warning": 0, "error": 0, "unknown": 0},
                                       "grades": {"normal": 0, "warning": 0, "error": 0, "unknown": 0}}
    for order, fabric in enumerate(_fabrics(view, cluster)):
        report = report_for(user, fabric)
        summary = report["summary"] if report else None
        planes.append({"slug": fabric.slug, "name": fabric.name, "role": fabric.cluster_role, "rail": fabric.rail,
                       "t": report.get("t") if report else None, "summary": summary,
                       "health_url": f"/fabrics/{fabric.slug}/health/",
                       "flagged": len(report["worst"]) if report else 0})
        if report is None:
            continue
        for k in _SUMMED:
            total[k] += int(summary.get(k) or 0)
        for part in ("ber", "grades"):
            for g, n in (summary.get(part) or {}).items():
                total[part][g] = total[part].get(g, 0) + int(n)
        h = record.head_of(fabric)
        topology = record.fabric(fabric.pk, h) if h is not None else None
        for rank, e in enumerate(report["worst"]):  # each report lists at most WORST ports
            raw = (e.get("ber") or {}).get("raw")
            ranked.append(((-_RANK.get(e["grade"], -1), -(raw if raw is not None else -1.0), order, rank),
                           {**e, "plane": fabric.slug, "plane_name": fabric.name,
                            "health_url": f"/fabrics/{fabric.slug}/health/#{port_anchor(e['node'], e['port'])}",
                            "map_url": _map_link(fabric, e, topology)}))
    ranked.sort(key=lambda r: r[0])
    graded = [p for p in planes if p["summary"] is not None]
    return {"planes": planes, "summary": total if graded else None, "graded": len(graded),
            "worst": [e for _, e in ranked[:worst]], "flagged": total["grades"]["warning"] + total["grades"]["error"]}
