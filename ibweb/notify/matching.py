"""What a rule or a silence matches: an event's facts (fabric, kind, severity, tenant, switch, port, hosts)
against lists of values and glob patterns (``fnmatch``, case-sensitive); an empty list matches anything."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from .models import SEVERITIES

__all__ = ["EventFacts", "facts_of", "matches"]

#: Alert fields that name nodes (``"leaf01"``, ``"leaf01 port 3"``), in the order the switch is looked for.
_NODE_FIELDS = ("port", "node", "a", "b")


@dataclass(frozen=True)
class EventFacts:
    """What matchers read of an event (as stored: decided before any rendering)."""

    fabric: str
    cluster: str
    kind: str
    severity: str
    tenant: str
    switch: str
    port: str
    hosts: tuple[str, ...]


def _node(label: str) -> str:
    return label.rsplit(" port ", 1)[0] if " port " in label else label


def facts_of(event, fabric_slug: str, cluster_slug: str, tenant_slug: str) -> EventFacts:
    """The :class:`EventFacts` of a stored :class:`~ibweb.events.models.Event`: its switch is the first node it
    names that is not one of its hosts (known on its topology); its port its ``port`` field (or its subject when it
    is a port)."""
    hosts = tuple(str(h[1]) for h in event.hosts or [] if isinstance(h, list | tuple) and len(h) >= 2)
    details = event.details if isinstance(event.details, dict) else {}
    named = [str(details[f]) for f in _NODE_FIELDS if isinstance(details.get(f), str) and details[f]]
    known = {str(h[1]) for h in event.hosts or [] if isinstance(h, list | tuple) and len(h) >= 3}
    # a name recorded without the fabric's topology ([-1, name]) may be a switch: the renderer still hides it below
    # ALL (the event is not resolved), so only names known as hosts are ruled out
    switch = next((_node(n) for n in named if _node(n) not in known), "")
    port = details.get("port") if isinstance(details.get("port"), str) else ""
    if not port and event.object_type == "port":
        port = event.object_id
    return EventFacts(fabric=fabric_slug, cluster=cluster_slug, kind=event.kind, severity=event.severity,
                      tenant=tenant_slug, switch=switch, port=port, hosts=hosts)


def _any_glob(patterns: list, values) -> bool:
    return any(fnmatchcase(v, str(p)) for p in patterns for v in values if v)


def matches(m, facts: EventFacts, min_severity: str | None = None) -> bool:
    """Whether matchers ``m`` (a rule or a silence) match ``facts``; ``min_severity``: the least severity."""
    if min_severity and SEVERITIES.index(facts.severity if facts.severity in SEVERITIES else "warning") \
            < SEVERITIES.index(min_severity):
        return False
    if m.kinds and facts.kind not in m.kinds:
        return False
    if m.fabrics and facts.fabric not in m.fabrics:
        return False
    if m.clusters and facts.cluster not in m.clusters:
        return False
    if m.tenants and facts.tenant not in m.tenants:
        return False
    if m.switches and not _any_glob(m.switches, [facts.switch]):
        return False
    if m.ports and not _any_glob(m.ports, [facts.port]):
        return False
    return not m.hosts or _any_glob(m.hosts, facts.hosts)
