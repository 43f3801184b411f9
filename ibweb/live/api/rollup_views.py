"""One-minute summaries of a fabric's links and ports, from the time-series store (:mod:`ibweb.tsdb`, issue 40).

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/links/<d>/rollups/?minutes=60      one-minute summaries of directed link d
    fabrics/<slug>/links/-1/rollups/                  every port of the fabric together
    fabrics/<slug>/ports/<node>/<port>/rollups/       those of the link leaving a port (node: name or GUID)

The finished minutes of the window, each from the store's samples of the transmitting port (by identity: a
re-cabled port keeps its history): ``samples`` utilization samples, ``coverage_s`` the seconds they stand for,
``down_s`` the seconds of ``link_up`` samples at 0 (the publisher writes 0 for a cable cut too), ``mean_util`` and
``max_util`` of utilization, ``mean_rate_gbps`` of the transmit rate; ``null`` where no sample was measured. A minute
without any sample of the port is absent (no data, never zero). ``links/<d>/`` keeps the minutes of its cable: those
before the newest re-cabling of its port to its current peer (the history ring's recablings) are left out.
``recabled`` lists the port's recablings the history ring still holds. The fabric-wide summary: ``samples`` the
sweeps, means over every port's samples, ``mean_rate_gbps`` the rate summed over the ports per sweep, ``max_util``
the peak over them, ``down_s`` the longest any one port was down.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

import numpy as np
from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from ibweb.live.api.base import FabricView, query_number, rounded
from ibweb.live.api.link_ends import Ends, PortView, current_topology, ends_for, peer
from ibweb.live.api.tsdb_views import ask
from ibweb.live.history import reads
from ibweb.live.history.link_identity import port_key
from ibweb.tsdb.open import store
from ibweb.tsdb.series import PORT_ID
from ibweb.tsdb.store import Stats

__all__ = ["FABRIC_WIDE", "LinkRollupsView", "PortRollupsView", "minutes_of"]

#: ``links/<d>/`` of every port of the fabric together.
FABRIC_WIDE = -1
MINUTE = 60.0
_FIELDS = ("minute", "samples", "coverage_s", "down_s", "mean_util", "max_util", "mean_rate_gbps")


def _window(request) -> tuple[float, float, int]:
    """The finished minutes after ``now - minutes``: start, end (minute boundaries) and their count (>= 0)."""
    minutes = query_number(request, "minutes", 60.0, 1.0, 7 * 24 * 60.0)
    now = time.time()
    start, end = math.ceil((now - minutes * MINUTE) / MINUTE) * MINUTE, math.floor(now / MINUTE) * MINUTE
    return start, end, max(int(round((end - start) / MINUTE)), 0)


def _sample_s(sample_s: float | None) -> float:
    """Seconds one stored sample stands for: the writer's interval, or the store's bucket when wider."""
    return max(float(sample_s or 0.0), float(settings.IBWEB_TSDB_INTERVAL_S))


def minutes_of(t: np.ndarray, keep: np.ndarray, samples: np.ndarray, covered: np.ndarray, down: np.ndarray,
               mean_util: np.ndarray, max_util: np.ndarray, mean_rate_gbps: np.ndarray) -> dict[str, list]:
    """The payload of the minutes starting at ``t`` where ``keep``: one list per field, seconds capped at 60."""
    return {"minute": [datetime.fromtimestamp(m, tz=UTC).isoformat() for m in t[keep].tolist()],
            "samples": samples[keep].astype(int).tolist(),
            "coverage_s": rounded(np.minimum(covered[keep], MINUTE), 3),
            "down_s": rounded(np.minimum(down[keep], MINUTE), 3),
            "mean_util": rounded(mean_util[keep], 5), "max_util": rounded(max_util[keep], 5),
            "mean_rate_gbps": rounded(mean_rate_gbps[keep], 3)}


def _empty() -> dict[str, list]:
    return {k: [] for k in _FIELDS}


def _port_minutes(fabric_id: int, guid: int, port: int, start: float, end: float, points: int,
                  since: float | None = None) -> dict[str, list]:
    """The minutes of port ``(guid, port)`` in ``[start, end)`` (``since``: only minutes ending after it)."""
    if points < 1:
        return _empty()
    key = np.array([(guid, port)], dtype=PORT_ID)
    ts = store()
    util: Stats = ask(lambda: ts.stats(fabric_id, key, "utilization", start, end, points))
    rate: Stats = ask(lambda: ts.stats(fabric_id, key, "tx_bytes_per_s", start, end, points))
    up: Stats = ask(lambda: ts.stats(fabric_id, key, "link_up", start, end, points))
    keep = (util.count[0] > 0) | (up.count[0] > 0)
    if since is not None:
        keep &= util.t + MINUTE > since
    down = (up.count[0] - np.nan_to_num(up.sum[0])) * _sample_s(up.sample_s)
    return minutes_of(util.t, keep, util.count[0], util.count[0] * _sample_s(util.sample_s), down, util.mean[0],
                      util.max[0], rate.mean[0] * 8e-9)


def _fabric_minutes(fabric_id: int, start: float, end: float, points: int) -> dict[str, list]:
    """The minutes of every port of the fabric together."""
    if points < 1:
        return _empty()
    ts = store()
    util = ask(lambda: ts.fabric_stats(fabric_id, "utilization", start, end, points))
    rate = ask(lambda: ts.fabric_stats(fabric_id, "tx_bytes_per_s", start, end, points))
    up = ask(lambda: ts.fabric_stats(fabric_id, "link_up", start, end, points))
    keep = (util.count > 0) | (up.count > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_util = np.where(util.count > 0, util.sum / util.count, np.nan)
        mean_rate = np.where(util.sweeps > 0, rate.sum / np.maximum(util.sweeps, 1) * 8e-9, np.nan)
    return minutes_of(util.t, keep, util.sweeps, util.sweeps * _sample_s(util.sample_s),
                      np.nan_to_num(up.short) * _sample_s(up.sample_s), mean_util, util.max, mean_rate)


def _recabled(ends: Ends, changes: list[reads.Recabling]) -> list[dict]:
    """``{"t", "minute", "from", "to"}`` of each recabling (``minute``: the one it happened in)."""
    return [{**row, "minute": datetime.fromtimestamp(math.floor(c.t / MINUTE) * MINUTE, tz=UTC).isoformat()}
            for row, c in zip(ends.recablings(changes), changes, strict=True)]


@extend_schema(responses=OpenApiTypes.OBJECT)
class LinkRollupsView(FabricView):
    """One-minute summaries of a directed link of the current topology, by its identity (``link=-1``: every port
    of the fabric together)."""

    def get(self, request, slug: str, link: int):
        fabric = self.fabric(request, slug)
        start, end, points = _window(request)
        out = {"fabric": fabric.slug, "link": link}
        if link == FABRIC_WIDE:
            return Response({**out, **_fabric_minutes(fabric.pk, start, end, points)})
        ids, n = current_topology(fabric)
        if n is not None and not 0 <= link < n:
            raise NotFound(f"link {link} is outside 0..{max(n - 1, 0)}")
        if ids is None:  # no topology, or ticks recorded without one: no port to read
            return Response({**out, "tx": None, "rx": None, **_empty(), "recabled": []})
        key = ids.keys[link]
        ends = ends_for(request, fabric, ids)
        guid, port = int(key["tx_guid"]), int(key["tx_port"])
        changes = reads.recablings(fabric.pk, guid, port, after=start)
        joined = [c.t for c in changes if (int(c.after["rx_guid"]), int(c.after["rx_port"])) ==
                  (int(key["rx_guid"]), int(key["rx_port"]))]
        tx, rx = ends.pair(key)
        return Response({**out, "tx": tx, "rx": rx,
                         **_port_minutes(fabric.pk, guid, port, start, end, points, joined[-1] if joined else None),
                         "recabled": _recabled(ends, changes)})


@extend_schema(responses=OpenApiTypes.OBJECT)
class PortRollupsView(PortView):
    """One-minute summaries of the directed link leaving a port, whatever it is cabled to; ``recabled`` lists the
    changes of its peer the history ring holds."""

    def get(self, request, slug: str, node: str, port: int):
        start, end, points = _window(request)
        fabric, ends, current, guid, name = self.port(request, slug, node, port)
        d = int(current.find_ports(port_key(guid, port))[0])
        tx, rx = ends.pair(peer(ends, guid, port))
        return Response({"fabric": fabric.slug, "node": name, "port": port, "link": d if d >= 0 else None,
                         "tx": tx, "rx": rx, **_port_minutes(fabric.pk, guid, port, start, end, points),
                         "recabled": _recabled(ends, reads.recablings(fabric.pk, guid, port, after=start))})
