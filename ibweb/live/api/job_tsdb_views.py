"""A job's links over its run, from the per-port history (issue 40):
``GET /api/fabrics/fabrics/<slug>/jobs/<job>/tsdb/``.

The job is one of the fabric's record catalog (running: emulated scenarios' jobs, the twin's jobs from Slurm or
pushed) or one the fabric's leader noted while it ran (:mod:`ibweb.live.history.job_runs`, kept as long as the
per-port history). Its links are the out ports of the directed links its flows cross, over the run (the union of
what was noted and, while it runs, the catalog's). Query: ``series`` (default ``utilization``), ``start`` and
``end`` (default: the run, first seen to one store interval past the last seen, as the window is ``[start, end)``;
now while it runs), ``points`` (default 200), ``n`` (default 50): the ``n`` links highest in the series over the
window (ranked on one bin per port, at most :data:`MAX_JOB_PORTS` of them), each with its series in ``points`` bins
(read for those ``n`` only). A job of a tenant the user may not see, or a running job whose stored run is another
tenant's (a reused name not noted yet), is answered as no such job (404), and the 404 names neither job nor tenant.
An ended job's run is answered without a published record (its links then by GUID alone).
"""

from __future__ import annotations

import time

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from ibweb.access import job_tenants, node_name, redaction, view_of
from ibweb.live.api.base import FabricView, query_number
from ibweb.live.api.tsdb_views import MAX_WINDOW_S, ask, nodes_of, peer_of, values_of
from ibweb.live.history.job_runs import catalog_ports, job_runs
from ibweb.runtime import record
from ibweb.tsdb.open import store
from ibweb.tsdb.series import PORT_ID, SERIES, series_of

__all__ = ["MAX_JOB_PORTS", "JobTsdbView", "over_window"]

#: Ports of one job ranked at most (the first in :data:`~ibweb.tsdb.series.PORT_ID` order beyond it): ranking reads
#: one bin per port, 8 bytes each, so a job crossing every port of a large fabric stays about 1 MB and a short hold
#: of the store's lock; ``count`` still says how many ports the job used.
MAX_JOB_PORTS = 1 << 17


def _store_interval() -> float:
    """Seconds between two writes of the per-port history (one bin of it)."""
    from django.conf import settings

    return float(settings.IBWEB_TSDB_INTERVAL_S)


def over_window(values: np.ndarray, agg: str) -> np.ndarray:
    """Each row of chart bins ``values`` ``[P, points]`` reduced by ``agg`` over its bins with a value (the mean of
    the bins for ``mean``), NaN for a row without any."""
    seen = ~np.isnan(values)
    count = seen.sum(axis=1)
    if agg == "max":
        out = np.where(seen, values, -np.inf).max(axis=1, initial=-np.inf)
    elif agg == "min":
        out = np.where(seen, values, np.inf).min(axis=1, initial=np.inf)
    else:
        out = np.where(seen, values, 0.0).sum(axis=1) / np.maximum(count, 1)
    return np.where(count > 0, out, np.nan)


@extend_schema(responses=OpenApiTypes.OBJECT)
class JobTsdbView(FabricView):
    """The links a job's traffic used over its run with their series: ``links``: ``{"node", "guid", "port", "peer",
    "value", "values"}`` ranked by ``value`` (the series over the window), ``count``: links the job used in all,
    ``running``, ``first`` and ``last`` seen (s, null when only running and never noted)."""

    def get(self, request, slug: str, job: str):
        name = request.query_params.get("series", "utilization")
        if name not in SERIES:
            raise ValidationError({"series": f"unknown series {name!r}; known: {', '.join(sorted(SERIES))}"})
        points = int(query_number(request, "points", 200, 1, 4000))
        n = int(query_number(request, "n", 50, 1, 1000))
        fabric = self.fabric(request, slug)
        run = job_runs().get(fabric.pk, job)
        h = record.head_of(fabric) if run is not None else self.head(fabric)  # an ended run needs no record
        f = record.fabric(fabric.pk, h) if h is not None else None
        if h is not None and f is None and run is None:
            f = self.engine_fabric(fabric)  # 503: the record is being replaced
        entry = next((j for j in record.jobs(fabric.pk, h) or [] if str(j["id"]) == job), None) if h else None
        tenant = str(entry.get("tenant") or "") if entry is not None else run.tenant if run is not None else None
        if entry is not None and run is not None and run.tenant != tenant:
            raise NotFound("no such job on this fabric")  # a reused name: the run noted is another tenant's job
        tenants = job_tenants(view_of(request.user))
        if tenant is None or (tenants is not None and tenant not in tenants):
            raise NotFound("no such job on this fabric")  # its name is not repeated: it may be another tenant's
        ports = np.empty(0, dtype=PORT_ID)
        if run is not None:
            ports = run.ports
        if entry is not None and f is not None:
            ports = np.union1d(ports, catalog_ports(f, entry.get("links", ())))
        now = time.time()
        first = run.first if run is not None else now - 3600.0
        last = now if entry is not None else run.last + _store_interval()  # [start, end): the last sample's bin in
        end = query_number(request, "end", last, 0.0, now + 86400.0)
        start = query_number(request, "start", min(first, end - 1.0), 0.0, now + 86400.0)
        if not 0 < end - start <= MAX_WINDOW_S:
            raise ValidationError({"start": f"window {start:g}..{end:g}: end must be after start, at most "
                                            f"{MAX_WINDOW_S / 86400:g} days"})
        s = series_of(name)
        considered = ports[:MAX_JOB_PORTS]
        whole = ask(lambda: store().ranges(fabric.pk, considered, name, start, end, 1))  # one bin per port: rank
        value = whole.values[:, 0]
        key = -value if s.agg != "min" else value
        order = np.lexsort((considered["port"], considered["guid"], np.where(np.isnan(key), np.inf, key)))[:n]
        got = ask(lambda: store().ranges(fabric.pk, considered[order], name, start, end, points))
        value = value[order]
        view = view_of(request.user)
        if f is None:  # no record published: the ports by GUID alone, shown to who sees every host only
            links = [{"node": None, "guid": f"0x{int(g):016x}" if view.sees_all else "hidden", "port": int(p),
                      "peer": None, "value": None if np.isnan(v) else float(v), "values": values_of(row)}
                     for g, p, v, row in zip(got.ports["guid"].tolist(), got.ports["port"].tolist(), value.tolist(),
                                             got.values, strict=True)]  # at most n (<= 1000) links
        else:
            hidden = redaction(view, fabric, f).hidden_nodes(f)
            nodes = nodes_of(f, got.ports["guid"])
            links = []
            for k, i in enumerate(nodes.tolist()):  # at most n (<= 1000) links
                p = int(got.ports["port"][k])
                shown = i >= 0 and not hidden[i]
                links.append({"node": node_name(f, i, hidden) if i >= 0 else None,
                              "guid": f"0x{int(got.ports['guid'][k]):016x}" if shown else "hidden",
                              "port": p, "peer": peer_of(f, i, p, hidden) if i >= 0 else None,
                              "value": None if np.isnan(value[k]) else float(value[k]),
                              "values": values_of(got.values[k])})
        return Response({"fabric": fabric.slug, "job": job, "tenant": tenant, "running": entry is not None,
                         "first": run.first if run is not None else None, "last": run.last if run is not None else None,
                         "series": name, "unit": s.unit, "agg": s.agg, "start": start, "end": end,
                         "t": np.round(got.t, 3).tolist(), "count": int(len(ports)), "links": links})
