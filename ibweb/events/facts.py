"""What an engine alert is about: its identity, severity, subject and message (pure; no Django).

The engine raises alerts as plain dicts in each frame (``frame["alerts"]``): job
alerts of the emulator (``no_route``, ``isolation``, ``sharp_fallback``), port
error alerts and topology events of telemetry-fed fabrics (``errors``,
``link_down``, ``node_vanished``, ... from :mod:`fabric_engine.telemetry.diff`),
``counter_suspect`` (a held counter read: ``port``, ``counter``, ``link``, ``reason``),
``routing``, ``stale`` and ``sweep_failures``. :func:`fact_of` turns one into an
:class:`AlertFact` with the structured objects it names: ``hosts`` (every host, however the
alert names it: fields, link ends, GUIDs, its message; see :mod:`ibweb.access.alert_objects`), ``parts``
(its template and the objects of its slots, when it has one) and ``jobs`` (the jobs it lists, each with its
tenant), so that each view renders the event from them (:class:`ibweb.access.alert_render.AlertRenderer`,
the feed's renderer) and names no host or job it may not see.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ibweb.access.alert_objects import FabricNames, objects, slots
from ibweb.access.alert_render import JOBS_SUFFIX
from ibweb.live.signals import ONE_SHOT_KINDS

__all__ = ["AlertFact", "alert_key", "fact_of", "SEVERITY_OF_KIND", "JOB_KINDS", "UNKNOWN", "JOBS_SUFFIX"]

#: Severity of the alert kinds that carry none.
SEVERITY_OF_KIND = {"no_route": "critical", "isolation": "critical", "sharp_fallback": "warning",
                    "stale": "warning", "sweep_failures": "warning", "routing": "info",
                    "counter_suspect": "warning"}
#: Kinds about a job: the job's tenant owns the event.
JOB_KINDS = ("no_route", "isolation", "sharp_fallback")
#: Kinds of a port whose ``jobs`` are those it hit (listed per view), never the event's owners.
JOBS_HIT_KINDS = ("link_down_long",)
_SEVERITIES = {"info": "info", "warning": "warning", "critical": "critical", "error": "critical"}
#: Fields that name an alert's subject, in the order they make up its key.
_SUBJECT = ("job", "partition", "port", "counter", "node", "guid", "a", "b", "link")
#: What ``host_of`` answers for a name that is not in the fabric (a node gone from the discovery).
UNKNOWN = ()
#: Fields of an alert that name nodes (``"gpu0001"``, ``"gpu0001 port 1"``); ``found_a``/``found_b``: the peers
#: a plan check found cabled instead of the planned ones.
_NAMED = ("port", "node", "a", "b", "found_a", "found_b")


@dataclass(frozen=True)
class AlertFact:
    """One alert, ready to store: ``key`` identifies it across ticks."""

    key: str
    kind: str
    severity: str
    object_type: str
    object_id: str
    message: str
    link: int | None = None
    node: str = ""
    job: str = ""
    tenant: str | None = None
    hosts: list = field(default_factory=list)
    details: dict = field(default_factory=dict)
    jobs: list = field(default_factory=list)
    resolved: bool = False
    parts: dict = field(default_factory=dict)


def _node_of(label: str) -> str:
    """``"gpu0001 port 1"`` -> ``"gpu0001"``."""
    return label.rsplit(" port ", 1)[0] if " port " in label else label


def _message(alert: Mapping) -> str:
    if isinstance(alert.get("message"), str) and alert["message"]:
        return alert["message"]
    kind = str(alert.get("kind", "alert"))
    if kind == "no_route":
        return f"job {alert.get('job')}: {alert.get('flows', '?')} flows have no route"
    if kind == "isolation":
        where = f" in partition {alert['partition']}" if alert.get("partition") else ""
        reason = str(alert.get("reason", "")).replace("-", " ")
        return f"job {alert.get('job')}: {alert.get('flows', '?')} flows blocked{where} ({reason})"
    if kind == "sharp_fallback":
        return f"job {alert.get('job')} runs without SHARP: {alert.get('reason')}"
    rest = ", ".join(f"{k} {v}" for k, v in alert.items() if k not in ("kind", "severity"))
    return f"{kind.replace('_', ' ')}{': ' + rest if rest else ''}"


def alert_key(alert: Mapping) -> str:
    """What makes two alerts the same event: their kind and subject (not their numbers or message); for a one-shot
    kind (:data:`ibweb.live.signals.ONE_SHOT_KINDS`) without a subject, when it was made and its message."""
    kind = str(alert.get("kind") or "alert")[:32]
    subject = [f"{k}={alert[k]}" for k in _SUBJECT if alert.get(k) not in (None, "")]
    if kind in ONE_SHOT_KINDS and not subject:
        subject = ([f"t={alert['t']}"] if alert.get("t") is not None else []) + [str(alert.get("message", ""))[:160]]
    return "|".join([kind, *subject])[:255]


def fact_of(alert: Mapping, tenant_of_job: Mapping[str, str | None] | None = None,
            host_of: Callable[[str], tuple[int, int] | None] | None = None,
            names: FabricNames | None = None) -> AlertFact:
    """The :class:`AlertFact` of one engine alert.

    Parameters
    ----------
    alert : mapping
        The alert as in ``frame["alerts"]``.
    tenant_of_job : mapping, optional
        Job id -> tenant slug (from the frame's ``jobs``).
    host_of : callable, optional
        Node name -> ``(node index, node GUID)`` when the node is a host, ``None`` for a
        switch, :data:`UNKNOWN` for a name not in the fabric. Hosts named by the alert are
        listed in ``hosts`` (``[index, name, "0x<node GUID>"]``) so that users who may not
        see them get the message with the names hidden; a name not in the fabric (or every
        name, without ``host_of``) is listed as ``[-1, name]``, which every view below
        ``ALL`` reads as ``hidden node`` (fail-closed).
    names : FabricNames, optional
        The fabric the alert was raised on: ``hosts`` then lists every host the alert names
        (fields, link ends, GUIDs, template, message; :func:`ibweb.access.alert_objects.objects`), ``parts``
        its template (``{"text", "slots"}``: :func:`ibweb.access.alert_objects.slots`) and the fact is
        ``resolved``. Without it only the named fields are listed, and views below ``ALL``
        read the message with every host they may not see relabelled (or not at all).

    A list of ``jobs`` is kept as ``[[id, tenant], ...]``, its ``"; jobs a, b"`` taken off the
    message: each view appends the jobs it may see.
    """
    kind = str(alert.get("kind") or "alert")[:32]
    severity = _SEVERITIES.get(str(alert.get("severity", "")).lower()) or SEVERITY_OF_KIND.get(kind, "warning")
    key = alert_key(alert)
    jobs = [str(j) for j in alert.get("jobs") or [] if isinstance(j, str | int)]
    # an alert naming one job (a twin deviation on its link) is that job's, and its tenant's; a long link down
    # only lists the jobs it hit: it stays the fabric's, each view reading the jobs it may see
    owning = [] if kind in JOBS_HIT_KINDS else jobs
    job = str(alert.get("job") or (owning[0] if len(owning) == 1 else ""))
    link = alert.get("link")
    link = int(link) if isinstance(link, int | float) and not isinstance(link, bool) and link >= 0 else None
    names_of = [_node_of(str(alert[k])) for k in _NAMED if isinstance(alert.get(k), str)]
    if job:
        object_type, object_id = "job", job
    elif isinstance(alert.get("port"), str):
        object_type, object_id = "port", alert["port"]
    elif link is not None:
        object_type, object_id = "link", str(link)
    elif names_of:
        object_type, object_id = "node", names_of[0]
    else:
        object_type, object_id = "fabric", ""
    template = slots(alert, names) if names is not None else None
    hosts = objects(alert, names, template) if names is not None else _hosts(names_of, host_of)
    details = json.loads(json.dumps(dict(alert), default=str))
    message = _message(alert)
    text = alert.get("text") if template is not None else None
    if jobs:
        suffix = JOBS_SUFFIX + ", ".join(jobs[:5])
        message = message.removesuffix(suffix)
        text = text.removesuffix(suffix.replace("{", "{{").replace("}", "}}")) if text is not None else None
    parts = {"text": text, "slots": template} if text is not None and isinstance(alert.get("message"), str) else {}
    listed = [[j, (tenant_of_job or {}).get(j)] for j in jobs]
    return AlertFact(key=key, kind=kind, severity=severity, object_type=object_type, object_id=str(object_id)[:200],
                     message=message, link=link, node=names_of[0] if names_of else "", job=job,
                     tenant=_tenant(job, owning, tenant_of_job or {}), hosts=hosts, details=details, jobs=listed,
                     resolved=names is not None, parts=parts)


def _tenant(job: str, jobs: list[str], tenant_of_job: Mapping[str, str | None]) -> str | None:
    """The tenant owning an alert: its job's, or the one tenant of all the jobs it names (else none)."""
    if job:
        return tenant_of_job.get(job)
    tenants = {tenant_of_job.get(j) for j in jobs}
    return next(iter(tenants)) if len(tenants) == 1 else None


def _hosts(names, host_of) -> list:
    out = []
    for name in dict.fromkeys(n for n in names if n):
        found = host_of(name) if host_of is not None else UNKNOWN
        if found is None:  # a switch: fabric-wide, always named
            continue
        out.append([int(found[0]), name, f"0x{int(found[1]):016x}"] if found else [-1, name])
    return out
