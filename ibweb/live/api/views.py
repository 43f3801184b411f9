"""Read-only API of a fabric's live side: link history, rollups, routed paths and the links of jobs.

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/links/<d>/history/?seconds=300     recent series of directed link d and its reverse (ring buffer)
    fabrics/<slug>/links/<d>/rollups/?minutes=60      one-minute rollups of directed link d (database)
    fabrics/<slug>/ports/<node>/<port>/history/       the same for the link leaving a port (node name or GUID)
    fabrics/<slug>/path/?src=<host>&dst=<host>        the routed path, hop by hop, as ibtracert shows it
    fabrics/<slug>/jobs/                              every job of the catalog: tenant, hosts, directed links
    fabrics/<slug>/routing/                           the routing report (routing_views.py)

Paths, ports and jobs come from the fabric's runtime record (:mod:`ibweb.runtime.record`),
which its engine's leader publishes: the fabric, routing and job catalog the engine runs on,
whatever the kind of fabric (a telemetry-fed one routes with OpenSM's LFT dump or a routing
computed on the discovery). Nothing is built here; before the engine published, these
answer 503.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import numpy as np
from django.shortcuts import get_object_or_404
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.errors import RoutingError
from fabric_engine.formats._common import HCA_SUFFIX
from fabric_engine.routing import Routing
from fabric_engine.topology import KIND_HOST
from fabric_engine.topology import Fabric as EngineFabric
from ibweb.access import host_label, job_tenants, redaction, view_of, visible_fabrics
from ibweb.fabrics.models import Fabric
from ibweb.runtime import record

from .. import history
from ..models import LinkRollup

__all__ = ["LinkHistoryView", "LinkRollupsView", "PortHistoryView", "PathView", "JobsView", "link_history",
           "NotPublished"]


class NotPublished(APIException):
    """The fabric's engine has not published its runtime record (yet): try again in a moment."""

    status_code = 503
    default_code = "not_published"


class _FabricView(APIView):
    """A read-only view of one fabric the user may see."""

    def fabric(self, request, slug: str) -> Fabric:
        return get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)

    def head(self, fabric: Fabric) -> dict:
        """The newest head of ``fabric``'s runtime record; 503 while its engine has not published one."""
        h = record.head(fabric.pk, record.row_identity(fabric))
        if h is None:
            raise NotPublished(f"fabric {fabric.slug}: its engine has not published the fabric yet; try again "
                               f"in a few seconds")
        return h

    def engine_fabric(self, fabric: Fabric) -> EngineFabric:
        """The fabric ``fabric``'s engine runs on (emulated: its scenario's; telemetry-fed: the discovery)."""
        f = record.fabric(fabric.pk, self.head(fabric))
        if f is None:
            raise NotPublished(f"fabric {fabric.slug}: its record is being replaced; try again")
        return f

    def routing(self, fabric: Fabric) -> Routing:
        """The routing ``fabric``'s engine runs on, read from its runtime record."""
        routing = record.routing(fabric.pk, self.head(fabric))
        if routing is None:
            raise NotPublished(f"fabric {fabric.slug} has no routing yet: its engine has not routed it")
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
        f = self.engine_fabric(fabric)
        hidden = redaction(view_of(request.user), fabric, f).hidden_nodes(f)
        i = _node(f, node, hidden)
        if i is None:
            raise NotFound(f"no node {node!r} in fabric {fabric.slug}")
        if not 1 <= port <= int(f.nports[i]) or f.out_link(i, port) < 0:
            raise NotFound(f"port {port} of {node} is not cabled")
        return Response({**link_history(fabric, f.out_link(i, port), seconds), "node": _name(f, i, hidden),
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
        hidden = redaction(view_of(request.user), fabric, f).hidden_nodes(f)
        ends = []
        for name in ("src", "dst"):
            raw = request.query_params.get(name, "")
            if not raw:
                raise ValidationError({name: "required: a host name or node index"})
            i = _index(raw) if _is_index(raw) else _host_by_name(f, raw, name, fabric.slug, hidden)
            if not (0 <= i < f.num_nodes and f.kind[i] == KIND_HOST):
                raise ValidationError({name: f"{raw!r} is not a host of fabric {fabric.slug}"})
            ends.append(i)
        try:
            hops = routing.trace(ends[0], ends[1])
        except RoutingError as exc:
            detail = f"no route from {_name(f, ends[0], hidden)} to {_name(f, ends[1], hidden)}" \
                if hidden.any() else str(exc)
            return Response({"detail": detail, "src": ends[0], "dst": ends[1], "hops": [], "links": []}, status=409)
        hops = [{**h, "name": _name(f, h["node"], hidden)} for h in hops]
        return Response({"fabric": fabric.slug, "src": ends[0], "dst": ends[1], "hops": hops,
                         "links": [h["link"] for h in hops if h["link"] is not None], "routing": routing.engine})


def _is_index(raw: str) -> bool:
    return raw.isascii() and raw.isdigit()


def _index(raw: str) -> int:
    return int(raw) if len(raw) < 19 else -1


def _name(f, i: int, hidden: np.ndarray) -> str:
    """Name of node ``i`` as the user sees it (``hidden``: :meth:`ibweb.access.Redaction.hidden_nodes`)."""
    return host_label(i) if hidden[i] else str(f.node_name[i])


def _node(f, key: str, hidden: np.ndarray) -> int | None:
    """Node index of ``key`` (a name, a ``0x`` node or port GUID, or the ``host-<i>`` label of a hidden host);
    ``None`` when there is no such node, or only a hidden one named by its real name or GUID."""
    label = key.removeprefix("host-")
    if key.startswith("host-") and _is_index(label) and 0 <= _index(label) < f.num_nodes and hidden[_index(label)]:
        return _index(label)
    try:
        i = f.node(int(key, 16) if key.lower().startswith("0x") else key)
    except (KeyError, ValueError, OverflowError):
        return None
    return None if hidden[i] else i


def _host_by_name(f, raw: str, field: str, slug: str, hidden: np.ndarray) -> int:
    """Node index of ``raw``; a discovered host is also found without its ``HCA-1``/``mlx5_0`` suffix.

    A ``hidden`` host is found only by its ``host-<i>`` label.
    """
    i = _node(f, raw, hidden)
    if i is not None:
        return i
    hosts = f.hosts[~hidden[f.hosts]]
    short = np.array([HCA_SUFFIX.sub("", str(n)) for n in f.node_name[hosts]], dtype=object)  # only on a miss
    hit = hosts[short == raw]
    if len(hit) == 1:
        return int(hit[0])
    if len(hit) > 1:
        names = ", ".join(str(f.node_name[h]) for h in hit[:4])
        raise ValidationError({field: f"{raw!r} has several HCAs in fabric {slug}: say which ({names})"})
    raise ValidationError({field: f"no node {raw!r} in fabric {slug}"})


class JobsView(_FabricView):
    """The jobs of the fabric's catalog: name, tenant, pattern, host node indices and the directed links they cross.

    Emulated fabrics: the scenario's jobs. Telemetry-fed fabrics: what their source carries
    (none without a scheduler feed).
    """

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        h = self.head(fabric)
        catalog = record.jobs(fabric.pk, h) or []
        tenants = job_tenants(view_of(request.user))
        jobs = [{k: j[k] for k in ("id", "tenant", "pattern", "hosts", "links")} for j in catalog
                if tenants is None or j["tenant"] in tenants]
        return Response({"fabric": fabric.slug, "jobs": jobs})
