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
#: Joins kept per (fabric id, record version, report t, advised cables, newest what-if id), this process.
_MEMO: dict[tuple, tuple[list[list[dict]], dict[tuple[int, ...], int]]] = {}
_MEMO_MAX = 64
#: What a view below ``ALL`` reads for a failed what-if's error.
_ERROR_BELOW_ALL = "the what-if failed (the details are shown to operators)"


def jobs_on_cables(catalog: Sequence[dict] | None, cables: np.ndarray, num_links: int) -> list[list[dict]]:
    """Per cable of ``cables``, the jobs of ``catalog`` (``{"id", "tenant", "links": [directed link]}``) whose routes
    cross it in either direction: ``[{"id", "tenant"}]`` each, in catalog order. One ``[L]`` table of the advised
    cables and one join of every job's links with it (numpy); Python touches only the (job, cable) hits."""
    cables = np.asarray(cables, np.int64)
    out: list[list[dict]] = [[] for _ in range(cables.size)]
    jobs = list(catalog or ())
    L = max(int(num_links), 1)
    if not cables.size or not jobs:
        return out
    uniq, inverse = np.unique(cables, return_inverse=True)
    place = np.full(L, -1, np.int64)  # [L]: the advised cable's place in ``uniq``, -1 for the others
    inside = (uniq >= 0) & (uniq < L)
    place[uniq[inside]] = np.flatnonzero(inside)
    links = [np.asarray(e.get("links") or (), np.int64).ravel() for e in jobs]  # one array per job, no loop per link
    d = np.concatenate(links)
    job = np.repeat(np.arange(len(jobs), dtype=np.int64), [x.size for x in links])
    ok = (d >= 0) & (d < 2 * L)
    k = place[d[ok] % L]
    hit = k >= 0
    pairs = np.unique(job[ok][hit] * uniq.size + k[hit])  # (job, cable) once each, jobs in catalog order
    at = [np.flatnonzero(inverse == u).tolist() for u in range(uniq.size)]  # the advised ports of each cable
    for j, u in zip((pairs // uniq.size).tolist(), (pairs % uniq.size).tolist(), strict=True):  # the hits only
        entry = {"id": str(jobs[j].get("id")), "tenant": jobs[j].get("tenant")}
        for i in at[u]:
            out[i].append(entry)
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
    elif a.status == AnalysisStatus.FAILED:  # its text may name any node or tenant: operators only
        out["error"] = a.error if shown.shows_all else _ERROR_BELOW_ALL
    return out


def _whatif_ids(whatifs) -> dict[tuple[int, ...], int]:
    """Per set of cut cables, the newest what-if of :data:`_RECENT` that cuts exactly those (ids and params only)."""
    out: dict[tuple[int, ...], int] = {}
    for pk, params in whatifs.order_by("-created", "-pk").values_list("pk", "params")[:_RECENT]:  # newest first
        params = params or {}
        if not params.get("failed_switches") and not params.get("engine"):
            out.setdefault(tuple(sorted(int(c) for c in params.get("failed_cables") or [])), pk)
    return out


def joined(iso: dict | None, row, fabric, catalog: Sequence[dict] | None, shown: Redaction,
           key: tuple | None = None) -> dict | None:
    """``iso`` (the shown advice, :func:`ibweb.live.validation.shown.shown_report`'s ``isolation``) with, per advised
    port, ``jobs`` on its cable (shown ones), ``other_jobs``, ``whatif`` (the newest what-if cutting exactly that
    cable, or None) and ``whatif_request`` (``{"kind", "params"}`` for the analyses API); and ``whatif_all``,
    ``whatif_all_request`` for every advised cable at once. ``key``: ``(fabric id, record version, report t)``, under
    which the jobs on the cables and which what-if is each cable's are kept (until a what-if is added); each
    what-if's status is read fresh."""
    if iso is None:
        return None
    advised = iso["advised"]
    cables = np.array([a["cable"] for a in advised], np.int64)
    kind = whatif_kind(row)
    extra = {"ebb_patterns": 0} if kind == AnalysisKind.WHATIF_LINKS else {}  # the jobs only: no eBB per side
    whatifs = Analysis.objects.filter(fabric=row, kind__in=WHATIF_KINDS)
    newest = whatifs.order_by("-pk").values_list("pk", flat=True).first()
    memo = None if key is None else (*key, tuple(cables.tolist()), newest)
    kept = _MEMO.get(memo) if memo is not None else None
    if kept is None:
        on = jobs_on_cables(catalog, cables, fabric.num_links)
        kept = (on, _whatif_ids(whatifs))
        if memo is not None:
            _MEMO[memo] = kept
            while len(_MEMO) > _MEMO_MAX:  # the oldest first
                _MEMO.pop(next(iter(_MEMO)))
    on, ids = kept
    every = sorted({a["cable"] for a in advised})
    wanted = {c: ids[c] for c in {*((a["cable"],) for a in advised), tuple(every)} if c in ids}
    rows = Analysis.objects.in_bulk(set(wanted.values()))  # the few what-ifs of the advised cables, read fresh
    by_cables = {c: rows[i] for c, i in wanted.items() if i in rows}
    out = []
    for a, jobs in zip(advised, on, strict=True):  # the advised ports (at most the cap)
        mine = shown.jobs(jobs)
        out.append({**a, "jobs": mine, "other_jobs": len(jobs) - len(mine),
                    "whatif": _whatif(by_cables.get((a["cable"],)), row.slug, shown),
                    "whatif_request": {"kind": kind, "params": {"failed_cables": [a["cable"]], **extra}}})
    every_run = _whatif(by_cables.get(tuple(every)), row.slug, shown) if every else None
    every_ask = {"kind": kind, "params": {"failed_cables": every, **extra}} if every else None
    return {**iso, "advised": out, "whatif_all": every_run, "whatif_all_request": every_ask}
