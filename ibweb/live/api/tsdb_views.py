"""Per-port history of a fabric over any window, from the time-series store (:mod:`ibweb.tsdb`, issue 40).

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/ports/<node>/<port>/tsdb/?series=&start=&end=&points=   a port's series in ``points`` bins
    fabrics/<slug>/nodes/<node>/tsdb/?series=&start=&end=&points=          a switch's (node's) ports side by side
    fabrics/<slug>/tsdb/top/?series=&start=&end=&n=                        the ``n`` ports highest in a series
    fabrics/<slug>/tsdb/ports/?port=&series=&start=&end=&points=           several ports' series (:mod:`.tsdb_ports`)

``series``: a name of :data:`ibweb.tsdb.series.SERIES`; ``start`` and ``end``: seconds since the epoch (default: the
last hour); ``points``: bins of the chart (default 500). ``node`` as :func:`ibweb.access.find_node` takes it; a node
the user may not see is 404. The top-N leaves out the ports of hosts the view may not see (below ``ALL``; a GUID no
longer in the fabric is left out too: the view cannot tell whether it was a host it may see), and ranks the ports
it may see. Values are null where nothing was stored. A port's series lists the cable swaps of the window
(``swaps``: the ``cable_swap`` events of the port, time and old and new module serial): its history goes on across
them, as across a restart.
"""

from __future__ import annotations

import time

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.response import Response

from fabric_engine.topology import Fabric as EngineFabric
from fabric_engine.topology.limits import MAX_NODE_PORTS
from ibweb.access import find_node, node_name, redaction, view_of
from ibweb.live.api.base import FabricView, query_number
from ibweb.tsdb.open import store
from ibweb.tsdb.series import SERIES, series_of

__all__ = ["NodeTsdbView", "PortTsdbView", "TsdbTopView", "ask", "cable_swaps", "nodes_of", "peer_of", "seen_port",
           "series_name", "sight", "span", "swaps_of", "values_of", "window"]

#: The longest window asked for, s (the longest retention one may set is far shorter in practice).
MAX_WINDOW_S = 400 * 86400.0


class TsdbUnavailable(APIException):
    """The time-series store did not answer (VictoriaMetrics down): try again."""

    status_code = 503
    default_code = "tsdb_unavailable"


def series_name(name: str) -> str:
    """``name`` if the store keeps such a series; 400 naming ``series`` otherwise."""
    if name not in SERIES:
        raise ValidationError({"series": f"unknown series {name!r}; known: {', '.join(sorted(SERIES))}"})
    return name


def window(request) -> tuple[str, float, float]:
    """The ``series``, ``start`` and ``end`` of a request; 400 naming the parameter otherwise."""
    return (series_name(request.query_params.get("series", "")), *span(request))


def span(request) -> tuple[float, float]:
    """The ``start`` and ``end`` of a request (default: the last hour); 400 naming the parameter otherwise."""
    now = time.time()
    end = query_number(request, "end", now, 0.0, now + 86400.0)
    start = query_number(request, "start", end - 3600.0, 0.0, now + 86400.0)
    if not 0 < end - start <= MAX_WINDOW_S:
        raise ValidationError({"start": f"window {start:g}..{end:g}: end must be after start, at most "
                                        f"{MAX_WINDOW_S / 86400:g} days"})
    return start, end


def values_of(a: np.ndarray) -> list:
    """``a`` (any shape) as nested lists of floats, None where it is NaN."""
    out = a.astype(np.float64).astype(object)
    out[np.isnan(a)] = None
    return out.tolist()


def ask(call):
    from ibweb.tsdb.victoria import TsdbError

    try:
        return call()
    except TsdbError as exc:
        raise TsdbUnavailable(f"per-port history unavailable: {exc}") from exc


@extend_schema(responses=OpenApiTypes.OBJECT)
class PortTsdbView(FabricView):
    """A port's stored series over a window, downsampled to ``points`` bins (``t``: bin starts, s; ``values``:
    each bin reduced by the series' aggregation, null where nothing was stored), by port identity: a re-cabled
    port keeps its history."""

    def get(self, request, slug: str, node: str, port: int):
        name, start, end = window(request)
        points = int(query_number(request, "points", 500, 1, 4000))
        fabric = self.fabric(request, slug)
        f, hidden = sight(self, request, fabric)
        i = seen_port(fabric, f, hidden, node, port)
        got = ask(lambda: store().range(fabric.pk, (int(f.guid[i]), port), name, start, end, points))
        s = series_of(name)
        return Response({"fabric": fabric.slug, "node": node_name(f, i, hidden), "port": port, "series": name,
                         "unit": s.unit, "agg": s.agg, "start": start, "end": end,
                         "t": np.round(got.t, 3).tolist(), "values": values_of(got.values),
                         "swaps": cable_swaps(fabric, int(f.guid[i]), port, start, end)})


