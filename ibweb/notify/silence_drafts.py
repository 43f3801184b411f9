"""Silences made where the thing is (an event, a port, a switch): who may make one, and the matchers of a silence of
one event (those the dispatcher matches it by, so the silence surely covers it)."""

from __future__ import annotations

from .access import may_silence
from .matching import facts_of

__all__ = ["may_silence", "draft_of_event"]


def draft_of_event(event) -> dict:
    """``{"matchers": {...}, "about": text}`` of a silence of ``event``'s kind on its port, else its switch, else its
    hosts, on its fabric (``event.fabric`` and ``event.tenant`` loaded)."""
    fabric = event.fabric
    facts = facts_of(event, fabric.slug, fabric.cluster.slug if fabric.cluster_id else "",
                     event.tenant.slug if event.tenant_id else "")
    matchers: dict[str, list[str]] = {"fabrics": [fabric.slug], "kinds": [event.kind]}
    if facts.port:
        matchers["ports"], where = [facts.port], f"port {facts.port}"
    elif facts.switch:
        matchers["switches"], where = [facts.switch], f"switch {facts.switch}"
    elif facts.hosts:
        matchers["hosts"], where = list(facts.hosts[:20]), "host " + ", ".join(facts.hosts[:3])
    else:
        where = "the whole fabric"
    return {"matchers": matchers, "about": f"{event.kind} on {where} of {fabric.name}"}
