"""A fabric's link health report: one set of readings graded (:mod:`fabric_engine.health.grade`), summed up and
its worst ports ranked with their evidence.

The summary has the fields of ``python -m fabric_engine health --json`` (``ports``, ``ber`` counts by grade,
``window_s``, ``modules``, ``module_alarms``, ``module_warnings``, ``links_down``). A port's overall grade is
the worst of its BER grade, its module (alarm: error, warning: warning) and its downs (down now or a down longer
than the job-killing time in 24 h: error; any other down in 24 h: warning). The worst ports (at most
:data:`WORST`) are ranked by that grade, then by raw BER; each carries its node (name, index, GUID, kind: what
:mod:`.shown` redacts), the cable's other end, BER values and their window, the module's temperature against its
thresholds, the cable inventory and its downs: each down episode with ``jobs``, the jobs on the link when it
went down (``[{"id", "tenant"}]``, what :mod:`.shown` keeps to a view's tenants; empty when none was known).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from fabric_engine.health.downs import DownTracker
from fabric_engine.health.grade import (
    ERROR,
    GRADES,
    NORMAL,
    WARNING,
    grade_ber,
    module_limits,
    module_status,
    worst_raw,
)
from fabric_engine.health.records import HealthRecords
from fabric_engine.health.thresholds import Thresholds
from fabric_engine.topology import KIND_HOST, Fabric

__all__ = ["WORST", "EPISODES", "grade_ports", "port_series", "build_report", "node_indices", "port_end"]

#: Most ports a report ranks.
WORST = 50
#: Most down episodes listed per port (the newest).
EPISODES = 5


# the last fabric's node GUIDs, their sort order and the GUIDs sorted; the last many GUIDs looked up (a copy), on
# which fabric's GUIDs, and their node indices. Each replaced as one tuple: publishers of several fabrics run in
# threads, and a reader takes the tuple once.
_sorted: tuple = (None, None, None)
_last: tuple = (None, None, None)


def node_indices(fabric: Fabric, guid: np.ndarray) -> np.ndarray:
    """Node index of each node GUID in ``fabric`` (-1 where it has no such node); read-only when many were asked.

    A grading looks the same ports up several times (conditions, ``/metrics`` series, trend and inventory): the
    last lookup of many GUIDs is kept and given again for the same GUIDs (one comparison instead of a search)."""
    global _sorted, _last
    guid = np.asarray(guid, np.uint64)
    many = guid.size >= 4096
    last = _last
    if many and last[1] is fabric.guid and last[0].shape == guid.shape and np.array_equal(last[0], guid):
        return last[2]
    sort = _sorted
    if sort[0] is not fabric.guid:  # sorted once per fabric (a grading looks nodes up several times)
        order = np.argsort(fabric.guid, kind="stable")
        sort = _sorted = (fabric.guid, order, np.asarray(fabric.guid, np.uint64)[order])
    _, order, known = sort
    if not known.size:
        return np.full(guid.size, -1, np.int64)
    pos = np.minimum(np.searchsorted(known, guid), known.size - 1)
    out = np.where(known[pos] == guid, order[pos], -1).astype(np.int64)
    if many:
        out.flags.writeable = False  # given again to the next caller: nobody's to change
        _last = (guid.copy(), fabric.guid, out)
    return out


def port_end(fabric: Fabric, node: int, port: int) -> dict:
    """One port as a report names it: ``node`` (name), ``node_index``, ``guid``, ``port``, ``kind``."""
    if node < 0:
        return {"node": None, "node_index": -1, "guid": None, "port": int(port), "kind": None}
    return {"node": str(fabric.node_name[node]), "node_index": int(node), "guid": f"0x{int(fabric.guid[node]):016x}",
            "port": int(port), "kind": "host" if int(fabric.kind[node]) == KIND_HOST else "switch"}


def _peer(fabric: Fabric, node: int, port: int) -> dict | None:
    """The other end of the cable at ``port`` of ``node`` (None: unknown node, no such port or no cable)."""
    if node < 0 or not 1 <= port <= int(fabric.nports[node]):
        return None
    d = fabric.out_link(node, port)
    if d < 0:
        return None
    return port_end(fabric, int(fabric.dl_dst[d]), int(fabric.dl_dst_port[d]))


def _num(x) -> float | None:
    """``x`` as JSON takes it: None for a value not known or without bound (NaN, inf)."""
    x = float(x)
    return x if np.isfinite(x) else None


def _counts(grade: np.ndarray) -> dict:
    c = np.bincount(grade.astype(np.int64) + 1, minlength=4)
    return {"normal": int(c[1]), "warning": int(c[2]), "error": int(c[3]), "unknown": int(c[0])}


def _episodes(e: dict, slot: int, jobs_of: Callable[[np.ndarray], list[list[dict]]] | None) -> list[dict]:
    rows = np.flatnonzero(e["slot"] == slot)
    rows = rows[np.argsort(-e["start_hi"][rows], kind="stable")][:EPISODES]
    jobs = jobs_of(e["tag"][rows]) if jobs_of is not None else [[] for _ in range(rows.size)]
    return [{"start": _num(e["start_hi"][i]), "end": _num(e["end_hi"][i]), "open": bool(e["open"][i]),
             "duration_s": _num(e["duration"][i]), "duration_min_s": _num(e["duration_lo"][i]),
             "duration_max_s": _num(e["duration_hi"][i]), "downs": int(e["downs"][i]),
             "critical": bool(e["critical"][i]), "jobs": j} for i, j in zip(rows.tolist(), jobs, strict=True)]


def grade_ports(rec: HealthRecords, th: Thresholds, downs: DownTracker | None = None) -> dict[str, np.ndarray]:
    """Per port: ``ber`` (:func:`~fabric_engine.health.grade.grade_ber`), ``module``
    (:func:`~fabric_engine.health.grade.module_status`), ``module_grade``, ``down_grade``, ``overall``, ``raw``
    (the worst lane's raw BER), ``slot`` (the port's in ``downs``, -1: none) and ``status`` (``downs.status()``)."""
    raw = worst_raw(rec)  # the worst lane's raw BER, graded and shown
    g = grade_ber(rec, th, raw)
    m = module_status(rec, th)
    n = len(rec)
    down_grade = np.zeros(n, np.int8)
    slots = np.full(n, -1, np.int64)
    status = None
    if downs is not None and len(downs.slots):
        status = downs.status()
        slots = downs.slots.find(rec.guid.astype(np.uint64), rec.port.astype(np.int64))
        known = slots >= 0
        s = slots[known]
        down_grade[known] = np.where(status["down"][s] | (status["critical_24h"][s] > 0), ERROR,
                                     np.where(status["downs_24h"][s] > 0, WARNING, NORMAL))
    down_grade = np.where(rec["up"] == 0, ERROR, down_grade)
    module_grade = np.where(m["alarm"], ERROR, np.where(m["warning"], WARNING, NORMAL))
    return {"ber": g, "module": m, "module_grade": module_grade, "down_grade": down_grade,
            "overall": np.maximum(np.maximum(g["grade"], module_grade), down_grade).astype(np.int8), "raw": raw,
            "slot": slots, "status": status}


def port_series(rec: HealthRecords, fabric: Fabric, graded: dict) -> dict:
    """Every port of a node of ``fabric``: ``node`` (index), ``port``, ``raw``, ``effective``, ``temp``, ``grade``
    (overall) and ``downs_total`` (int64: the downs seen of the port since the tracker started, 0 for a port it
    never saw down), and the fabric's ``downs_fabric_total`` (every port's, ports gone from the fabric too), for
    ``/metrics`` (:mod:`ibweb.runtime.health`)."""
    nodes = node_indices(fabric, rec.guid)
    keep = nodes >= 0
    status, slots = graded.get("status"), graded.get("slot")
    total = np.zeros(len(rec), np.int64)
    fabric_total = 0
    if status is not None and slots is not None:
        known = slots >= 0
        total[known] = status["downs_total"][slots[known]]
        fabric_total = int(status["downs_total"].sum())
    return {"node": nodes[keep].astype(np.int32), "port": rec.port[keep].astype(np.int16),
            "raw": graded["raw"][keep].astype(np.float64), "effective": rec["eff_ber"][keep].astype(np.float64),
            "temp": rec["temp"][keep].astype(np.float64), "grade": graded["overall"][keep].astype(np.int8),
            "downs_total": total[keep], "downs_fabric_total": fabric_total}


def build_report(rec: HealthRecords, fabric: Fabric, th: Thresholds, downs: DownTracker | None = None,
                 swaps: list[dict] | None = None, t: float | None = None, worst: int = WORST,
                 graded: dict | None = None, jobs_of: Callable[[np.ndarray], list[list[dict]]] | None = None) -> dict:
    """The report of the readings ``rec`` (ports of ``fabric``), with the downs ``downs`` saw and the cable
    ``swaps`` seen (newest last); ``t``: the readings' time; ``graded``: :func:`grade_ports` of them, if done;
    ``jobs_of``: the jobs of episode tags (:meth:`fabric_engine.health.down_jobs.DownJobs.jobs`; none: no jobs)."""
    graded = grade_ports(rec, th, downs) if graded is None else graded
    g, m, overall, raw, slots = graded["ber"], graded["module"], graded["overall"], graded["raw"], graded["slot"]
    mod_grade, down_grade = graded["module_grade"], graded["down_grade"]
    window = g["window_s"][~np.isnan(g["window_s"])]
    summary = {"ports": len(rec), "ber": _counts(g["grade"]),
               "window_s": {"min": float(window.min()), "max": float(window.max())} if window.size else None,
               "modules": int(m["module"].sum()), "module_alarms": int(m["alarm"].sum()),
               "module_warnings": int(m["warning"].sum()), "links_down": int((rec["up"] == 0).sum()),
               "grades": _counts(overall)}
    status = graded["status"]
    episodes = downs.episodes() if status is not None else None
    bad = np.flatnonzero(overall >= WARNING)
    bad = bad[np.lexsort((-np.nan_to_num(raw[bad], nan=-1.0), -overall[bad]))][:worst]
    nodes = node_indices(fabric, rec.guid[bad])
    temp_th = module_limits(rec, th, "temp", bad)  # the worst ports' only
    entries = []
    for k, i in enumerate(bad.tolist()):  # the worst ports only (at most ``worst``)
        node, port, slot = int(nodes[k]), int(rec.port[i]), int(slots[i])
        reasons = []
        if g["grade"][i] >= WARNING:
            reasons.append(f"BER {GRADES[int(g['grade'][i]) + 1]}")
        if mod_grade[i] >= WARNING:
            reasons.append(f"module {'alarm' if m['alarm'][i] else 'warning'}")
        if down_grade[i] >= WARNING:
            reasons.append("down" if rec["up"][i] == 0 else "downs in 24 h")
        end = port_end(fabric, node, port)
        if node < 0:  # a port of no node of the fabric: named as its reader named it
            end.update(node=str(rec.name[i]), guid=f"0x{int(rec.guid[i]):016x}" if rec.guid[i] else None)
        entry = {**end, "grade": GRADES[int(overall[i]) + 1], "reasons": reasons, "peer": _peer(fabric, node, port),
                 "up": bool(rec["up"][i] != 0),
                 "ber": {"grade": GRADES[int(g["grade"][i]) + 1], "raw": _num(raw[i]),
                         "effective": _num(rec["eff_ber"][i]), "symbol": _num(rec["sym_ber"][i]),
                         "raw_grade": GRADES[int(g["raw"][i]) + 1],
                         "effective_grade": GRADES[int(g["effective"][i]) + 1],
                         "symbol_grade": GRADES[int(g["symbol"][i]) + 1], "window_s": _num(g["window_s"][i])},
                 "module": {"present": bool(m["module"][i]),
                            "status": "alarm" if m["alarm"][i] else "warning" if m["warning"][i] else "normal",
                            "temperature_c": _num(rec["temp"][i]), "temperature_warning_c": _num(temp_th[k, 2]),
                            "temperature_alarm_c": _num(temp_th[k, 3]), "voltage_v": _num(rec["voltage"][i])},
                 "cable": {"vendor": str(rec["vendor"][i]), "pn": str(rec["pn"][i]), "sn": str(rec["sn"][i]),
                           "identifier": str(rec["identifier"][i]), "length_m": _num(rec["length_m"][i])},
                 "downs": None}
        if status is not None and slot >= 0:
            entry["downs"] = {"down": bool(status["down"][slot]), "downs_24h": int(status["downs_24h"][slot]),
                              "downs_7d": int(status["downs_7d"][slot]),
                              "downtime_24h_s": float(status["downtime_24h_s"][slot]),
                              "downtime_24h_max_s": float(status["downtime_24h_max_s"][slot]),
                              "critical_24h": int(status["critical_24h"][slot]),
                              "repeated": bool(status["repeated_downs"][slot]),
                              "episodes": _episodes(episodes, slot, jobs_of)}
        entries.append(entry)
    return {"t": t, "summary": summary, "worst": entries, "swaps": list(swaps or []),
            "critical_down_s": downs.config.critical_s if downs is not None else None,
            "thresholds": [Path(f).name for f in th.files]}