@extend_schema(responses=OpenApiTypes.OBJECT)
class TsdbTopView(FabricView):
    """The ``n`` ports of the fabric highest in a series over a window (a ``min`` series, such as ``link_up``: the
    lowest), among the ports the user may see: ``ports``: ``{"node", "guid", "port", "value"}`` ranked."""

    def get(self, request, slug: str):
        name, start, end = window(request)
        n = int(query_number(request, "n", 20, 1, 1000))
        fabric = self.fabric(request, slug)
        f = self.engine_fabric(fabric)
        shown = redaction(view_of(request.user), fabric, f)
        hidden = shown.hidden_nodes(f)
        k = n
        while True:  # ask again for more while hidden ports take places among the first k
            rows = ask(lambda k=k: store().top(fabric.pk, name, start, end, k))
            nodes = nodes_of(f, rows["guid"])
            keep = (nodes >= 0) & ~hidden[np.maximum(nodes, 0)] if not shown.shows_all else np.ones(len(rows), bool)
            if keep.sum() >= n or len(rows) < k or k >= 1 << 20:
                break
            k *= 4
        rows, nodes = rows[keep][:n], nodes[keep][:n]
        out = [{"node": node_name(f, int(i), hidden) if i >= 0 else None, "guid": f"0x{int(g):016x}",
                "port": int(p), "value": None if np.isnan(v) else float(v)}
               for i, g, p, v in zip(nodes.tolist(), rows["guid"].tolist(), rows["port"].tolist(),
                                     rows["value"].tolist(), strict=True)]  # at most n (<= 1000) rows
        s = series_of(name)
        return Response({"fabric": fabric.slug, "series": name, "unit": s.unit, "agg": s.agg, "start": start,
                         "end": end, "n": n, "ports": out})


def sight(view: FabricView, request, fabric) -> tuple[EngineFabric, np.ndarray]:
    """The fabric ``fabric``'s engine runs on and the nodes hidden from the user: what the per-port history views
    decide a port's access on (with :func:`seen_port`)."""
    f = view.engine_fabric(fabric)
    return f, redaction(view_of(request.user), fabric, f).hidden_nodes(f)


def seen_port(fabric, f: EngineFabric, hidden: np.ndarray, node: str, port: int) -> int:
    """The index of ``node`` (as :func:`ibweb.access.find_node` takes it) if the user may see its port ``port``;
    404 for a node the user may not see (named as asked) or a port it does not have."""
    i = find_node(f, node, hidden)
    if i is None:
        raise NotFound(f"no node {node!r} in fabric {fabric.slug}")
    if not 1 <= port <= min(int(f.nports[i]), MAX_NODE_PORTS):
        raise NotFound(f"{node} has no port {port}")
    return i


def cable_swaps(fabric, guid: int, port: int, start: float, end: float) -> list[dict]:
    """The cable swaps of port ``(guid, port)`` within ``[start, end)``: its ``cable_swap`` events (one per changed
    module serial, kept across restarts) as ``{"t", "from", "to"}``, oldest first."""
    return swaps_of(fabric, [(guid, port)], start, end)[(int(guid), int(port))]


def swaps_of(fabric, ports: list[tuple[int, int]], start: float, end: float) -> dict[tuple[int, int], list[dict]]:
    """:func:`cable_swaps` of each port ``(guid, port)`` of ``ports``, read in one query. The events app's model is
    taken by name (it imports this app, not the other way round)."""
    from django.apps import apps

    out: dict[tuple[int, int], list[dict]] = {(int(g), int(p)): [] for g, p in ports}
    guids = {f"0x{g:016x}" for g, _ in out}
    if not guids:
        return out
    events = apps.get_model("events", "Event").objects
    rows = events.filter(fabric=fabric, kind="cable_swap", details__guid__in=sorted(guids)).values_list(
        "details", flat=True).order_by("first_seen", "pk")[:1000 * len(guids)]
    for d in rows:  # the ports' swaps: a few each
        t, guid = d.get("t"), d.get("guid")
        if not (isinstance(t, (int, float)) and start <= t < end and isinstance(guid, str)):
            continue
        try:
            g = int(guid, 16)
        except ValueError:
            continue
        for p in d.get("ports") or ():
            if (g, p) in out:
                out[(g, p)].append({"t": round(float(t), 3), "from": str(d.get("from", "")),
                                    "to": str(d.get("to", ""))})
    for swaps in out.values():
        swaps.sort(key=lambda x: x["t"])
    return out


def peer_of(f, node: int, port: int, hidden: np.ndarray) -> dict | None:
    """The other end of the cable at ``port`` of ``node``, ``{"node", "port"}`` as the view names it (None: none)."""
    if not 1 <= port <= int(f.nports[node]):
        return None
    d = int(f.out_link(node, port))
    if d < 0:
        return None
    return {"node": node_name(f, int(f.dl_dst[d]), hidden), "port": int(f.dl_dst_port[d])}


@extend_schema(responses=OpenApiTypes.OBJECT)
class NodeTsdbView(FabricView):
    """A node's (a switch's) stored ports side by side over a window: ``ports``: ``{"port", "peer", "values"}`` by
    port number (``peer``: the other end in the current topology, ``{"node", "port"}``, null if uncabled), every
    port's values in the same ``points`` bins ``t``; a node the user may not see is 404."""

    def get(self, request, slug: str, node: str):
        name, start, end = window(request)
        points = int(query_number(request, "points", 500, 1, 4000))
        fabric = self.fabric(request, slug)
        f, i, hidden = self.node(request, fabric, node)
        got = ask(lambda: store().ports_of_switch(fabric.pk, int(f.guid[i]), name, start, end, points))
        rows = [{"port": p, "peer": peer_of(f, i, p, hidden), "values": v}
                for p, v in zip(got.ports.tolist(), (values_of(r) for r in got.values), strict=True)]  # its ports
        s = series_of(name)
        return Response({"fabric": fabric.slug, "node": node_name(f, i, hidden), "series": name, "unit": s.unit,
                         "agg": s.agg, "start": start, "end": end, "t": np.round(got.t, 3).tolist(), "ports": rows})


def nodes_of(f, guids: np.ndarray) -> np.ndarray:
    """Node index of each node GUID in ``f``, -1 where absent."""
    order = np.argsort(f.guid, kind="stable")
    ordered = f.guid[order]
    if not len(ordered):
        return np.full(len(guids), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(ordered, guids), len(ordered) - 1)
    return np.where(ordered[pos] == guids, order[pos], -1).astype(np.int64)
