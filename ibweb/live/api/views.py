"""Read-only API of a fabric's live side: link history, rollups, routed paths and the links of jobs.

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/links/<d>/history/?seconds=300     recent series of directed link d and its reverse (ring buffer)
    fabrics/<slug>/links/<d>/rollups/?minutes=60      one-minute rollups of directed link d (database)
    fabrics/<slug>/ports/<node>/<port>/history/       the same for the link leaving a port (node name or GUID)
    fabrics/<slug>/path/?src=<host>&dst=<host>        the routed path, hop by hop, as ibtracert shows it
    fabrics/<slug>/jobs/                              every job of the scenario: tenant, hosts, directed links

The path and the jobs of an emulated fabric come from its scenario
(``Fabric.scenario()``): its fabric, routing and job placement are built once per
process and spec and cached, exactly as the engine builds them (``build_emulator``).
A telemetry-fed fabric routes with what its engine published (OpenSM's LFT dump
or a computed routing on the discovered fabric, :mod:`ibweb.telemetry.routing`)
and has no jobs.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
from django.shortcuts import get_object_or_404
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.emulator import Emulator
from fabric_engine.errors import FabricEngineError, RoutingError
from fabric_engine.formats._common import HCA_SUFFIX
from fabric_engine.routing import Routing
from fabric_engine.scenario import build_emulator
from fabric_engine.topology import KIND_HOST
from fabric_engine.workload import expand_jobs
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.permissions import visible_tenants
from ibweb.telemetry.routing import routing_of

from .. import history
from ..models import LinkRollup

__all__ = ["LinkHistoryView", "LinkRollupsView", "PortHistoryView", "PathView", "JobsView",
           "scenario_model", "job_links", "link_history"]

_MODELS_KEEP = 2
_LOCK = threading.Lock()


@dataclass
class _Model:
    emulator: Emulator
    job_links: list[dict] | None = None


_MODELS: OrderedDict[str, _Model] = OrderedDict()


def _cached(spec: dict) -> _Model:
    key = json.dumps(spec, sort_keys=True)
    with _LOCK:
        if key in _MODELS:
            _MODELS.move_to_end(key)
            return _MODELS[key]
        model = _Model(build_emulator(spec))
        _MODELS[key] = model
        while len(_MODELS) > _MODELS_KEEP:
            _MODELS.popitem(last=False)
        return model


def scenario_model(spec: dict) -> Emulator:
    """The emulator built from ``spec`` (its fabric, routing and placed jobs), cached per process and spec."""
    return _cached(spec).emulator


class _FabricView(APIView):
    """A read-only view of one fabric the user may see."""

    def fabric(self, request, slug: str) -> Fabric:
        return get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)

    def model(self, fabric: Fabric) -> Emulator:
        if fabric.mode != FabricMode.EMULATED or not fabric.spec.get("topology"):
            raise NotFound(f"fabric {fabric.slug} has no scenario to route")
        try:
            return scenario_model(fabric.scenario())
        except FabricEngineError as exc:
            raise ValidationError({"spec": str(exc)}) from exc

    def routing(self, fabric: Fabric) -> Routing:
        """The routing of ``fabric`` (emulated: its scenario's; telemetry-fed: what its engine published)."""
        if fabric.mode != FabricMode.TELEMETRY:
            return self.model(fabric).routing
        routing = routing_of(fabric.pk)
        if routing is None:
            raise NotFound(f"fabric {fabric.slug} has no routing yet: its engine has not loaded a discovery")
        return routing


def _number(request, name: str, default: float, low: float, high: float) -> float:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValidationError({name: f"expected a number, got {raw!r}"}) from None
    if not low <= value <= high:
        raise ValidationError({name: f"{value:g} is outside {low:g}..{high:g}"})
    return value


def _rounded(a: np.ndarray, digits: int) -> list[float]:
    return np.round(a.astype(np.float64), digits).tolist()


def link_history(fabric: Fabric, d: int, seconds: float) -> dict:
    """The history payload of directed link ``d`` and its reverse over the last ``seconds``."""
    idx = history.index(fabric.pk)
    n = idx["n"] if idx else None
    if n is not None and not 0 <= d < n:
        raise NotFound(f"link {d} is outside 0..{n - 1}")
    newest = idx["t"][-1] if idx and idx["t"] else time.time()
    reverse = (d + n // 2) % n if n else None
    links = [d] if reverse is None else [d, reverse]
    s = history.series(fabric.pk, links, after=newest - seconds)
    out = {"fabric": fabric.slug, "link": d, "reverse": reverse, "seconds": seconds,
           "seq": s.seq.tolist(), "t": np.round(s.t, 3).tolist(),
           "rate": _rounded(s.rate[:, 0], 3), "util": _rounded(s.util[:, 0], 5)}
    if reverse is not None:
        out["reverse_rate"] = _rounded(s.rate[:, 1], 3)
        out["reverse_util"] = _rounded(s.util[:, 1], 5)
    return out


class LinkHistoryView(_FabricView):
    """Recent series (rate in Gb/s, utilization) of a directed link and of its reverse, from the ring buffer."""

    def get(self, request, slug: str, link: int):
        seconds = _number(request, "seconds", 300.0, 1.0, 86400.0)
        return Response(link_history(self.fabric(request, slug), link, seconds))


class PortHistoryView(_FabricView):
    """Recent series of the directed link leaving a port (``node``: name or ``0x`` GUID) and of the one entering it."""

    def get(self, request, slug: str, node: str, port: int):
        fabric = self.fabric(request, slug)
        seconds = _number(request, "seconds", 300.0, 1.0, 86400.0)
        f = self.routing(fabric).fabric
        try:
            i = f.node(int(node, 16) if node.lower().startswith("0x") else node)
        except (KeyError, ValueError):
            raise NotFound(f"no node {node!r} in fabric {fabric.slug}") from None
        if not 1 <= port <= int(f.nports[i]) or f.out_link(i, port) < 0:
            raise NotFound(f"port {port} of {node} is not cabled")
        return Response({**link_history(fabric, f.out_link(i, port), seconds), "node": str(f.node_name[i]),
                         "port": port})


class LinkRollupsView(_FabricView):
    """One-minute rollups of a directed link (``link=-1``: the fabric-wide rows); idle minutes read as zero."""

    def get(self, request, slug: str, link: int):
        fabric = self.fabric(request, slug)
        minutes = _number(request, "minutes", 60.0, 1.0, 7 * 24 * 60.0)
        since = datetime.now(tz=UTC) - timedelta(minutes=minutes)
        base = LinkRollup.objects.filter(fabric=fabric, minute__gte=since)
        marks = dict(base.filter(link=-1).values_list("minute", "samples"))
        rows = {r[0]: r[1:] for r in base.filter(link=link).values_list("minute", "mean_util", "max_util",
                                                                          "mean_rate_gbps")}
        order = sorted(marks)
        zero = (0.0, 0.0, 0.0)
        return Response({"fabric": fabric.slug, "link": link, "minute": [m.isoformat() for m in order],
                         "samples": [marks[m] for m in order],
                         "mean_util": [round(rows.get(m, zero)[0], 5) for m in order],
                         "max_util": [round(rows.get(m, zero)[1], 5) for m in order],
                         "mean_rate_gbps": [round(rows.get(m, zero)[2], 3) for m in order]})


class PathView(_FabricView):
    """The routed path from host ``src`` to host ``dst`` (names or node indices), hop by hop."""

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        routing = self.routing(fabric)
        f = routing.fabric
        ends = []
        for name in ("src", "dst"):
            raw = request.query_params.get(name, "")
            if not raw:
                raise ValidationError({name: "required: a host name or node index"})
            i = int(raw) if raw.isdigit() else _host_by_name(f, raw, name, fabric.slug)
            if not (0 <= i < f.num_nodes and f.kind[i] == KIND_HOST):
                raise ValidationError({name: f"{raw!r} is not a host of fabric {fabric.slug}"})
            ends.append(i)
        try:
            hops = routing.trace(ends[0], ends[1])
        except RoutingError as exc:
            return Response({"detail": str(exc), "src": ends[0], "dst": ends[1], "hops": [], "links": []}, status=409)
        return Response({"fabric": fabric.slug, "src": ends[0], "dst": ends[1], "hops": hops,
                         "links": [h["link"] for h in hops if h["link"] is not None], "routing": routing.engine})


def _host_by_name(f, raw: str, field: str, slug: str) -> int:
    """Node index of ``raw``; a discovered host is also found without its ``HCA-1``/``mlx5_0`` suffix."""
    try:
        return f.node(raw)
    except KeyError:
        pass
    hosts = f.hosts
    short = np.array([HCA_SUFFIX.sub("", str(n)) for n in f.node_name[hosts]], dtype=object)  # only on a miss
    hit = hosts[short == raw]
    if len(hit) == 1:
        return int(hit[0])
    if len(hit) > 1:
        names = ", ".join(str(f.node_name[h]) for h in hit[:4])
        raise ValidationError({field: f"{raw!r} has several HCAs in fabric {slug}: say which ({names})"})
    raise ValidationError({field: f"no node {raw!r} in fabric {slug}"})


class JobsView(_FabricView):
    """The scenario's jobs: name, tenant, pattern, host node indices and the directed links their flows cross.

    A telemetry-fed fabric has no scheduler feed, so its list is empty.
    """

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        if fabric.mode == FabricMode.TELEMETRY:
            return Response({"fabric": fabric.slug, "jobs": []})
        self.model(fabric)  # raises for a fabric without a scenario
        cached = _cached(fabric.scenario())
        if cached.job_links is None:
            cached.job_links = job_links(cached.emulator)
        tenants = visible_tenants(request.user)
        jobs = [j for j in cached.job_links if tenants is None or j["tenant"] in tenants]
        return Response({"fabric": fabric.slug, "jobs": jobs})


def job_links(model: Emulator) -> list[dict]:
    """Per job of ``model``: ``{"id", "tenant", "pattern", "hosts": [node], "links": [directed link]}``."""
    jf = expand_jobs(model.jobs, model.fabric, model.paths)
    inc = jf.incidence.tocsr()
    out = []
    for k, job in enumerate(model.jobs):  # loop over jobs; each is one slice of the incidence
        block = inc[jf.offsets[k]:jf.offsets[k + 1]]
        links = np.unique(block.indices[block.data > 0])
        out.append({"id": job.name, "tenant": job.tenant, "pattern": job.pattern,
                    "hosts": np.asarray(job.hosts).tolist(), "links": links.tolist()})
    return out


