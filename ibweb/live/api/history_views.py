"""Recent history of a fabric's links and ports, from the ring (:mod:`ibweb.live.history.reads`).

Routes (under ``/api/fabrics/``)::

    fabrics/<slug>/links/<d>/history/?seconds=300     recent series of directed link d and its reverse (ring buffer)
    fabrics/<slug>/ports/<node>/<port>/history/       the series of the link leaving a port and of the one entering it

Both follow **link identities** (:mod:`ibweb.live.api.link_ends`), not directed-link
indices, which a cabling change renumbers: ``links/<d>/`` reads the identity of ``d`` in the current
topology (the newest tick's) through every topology of the ring, with gaps
(``null``) where the cable did not exist; ``ports/<node>/<port>/`` follows the port, whatever it is
cabled to. Both name the identity (``tx``, ``rx``: GUID, port and node name, as the user may see
them: a hidden host reads ``host-<i>`` with GUID ``hidden``) and list ``recabled``: the times the
transmitting port's peer changed (``{"t", "from", "to"}``, ``from`` and ``to`` the peers).

What is missing reads as missing, never as zero (issue 35): a value is ``null`` where
the tick had no measurement or the cable was down, and ``down`` (``reverse_down``) says which
ticks were down; a tick that never came (engine stopped) is absent, so a gap in ``t`` longer than
``tick_s`` is a gap.
"""

from __future__ import annotations

import time

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from ibweb.fabrics.models import Fabric
from ibweb.live.api.base import FabricView, query_number, rounded
from ibweb.live.api.link_ends import PortView, current_topology, ends_for, peer
from ibweb.live.history import reads, ring
from ibweb.live.history.link_identity import port_key

__all__ = ["LinkHistoryView", "PortHistoryView", "link_history"]


def _window(fabric: Fabric, seconds: float) -> float:
    """The time after which the last ``seconds`` of the ring start."""
    idx = ring.index(fabric.pk)
    return (idx["t"][-1] if idx and idx["t"] else time.time()) - seconds


def _series_payload(s: reads.Series, fabric: Fabric) -> dict:
    """``seq``, ``t``, ``rate``, ``util`` and ``down`` of column 0, ``reverse_*`` of column 1 if any, and
    ``tick_s`` (the seconds one tick stands for: a longer gap in ``t`` had no tick)."""
    tick_s = reads.tick_seconds(ring.index(fabric.pk))
    out = {"seq": s.seq.tolist(), "t": np.round(s.t, 3).tolist(), "tick_s": tick_s,
           "rate": rounded(s.rate[:, 0], 3), "util": rounded(s.util[:, 0], 5), "down": s.down[:, 0].tolist()}
    if s.rate.shape[1] > 1:
        out.update(reverse_rate=rounded(s.rate[:, 1], 3), reverse_util=rounded(s.util[:, 1], 5),
                   reverse_down=s.down[:, 1].tolist())
    return out


def link_history(fabric: Fabric, d: int, seconds: float, request=None) -> dict:
    """The history payload of directed link ``d`` of the current topology and its reverse over the last ``seconds``.

    Both are followed by identity through every topology of the ring (``null``: the cable did not exist);
    without identities (ticks recorded without a topology) by position within the newest topology's ticks.
    ``request``: names the ends for its user (``tx``, ``rx`` and ``recabled``; left out without it).
    """
    ids, n = current_topology(fabric)
    if n is not None and not 0 <= d < n:
        raise NotFound(f"link {d} is outside 0..{n - 1}")
    after = _window(fabric, seconds)
    reverse = (d + n // 2) % n if n else None
    links = [d] if reverse is None else [d, reverse]
    s = reads.series(fabric.pk, links if ids is None else ids.keys[links], after=after)
    out = {"fabric": fabric.slug, "link": d, "reverse": reverse, "seconds": seconds, **_series_payload(s, fabric)}
    if request is not None:
        out.update(tx=None, rx=None, recabled=[], reverse_recabled=[])
        if ids is not None:
            ends = ends_for(request, fabric, ids)
            key, back = ids.keys[d], ids.keys[reverse]
            out["tx"], out["rx"] = ends.pair(key)
            out["recabled"] = ends.recablings(reads.recablings(fabric.pk, key["tx_guid"], key["tx_port"], after))
            out["reverse_recabled"] = ends.recablings(reads.recablings(fabric.pk, back["tx_guid"], back["tx_port"],
                                                                       after))
    return out


@extend_schema(responses=OpenApiTypes.OBJECT)
class LinkHistoryView(FabricView):
    """Recent series (rate in Gb/s, utilization) of a directed link and of its reverse, from the ring buffer,
    by the link's identity in the current topology."""

    def get(self, request, slug: str, link: int):
        seconds = query_number(request, "seconds", 300.0, 1.0, 86400.0)
        return Response(link_history(self.fabric(request, slug), link, seconds, request))


@extend_schema(responses=OpenApiTypes.OBJECT)
class PortHistoryView(PortView):
    """Recent series of the directed link leaving a port (column ``rate``, ``util``) and of the one entering it
    (``reverse_*``), whatever the port is cabled to: ``recabled`` lists each change of its peer."""

    def get(self, request, slug: str, node: str, port: int):
        seconds = query_number(request, "seconds", 300.0, 1.0, 86400.0)
        fabric, ends, current, guid, name = self.port(request, slug, node, port)
        after = _window(fabric, seconds)
        d = int(current.find_ports(port_key(guid, port))[0])
        tx, rx = ends.pair(peer(ends, guid, port))
        return Response({"fabric": fabric.slug, "node": name, "port": port, "link": d if d >= 0 else None,
                         "reverse": int(current.reverse(d)) if d >= 0 else None, "seconds": seconds,
                         **_series_payload(reads.port_series(fabric.pk, guid, port, after), fabric),
                         "tx": tx, "rx": rx,
                         "recabled": ends.recablings(reads.recablings(fabric.pk, guid, port, after))})
