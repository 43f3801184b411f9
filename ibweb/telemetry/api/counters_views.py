"""``/api/telemetry/fabrics/<slug>/ports/<node>/<port>/counters/``: a port's error counters in the newest sweep.

For a telemetry-fed fabric: each error counter (:data:`~fabric_engine.telemetry.counters.ERROR_COUNTERS`)
of the port as the newest sweep read it (``value``; ``null`` when not read), its rate per minute
over the newest sweep pair (``rate_per_min``; ``null`` without two good reads), the fabric's
threshold per minute (:meth:`~ibweb.telemetry.models.CollectorConfig.alert_thresholds`; ``null``:
none) and ``above`` (the rate reaches it), and the active conditions naming the port
(:func:`~.conditions_views.condition_payload`). ``congestion``: the port's congestion control counters
(``PortPktRcvFECN``/``PortPktRcvBECN`` as ``fecn``/``becn``, read when the collector's ``cc_counters`` is on or a
drop directory or a push has them) and their rates per second between the two newest readings (``fecn_per_s``,
``becn_per_s``; ``null`` without two good reads), timed ``t`` (:mod:`..cc_readings`); ``null``: the port was not
read. ``node``: a node as :mod:`ibweb.access.node_names` takes it, of the
discovery the engine runs on (its runtime record). Counters of a port are fabric-wide data, like
link loads, but a host the view may not see is answered as no such node (404), whatever it is named by.
"""

from __future__ import annotations

import numpy as np
from django.db.models import Q
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from fabric_engine.telemetry.counters import COLUMN, ERROR_COUNTERS, port_key
from fabric_engine.telemetry.rates import STALE, counter_deltas
from ibweb.access import alert_renderer, find_node, redaction
from ibweb.events.api import EventsView
from ibweb.runtime import record

from .. import cc_readings, store
from ..models import CollectorConfig
from .conditions_views import condition_payload

__all__ = ["PortCountersView", "port_counters"]

_COLS = np.array([COLUMN[c] for c in ERROR_COUNTERS])


def port_counters(prev: dict | None, newest: dict | None, lid: int, port: int, thresholds: dict[str, float],
                  wrap: bool = False) -> list[dict]:
    """The error counters of port ``port`` addressed through ``lid`` in sweep entries ``prev`` and ``newest``.

    Each ``{"counter", "value", "rate_per_min", "threshold_per_min", "above"}`` in ``ERROR_COUNTERS`` order.
    """
    n = len(ERROR_COUNTERS)
    value, rate = np.full(n, None, dtype=object), np.full(n, None, dtype=object)
    key = np.array([port_key(lid, port)], dtype=np.int64)
    if newest is not None:
        cur = newest["samples"]
        row = np.flatnonzero(cur.keys == key[0])
        if row.size:
            r = int(row[-1])
            read = cur.bits[r, _COLS] > 0
            value[read] = cur.values[r, _COLS][read].tolist() if read.any() else []
        if prev is not None and row.size:
            deltas = counter_deltas(prev["samples"], cur, wrap=wrap)
            d = int(deltas.lookup(key)[0])
            if d >= 0:
                good = (deltas.flags[d, _COLS] & STALE) == 0
                rate[good] = np.round(deltas.rate[d, _COLS][good] * 60.0, 3).tolist() if good.any() else []
    limit = [thresholds.get(c) for c in ERROR_COUNTERS]
    return [{"counter": c, "value": v, "rate_per_min": r, "threshold_per_min": t,
             "above": r is not None and t is not None and r >= t}
            for c, v, r, t in zip(ERROR_COUNTERS, value.tolist(), rate.tolist(), limit, strict=True)]


@extend_schema(responses=OpenApiTypes.OBJECT)
class PortCountersView(EventsView):
    """``{"fabric", "node", "guid", "port", "t", "counters": [...], "congestion", "conditions": [...]}`` of one
    port."""

    def get(self, request, slug: str, node: str, port: int):
        view, fabric, events = self.scope(request, slug)
        config = get_object_or_404(CollectorConfig, fabric=fabric)
        h = record.head_of(fabric)
        f = record.fabric(fabric.pk, h) if h is not None else None
        if f is None:
            raise NotFound(f"fabric {slug}: its engine has not published a discovery yet")
        i = find_node(f, node, redaction(view, fabric, f).hidden_nodes(f))
        if i is None:
            raise NotFound(f"no node {node!r} in fabric {slug}")
        if not 1 <= port <= int(f.nports[i]):
            raise NotFound(f"{f.node_name[i]} has no port {port}")
        prev, newest = store.sweeps(fabric.pk)
        lid = int(f.port_lid[int(f.port_offset[i]) + port - 1])
        name = f"{f.node_name[i]} port {port}"
        rows = events.filter(active=True, details__condition=True).filter(
            Q(details__port=name) | Q(details__a=name) | Q(details__b=name)).order_by("first_seen", "pk")[:100]
        hidden = alert_renderer(view, fabric)
        return Response({
            "fabric": fabric.slug, "node": str(f.node_name[i]), "guid": f"0x{int(f.guid[i]):016x}", "port": port,
            "t": round(float(newest["t"]), 3) if newest is not None else None,
            "counters": port_counters(prev, newest, lid, port, dict(config.alert_thresholds().per_minute),
                                      config.wrap_counters),
            "congestion": cc_readings.port_reading(fabric.pk, lid, port),
            "conditions": [condition_payload(e, view, hidden) for e in rows]})
