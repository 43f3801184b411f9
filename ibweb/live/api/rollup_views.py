"""One-minute rollups of a fabric's links and ports, from the database (:class:`~ibweb.live.models.LinkRollup`).

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/links/<d>/rollups/?minutes=60      one-minute rollups of directed link d (database)
    fabrics/<slug>/ports/<node>/<port>/rollups/       the rollups of the link leaving a port (node: name or GUID)

Both follow **link identities** as the history views do (:mod:`ibweb.live.api.history_views`): ``links/<d>/``
reads every stored minute of the identity of ``d`` in the current topology, ``ports/<node>/<port>/`` the port
whatever it is cabled to, and both list ``recabled``.

What is missing reads as missing, never as zero (issue 35): each minute says ``coverage_s``
(seconds measured) and ``down_s`` (seconds down); its means and peak are over the covered seconds
(``null`` when none); a minute with no tick at all is absent.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from ibweb.fabrics.models import Fabric
from ibweb.live.api.base import FabricView, query_number
from ibweb.live.api.link_ends import Ends, PortView, current_topology, ends_for, peer
from ibweb.live.history.link_identity import db_guid, guid_from_db, port_key
from ibweb.live.models import FABRIC_WIDE, LinkRollup

__all__ = ["LinkRollupsView", "PortRollupsView"]


def _since(request) -> datetime:
    minutes = query_number(request, "minutes", 60.0, 1.0, 7 * 24 * 60.0)
    return datetime.now(tz=UTC) - timedelta(minutes=minutes)


def _minutes(fabric: Fabric, since: datetime, rows: list[tuple]) -> dict:
    """The rollups payload of the minutes after ``since`` from ``rows`` ``(minute, mean_util, max_util,
    mean_rate_gbps, samples, coverage_s, down_s)``, one list per field, a minute per rolled-up minute.

    A minute the engine had no tick of is absent (no data, never zero). Per minute: ``coverage_s``
    seconds measured and ``down_s`` seconds down (the rest of the 60 s had no tick: unknown);
    ``mean_util``, ``max_util`` and ``mean_rate_gbps`` over the covered seconds only, ``null`` when
    there are none. A rolled-up minute without a row of the link was idle and fully measured: zeros
    over the fabric-wide coverage. Several rows of one minute (a port re-cabled during it) are
    averaged by their samples; their coverage adds up, their down time is the least of theirs.
    """
    marks = {m: (n, c) for m, n, c in LinkRollup.objects.filter(
        fabric=fabric, minute__gte=since, link=FABRIC_WIDE, tx_guid__isnull=True)
        .values_list("minute", "samples", "coverage_s")}
    order = sorted(marks)
    acc: dict[datetime, list] = {}
    for minute, mean_util, max_util, rate, samples, coverage, down in rows:  # a row per minute, rarely two
        a = acc.setdefault(minute, [0.0, None, 0.0, 0, 0.0, 60.0])
        if samples:
            a[0] += mean_util * samples
            a[1] = max_util if a[1] is None else max(a[1], max_util)
            a[2] += rate * samples
        a[3] += samples
        a[4] += coverage
        a[5] = min(a[5], down)
    out: dict[str, list] = {k: [] for k in ("minute", "samples", "coverage_s", "down_s", "mean_util", "max_util",
                                            "mean_rate_gbps")}
    for m in order:  # the window's minutes
        a = acc.get(m)
        if a is None:  # idle, measured as long as the fabric was (not at all: no value)
            samples, coverage, down = marks[m][0], marks[m][1], 0.0
            mean = peak = rate = 0.0 if samples else None
        else:
            samples, coverage, down = a[3], min(a[4], 60.0), a[5]
            mean, peak, rate = (a[0] / a[3], a[1], a[2] / a[3]) if a[3] else (None, None, None)
        out["minute"].append(m.isoformat())
        out["samples"].append(samples)
        out["coverage_s"].append(round(coverage, 3))
        out["down_s"].append(round(down, 3))
        out["mean_util"].append(None if mean is None else round(mean, 5))
        out["max_util"].append(None if peak is None else round(peak, 5))
        out["mean_rate_gbps"].append(None if rate is None else round(rate, 3))
    return out


_ROW = ("minute", "mean_util", "max_util", "mean_rate_gbps", "samples", "coverage_s", "down_s")


def _port_rows(fabric: Fabric, since: datetime, guid: int, port: int) -> tuple[list[tuple], np.ndarray]:
    """The rollup rows of the link leaving a port (whatever its peer), oldest first, and their peers
    (``rx_guid`` uint64, ``rx_port``) as an array of pairs ``[R, 2]`` (object)."""
    rows = list(LinkRollup.objects.filter(fabric=fabric, minute__gte=since, tx_guid=db_guid(guid), tx_port=port)
                .order_by("minute", "rx_guid", "rx_port").values_list(*_ROW, "rx_guid", "rx_port"))
    k = len(_ROW)
    peers = np.array([(int(guid_from_db(r[k])), r[k + 1]) for r in rows], dtype=object).reshape(-1, 2)
    return [r[:k] for r in rows], peers


def _recabled_rows(ends: Ends, rows: list[tuple], peers: np.ndarray) -> list[dict]:
    """Each minute whose row's peer differs from the row before (idle minutes have no row: the change is
    placed at the first minute the new peer carried traffic)."""
    changed = np.flatnonzero((peers[1:] != peers[:-1]).any(axis=1)) + 1 if len(peers) > 1 else np.zeros(0, int)
    return [{"t": rows[i][0].timestamp(), "minute": rows[i][0].isoformat(),
             "from": ends.end(*peers[i - 1]), "to": ends.end(*peers[i])} for i in changed.tolist()]


@extend_schema(responses=OpenApiTypes.OBJECT)
class LinkRollupsView(FabricView):
    """One-minute rollups of a directed link of the current topology, by its identity (``link=-1``: the
    fabric-wide rows); idle minutes read as zero, uncovered ones as ``null`` (:func:`_minutes`)."""

    def get(self, request, slug: str, link: int):
        fabric = self.fabric(request, slug)
        since = _since(request)
        out = {"fabric": fabric.slug, "link": link}
        ids, n = current_topology(fabric) if link != FABRIC_WIDE else (None, None)
        if link != FABRIC_WIDE and n is not None and not 0 <= link < n:
            raise NotFound(f"link {link} is outside 0..{n - 1}")
        if ids is None:  # the fabric-wide rows, or rows recorded without a topology
            rows = list(LinkRollup.objects.filter(fabric=fabric, minute__gte=since, link=link, tx_guid__isnull=True)
                        .values_list(*_ROW))
            return Response({**out, **_minutes(fabric, since, rows)})
        key = ids.keys[link]
        ends = ends_for(request, fabric, ids)
        rows, peers = _port_rows(fabric, since, int(key["tx_guid"]), int(key["tx_port"]))
        mine = [r for r, p in zip(rows, peers.tolist(), strict=True) if p == [int(key["rx_guid"]), int(key["rx_port"])]]
        tx, rx = ends.pair(key)
        return Response({**out, "tx": tx, "rx": rx, **_minutes(fabric, since, mine),
                         "recabled": _recabled_rows(ends, rows, peers)})


@extend_schema(responses=OpenApiTypes.OBJECT)
class PortRollupsView(PortView):
    """One-minute rollups of the directed link leaving a port, whatever it is cabled to; ``recabled`` lists the
    minutes its peer changed."""

    def get(self, request, slug: str, node: str, port: int):
        since = _since(request)
        fabric, ends, current, guid, name = self.port(request, slug, node, port)
        rows, peers = _port_rows(fabric, since, guid, port)
        d = int(current.find_ports(port_key(guid, port))[0])
        tx, rx = ends.pair(peer(ends, guid, port))
        return Response({"fabric": fabric.slug, "node": name, "port": port, "link": d if d >= 0 else None,
                         "tx": tx, "rx": rx, **_minutes(fabric, since, rows),
                         "recabled": _recabled_rows(ends, rows, peers)})
