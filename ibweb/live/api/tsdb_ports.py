"""Several ports' series over a window in one request (issue 40): ``GET
/api/fabrics/fabrics/<slug>/tsdb/ports/?port=<node>:<port>&port=...&series=<name>&series=...&start=&end=&points=``.

What the History page draws for its ports: each port's charts ask seven series, so a page of 20 ports asked 140
single-port requests. Here every asked port's every asked series comes in one answer, read from the store once per
series for all the ports (:meth:`ibweb.tsdb.store.TimeSeriesStore.ranges`), the cable swaps of all of them in one
query. ``port``: ``node:port`` (the last colon splits; ``node`` as :func:`ibweb.access.find_node` takes it), at most
:data:`MAX_PORTS`; ``series``: names of :data:`ibweb.tsdb.series.SERIES`, at most every one once; ``start``, ``end``
and ``points`` as the single-port view takes them, with at most :data:`MAX_VALUES` values in all.

Each port's access is decided as :class:`~ibweb.live.api.tsdb_views.PortTsdbView` decides it (the same
:func:`~ibweb.live.api.tsdb_views.sight` and :func:`~ibweb.live.api.tsdb_views.seen_port`): a port the single-port
view answers 404 is answered here, in its place, as ``{"asked", "error"}`` with the same message (``error``
``status`` 404), and nothing of it is read; the others are answered as the single-port view answers them.
"""

from __future__ import annotations

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from ibweb.access import node_name
from ibweb.live.api.base import FabricView, query_number
from ibweb.live.api.tsdb_views import ask, seen_port, series_name, sight, span, swaps_of, values_of
from ibweb.tsdb.open import store
from ibweb.tsdb.series import PORT_ID, SERIES, series_of
from ibweb.tsdb.store import bin_edges

__all__ = ["MAX_PORTS", "MAX_VALUES", "PortsTsdbView", "asked_ports"]

#: Ports one request may ask for (the History page charts at most 32).
MAX_PORTS = 64
#: Values (ports x series x points) one answer may hold: about 6 MB of JSON.
MAX_VALUES = 1 << 19


def asked_ports(request) -> list[tuple[str, int]]:
    """The ``port`` parameters as ``(node, port)``, in their order; 400 naming ``port`` for an unreadable one, none,
    or more than :data:`MAX_PORTS`."""
    raw = request.query_params.getlist("port")
    if not raw:
        raise ValidationError({"port": "name at least one port as port=<node>:<port>"})
    if len(raw) > MAX_PORTS:
        raise ValidationError({"port": f"{len(raw)} ports asked; at most {MAX_PORTS} a request"})
    out = []
    for item in raw:  # at most MAX_PORTS
        node, colon, number = item.rpartition(":")
        if not (colon and node and number.isdigit() and 1 <= int(number) <= 65535):
            raise ValidationError({"port": f"expected <node>:<port number>, got {item!r}"})
        out.append((node, int(number)))
    return out


def asked_series(request) -> list[str]:
    """The ``series`` parameters, each once in their order; 400 naming ``series`` for none or an unknown one."""
    names = list(dict.fromkeys(request.query_params.getlist("series")))
    if not names:
        raise ValidationError({"series": f"name at least one series; known: {', '.join(sorted(SERIES))}"})
    return [series_name(n) for n in names]


@extend_schema(parameters=[
    OpenApiParameter("port", str, many=True, required=True, description=f"<node>:<port>, at most {MAX_PORTS}"),
    OpenApiParameter("series", str, many=True, required=True, description="a stored series' name"),
    OpenApiParameter("start", float, description="s since the epoch (default: an hour before end)"),
    OpenApiParameter("end", float, description="s since the epoch (default: now)"),
    OpenApiParameter("points", int, description="bins of the window (default 500)"),
], responses=OpenApiTypes.OBJECT)
class PortsTsdbView(FabricView):
    """Ports' stored series over one window, side by side in the same ``points`` bins ``t``: ``series``: each
    asked series' ``{"unit", "agg"}``; ``ports``: in the order asked, ``{"asked", "node", "port", "values": {series:
    [...]}, "swaps"}`` (``values`` null where nothing was stored), or ``{"asked", "node", "port", "error":
    {"status", "detail"}}`` for a port the user may not see or that does not exist."""

    def get(self, request, slug: str):
        asked, names = asked_ports(request), asked_series(request)
        start, end = span(request)
        points = int(query_number(request, "points", 500, 1, 4000))
        if len(asked) * len(names) * points > MAX_VALUES:
            raise ValidationError({"points": f"{len(asked)} ports x {len(names)} series x {points} points is more "
                                             f"than {MAX_VALUES:,} values a request; ask fewer points or ports"})
        fabric = self.fabric(request, slug)
        f, hidden = sight(self, request, fabric)
        found: list[int | NotFound] = []
        for node, port in asked:  # at most MAX_PORTS: each decided as the single-port view decides it
            try:
                found.append(seen_port(fabric, f, hidden, node, port))
            except NotFound as exc:
                found.append(exc)
        seen = [k for k, i in enumerate(found) if isinstance(i, int)]
        keys = np.empty(len(seen), dtype=PORT_ID)
        keys["guid"] = f.guid[np.array([found[k] for k in seen], dtype=np.int64)]
        keys["port"] = [asked[k][1] for k in seen]
        t, values = bin_edges(start, end, points)[0], {n: [] for n in names}
        if len(keys):  # one read of the store per series, for every port the user may see
            read = {n: ask(lambda n=n: store().ranges(fabric.pk, keys, n, start, end, points)) for n in names}
            t, values = next(iter(read.values())).t, {n: values_of(got.values) for n, got in read.items()}
        swaps = swaps_of(fabric, list(zip(keys["guid"].tolist(), keys["port"].tolist(), strict=True)), start, end)
        rows: list[dict] = []
        row_of = {k: j for j, k in enumerate(seen)}
        for k, ((node, port), i) in enumerate(zip(asked, found, strict=True)):  # at most MAX_PORTS
            head = {"asked": f"{node}:{port}", "port": port}
            if isinstance(i, NotFound):
                rows.append({**head, "node": node, "error": {"status": 404, "detail": str(i.detail)}})
                continue
            j = row_of[k]
            rows.append({**head, "node": node_name(f, i, hidden), "values": {n: values[n][j] for n in names},
                         "swaps": swaps[(int(keys["guid"][j]), port)]})
        return Response({"fabric": fabric.slug, "start": start, "end": end, "points": points,
                         "t": np.round(t, 3).tolist(),
                         "series": {n: {"unit": series_of(n).unit, "agg": series_of(n).agg} for n in names},
                         "ports": rows})
