"""The fabrics overview: one card per fabric with its engine's state and the newest frame's fabric-wide numbers.

Everything comes from what the runner keeps in the cache, never from a whole frame: the
newest frame's header (:func:`ibweb.live.feed.frame_store.newest_frame`, without the per-link arrays:
throughput, hottest link, congested links), its start-up progress, the runtime record's
fabric (to name the hottest link, with hosts the viewer may not see named ``host-<index>``),
and the open events the viewer may see (:mod:`ibweb.events.visibility`).

``routing``: the routing in use (the routing report's ``engine_used``: ``opensm-dump`` for a telemetry-fed
fabric routed by OpenSM's dump), ``routing_engine``: the fabric's configured engine.

Engine state: ``starting`` (with its progress), ``live`` (a frame within three ticks),
``stale`` (the newest frame is older), ``idle`` (no engine has published a frame).
"""

from __future__ import annotations

import time

from asgiref.sync import async_to_sync
from django.db.models import Count

from ibweb.access import View, host_label, redaction
from ibweb.events.visibility import visible_events
from ibweb.live.feed.frame_store import newest_frame, starting
from ibweb.runtime import record

__all__ = ["fabric_cards", "STALE_TICKS"]

#: A fabric whose newest frame is older than this many ticks (and 2 s) is stale.
STALE_TICKS = 3


def _link_label(f, d: int, hidden) -> str | None:
    if f is None or d is None or not 0 <= d < 2 * f.num_links:
        return None
    c = d % f.num_links
    ends = [(f.a_node[c], f.a_port[c]), (f.b_node[c], f.b_port[c])]
    if d >= f.num_links:
        ends.reverse()
    name = [host_label(n) if hidden is not None and hidden[n] else str(f.node_name[n]) for n, _ in ends]
    return f"{name[0]}:{ends[0][1]} → {name[1]}:{ends[1][1]}"


def _alerts(view: View, fabrics) -> dict[int, dict]:
    counts: dict[int, dict] = {f.pk: {"critical": 0, "warning": 0, "info": 0} for f in fabrics}
    for f in fabrics:  # one small aggregate per fabric (the visibility filter is per fabric)
        for row in visible_events(view, f).filter(active=True).order_by().values("severity").annotate(n=Count("pk")):
            counts[f.pk][row["severity"]] = row["n"]
    return counts


def _routing_in_use(fabric, h: dict | None) -> str:
    """The routing whose tables the engine uses, as the routing report names it (``opensm-dump`` for OpenSM's dump,
    a fallback's engine); the fabric's configured engine before its engine published a record."""
    if h is None or not h.get("engine"):
        return fabric.routing_engine
    report = record.routing_report(fabric.pk, h)
    return (report or {}).get("engine_used") or h["engine"]


def fabric_cards(view: View, fabrics, now: float | None = None) -> list[dict]:
    """JSON-ready cards of ``fabrics`` (rows the viewer may see) as ``view`` may see them."""
    now = time.time() if now is None else now
    fabrics = list(fabrics)
    alerts = _alerts(view, fabrics)
    cards = []
    for fabric in fabrics:
        header = newest_frame(fabric.pk)
        s = {"seq": header.get("seq"), "t": header.get("t"), "tick_s": header.get("tick_s"),
             **(header.get("totals") or {})} if header else None
        progress = async_to_sync(starting)(fabric.pk)
        h = record.head_of(fabric)
        f = record.fabric(fabric.pk, h) if h is not None else None
        hidden = None if f is None or view.sees_all else redaction(view, fabric, topology=f).hidden_nodes(f)
        card = {"slug": fabric.slug, "name": fabric.name, "mode": fabric.mode, "routing": _routing_in_use(fabric, h),
                "routing_engine": fabric.routing_engine,
                "url": f"/fabrics/{fabric.slug}/", "events_url": f"/fabrics/{fabric.slug}/events/",
                "alerts": alerts[fabric.pk], "progress": None, "seq": None, "age_s": None}
        if progress is not None:
            card.update(state="starting", progress={"fraction": progress.get("fraction"),
                                                    "message": progress.get("message")})
        elif s is None:
            card["state"] = "idle"
        else:
            age = max(0.0, now - float(s.get("t", 0)))
            tick = float(s.get("tick_s") or fabric.tick_s or 1.0)
            card["state"] = "live" if age <= max(STALE_TICKS * tick, 2.0) else "stale"
            card["age_s"] = round(age, 1)
        if s is not None:
            hottest = s.get("hottest") or {}
            card.update(seq=s.get("seq"), hosts=s.get("hosts"), switches=s.get("switches"), links=s.get("links"),
                        throughput_gbps=s.get("throughput_gbps"), congested_links=s.get("congested_links"),
                        hottest={"link": hottest.get("link"), "util": hottest.get("util"),
                                 "label": _link_label(f, hottest.get("link"), hidden)})
        cards.append(card)
    return cards
