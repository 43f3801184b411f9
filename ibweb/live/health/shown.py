"""A link health report as one access view sees it: hosts the view may not name read as ``host-<index>`` with
GUID ``hidden`` (:mod:`ibweb.access.redaction`), a port of no known node as ``hidden node``; switches are
fabric-wide and always shown. Link health is fabric-wide: every view that may see the fabric gets the report; the
jobs a down hit are tenant data: a view reads only its tenants' jobs (:meth:`~ibweb.access.Redaction.shows_job`),
as in events and the twin."""

from __future__ import annotations

import numpy as np

from ibweb.access import HIDDEN, HIDDEN_NODE, Redaction, host_label, redaction, view_of
from ibweb.runtime import health as store

__all__ = ["shown_report", "report_for"]


def _ends(report: dict) -> list[dict]:
    """Every port end the report names (the worst ports, their peers, the swapped cable ends)."""
    out = []
    for e in report.get("worst", []):
        out.append(e)
        if e.get("peer"):
            out.append(e["peer"])
    out.extend(report.get("swaps", []))
    return out


def _downs(downs: dict | None, shown: Redaction) -> dict | None:
    """A port's downs with each episode's jobs kept to those ``shown`` may see."""
    if not downs or shown.tenants is None:
        return downs
    return {**downs, "episodes": [{**ep, "jobs": shown.jobs(ep.get("jobs") or [])}
                                  for ep in downs.get("episodes") or []]}


def shown_report(report: dict, shown: Redaction) -> dict:
    """``report`` (as :mod:`ibweb.runtime.health` keeps it) with the ends ``shown`` hides renamed and the jobs of
    tenants not its own left out (a copy)."""
    if shown.shows_all:
        return report
    out = {**report, "worst": [{**e, "peer": dict(e["peer"]) if e.get("peer") else e.get("peer"),
                                "downs": _downs(e.get("downs"), shown)} for e in report.get("worst", [])],
           "swaps": [dict(s) for s in report.get("swaps", [])]}
    if shown.host_guids is None:
        return out
    ends = _ends(out)
    if not ends:
        return out
    guid = np.array([int(e["guid"], 16) if e.get("guid") else 0 for e in ends], dtype=np.uint64)
    is_host = np.array([e.get("kind") == "host" for e in ends], dtype=bool)
    hidden = shown.hidden_hosts(is_host, guid)
    for e, hide in zip(ends, hidden.tolist(), strict=True):  # the report's few named ends only
        if e.get("kind") is None:  # no node of the fabric: the view cannot tell whose it is
            e.update(node=HIDDEN_NODE, guid=HIDDEN, node_index=-1)
        elif hide:
            e.update(node=host_label(e["node_index"]), guid=HIDDEN)
    return out


def report_for(user, fabric) -> dict | None:
    """The newest report of ``fabric`` (a fabric row ``user`` may see) as ``user`` may see it (None: none yet)."""
    report = store.read(fabric.pk)
    return None if report is None else shown_report(report, redaction(view_of(user), fabric))
