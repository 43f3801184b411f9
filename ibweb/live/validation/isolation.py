"""The isolation advice joined with the live what-if: per advised port, the running jobs whose routes cross its cable
now (the runtime record's job catalog) and what cutting the cable does to them (the fabric's cable what-if, an
analysis: ``whatif_links`` on an emulated fabric, ``whatif_live`` on a telemetry-fed one, with ``failed_cables``
the advised cable), with the request that starts that what-if when none ran yet; the same for all the advised
ports at once. Nothing is executed: the ``ibportstate`` commands are the operator's to run, and a what-if only
reroutes a copy of the fabric.

Jobs are tenant data: a view reads only its tenants' jobs (:meth:`ibweb.access.Redaction.shows_job`), the others
counted (``other_jobs``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ibweb.access import Redaction
from ibweb.fabrics.analyses import AnalysisKind, AnalysisStatus
from ibweb.fabrics.models import Analysis

__all__ = ["jobs_on_cables", "whatif_kind", "joined", "WHATIF_KINDS"]

WHATIF_KINDS = (AnalysisKind.WHATIF_LINKS, AnalysisKind.WHATIF_LIVE)
#: Newest what-ifs looked through for the advised cables.
_RECENT = 200


def jobs_on_cables(catalog: Sequence[dict] | None, cables: np.ndarray, num_links: int) -> list[list[dict]]:
    """Per cable of ``cables``, the jobs of ``catalog`` (``{"id", "tenant", "links": [directed link]}``) whose routes
    cross it in either direction: ``[{"id", "tenant"}]`` each (a loop over jobs, vectorized over their links)."""
    cables = np.asarray(cables, np.int64)
    out: list[list[dict]] = [[] for _ in range(cables.size)]
    if not cables.size:
        return out
    for entry in catalog or ():  # one pass per job
        d = np.asarray(entry.get("links") or [], np.int64)
        d = d[(d >= 0) & (d < 2 * num_links)] % max(num_links, 1)
        for k in np.flatnonzero(np.isin(cables, d)).tolist():  # the advised cables it crosses
            out[k].append({"id": str(entry.get("id")), "tenant": entry.get("tenant")})
    return out


def whatif_kind(row) -> str:
    """The what-if that cuts cables on ``row``: the live one (today's jobs) on a telemetry-fed fabric."""
    return AnalysisKind.WHATIF_LIVE if row.mode == "telemetry" else AnalysisKind.WHATIF_LINKS


def _whatif(a: Analysis | None, slug: str, shown: Redaction) -> dict | None:
    """A what-if analysis as the advice shows it: its status and, done, each shown job's ratio of communication
    time (None: the job cannot run) and the counts."""
    if a is None:
        return None
    out = {"id": a.pk, "status": a.status, "created": a.created.timestamp(),
           "url": f"/api/fabrics/fabrics/{slug}/analyses/{a.pk}/"}
    if a.status == AnalysisStatus.DONE and isinstance(a.result, dict):
        delta = shown.jobs(a.result.get("delta") or [])
        s = a.result.get("summary") or {}
        out.update(jobs=[{"id": d.get("id"), "tenant": d.get("tenant"), "comm_ratio": d.get("comm_ratio")}
                         for d in delta],
                   summary={k: s.get(k) for k in ("jobs", "jobs_slower", "jobs_faster", "jobs_broken")})
    elif a.status == AnalysisStatus.FAILED:
        out["error"] = a.error
    return out


def joined(iso: dict | None, row, fabric, catalog: Sequence[dict] | None, shown: Redaction) -> dict | None:
    """``iso`` (the shown advice, :func:`ibweb.live.validation.shown.shown_report`'s ``isolation``) with, per advised
    port, ``jobs`` on its cable (shown ones), ``other_jobs``, ``whatif`` (the newest what-if cutting exactly that
    cable, or None) and ``whatif_request`` (``{"kind", "params"}`` for the analyses API); and ``whatif_all``,
    ``whatif_all_request`` for every advised cable at once."""
    if iso is None:
        return None
    advised = iso["advised"]
    cables = np.array([a["cable"] for a in advised], np.int64)
    on = jobs_on_cables(catalog, cables, fabric.num_links)
    kind = whatif_kind(row)
    extra = {"ebb_patterns": 0} if kind == AnalysisKind.WHATIF_LINKS else {}  # the jobs only: no eBB per side
    recent = list(Analysis.objects.filter(fabric=row, kind__in=WHATIF_KINDS).order_by("-created")[:_RECENT])
    by_cables: dict[tuple[int, ...], Analysis] = {}
    for a in recent:  # the newest first: the first seen per cable set wins
        failed = (a.params or {}).get("failed_cables") or []
        if not (a.params or {}).get("failed_switches") and not (a.params or {}).get("engine"):
            by_cables.setdefault(tuple(sorted(int(c) for c in failed)), a)
    out = []
    for a, jobs in zip(advised, on, strict=True):  # the advised ports (at most the cap)
        mine = shown.jobs(jobs)
        out.append({**a, "jobs": mine, "other_jobs": len(jobs) - len(mine),
                    "whatif": _whatif(by_cables.get((a["cable"],)), row.slug, shown),
                    "whatif_request": {"kind": kind, "params": {"failed_cables": [a["cable"]], **extra}}})
    every = sorted({a["cable"] for a in advised})
    every_run = _whatif(by_cables.get(tuple(every)), row.slug, shown) if every else None
    every_ask = {"kind": kind, "params": {"failed_cables": every, **extra}} if every else None
    return {**iso, "advised": out, "whatif_all": every_run, "whatif_all_request": every_ask}
