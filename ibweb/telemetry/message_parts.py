"""A telemetry event that names cabling changes, made of parts: nodes by index, vanished ones as objects.

A routing event names the changes that made the fabric re-route (``re-routed with minhop after
gpu0005 vanished; ...``). Each change (:func:`fabric_engine.telemetry.diff.diff_topology`) carries
its message as parts (:func:`fabric_engine.telemetry.alerts.named`: ``text`` with ``{0}``, ``{1}``...
and ``nodes``, indices in the new discovery, -1 for a node it lacks). A node the new discovery lacks
has no index and no longer is in the fabric's name index, so :func:`held` adds to each change the
objects of those nodes as the previous discovery held them: ``gone``, ``[{"slot", "name", "guid",
"tenants"}]`` (``slot``: its ``{k}`` in ``text``; ``guid``: ``"0x<node GUID>"``; ``tenants``: slugs of
the tenants whose partitions held it then; ``switch``: true for a switch, fabric-wide).
:func:`templated` makes an event's finished message of these parts (``text``, ``nodes``, ``gone``), so
the one renderer (:class:`ibweb.access.alert_render.AlertRenderer`: the feed's and the event store's) renders it
for each view slot by slot from the objects it recorded (:func:`ibweb.access.alert_objects.slots`). The
telemetry source's conditions (a cable down, a node missing, a port's error counters) name a node the
discovery lacks the same way, resolved on the reference cabling (``node``, the ends ``a``/``b`` or a port's
``port`` and ``guid``). Changes
between two other discoveries (a fresher one than the fabric's: :class:`~ibweb.telemetry.lft_tracker.RoutingTracker`)
are quoted on the fabric the event is about by :func:`rebased`, then :func:`held` on the discovery that holds
their nodes.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Sequence

from django.db import DatabaseError

from fabric_engine.topology import KIND_HOST, Fabric
from ibweb.access.host_sets import host_tenants

__all__ = ["held", "rebased", "templated", "escape", "shifted"]

log = logging.getLogger("ibweb.telemetry")


def escape(text: str) -> str:
    """``text`` as a literal of a template (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def shifted(template: str, by: int) -> str | None:
    """``template`` with ``{k}`` renumbered ``{k + by}`` (``None``: not a template of numbered fields)."""
    out = []
    try:
        for literal, name, spec, conv in string.Formatter().parse(template):
            out.append(escape(literal))
            if name is not None:
                out.append("{" + str(int(name) + by) + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "")
                           + "}")
    except ValueError:
        return None
    return "".join(out)


def _slots(change: dict) -> tuple[list[str], list[str]]:
    """Names and node GUIDs of the nodes a change names, in the order of its ``{k}``."""
    if isinstance(change.get("node"), str):
        return [change["node"]], [str(change.get("guid", ""))]
    if isinstance(change.get("port"), str) and isinstance(change.get("guid"), str):  # a port's condition
        return [change["port"].rsplit(" port ", 1)[0]], [change["guid"]]
    names = [str(change.get(k, "")).rsplit(" port ", 1)[0] for k in ("a", "b")]
    return names, [str(g) for g in change.get("guids") or []]


def rebased(changes: Sequence[dict], fabric: Fabric) -> list[dict]:
    """``changes`` with their ``nodes`` re-indexed on ``fabric`` by the GUIDs the changes carry: -1 for a node
    ``fabric`` lacks (or a slot without a GUID: read as ``hidden node``), for :func:`held` to resolve."""
    out = []
    for change in changes:
        nodes = change.get("nodes")
        if not isinstance(nodes, list):
            out.append(dict(change))
            continue
        guids = _slots(change)[1]
        index = []
        for k in range(len(nodes)):
            try:
                index.append(fabric.node(int(guids[k], 16)))
            except (IndexError, KeyError, ValueError):
                index.append(-1)
        out.append({**change, "nodes": index})
    return out


def held(changes: Sequence[dict], old: Fabric, row) -> list[dict]:
    """``changes`` with ``gone`` added where they name a node the new discovery lacks, resolved on ``old`` (the
    discovery it was in) with its tenants then (:func:`ibweb.access.host_sets.host_tenants` of ``row``).

    Uses the database; when it cannot be read (or ``row`` is None), the objects have no tenant (hidden below
    ``ALL``: fail-closed).
    """
    wanted: list[tuple[int, int, str, str, int]] = []  # (change, slot, name, guid, index in old)
    for c, change in enumerate(changes):
        nodes = change.get("nodes")
        if not isinstance(nodes, list):
            continue
        names, guids = _slots(change)
        for k, n in enumerate(nodes):
            if n != -1 or k >= len(guids):
                continue
            try:
                index = old.node(int(guids[k], 16))
            except (KeyError, ValueError):
                index = -1
            wanted.append((c, k, names[k] if k < len(names) else "", guids[k], index))
    if not wanted:
        return list(changes)
    hosts = [w[4] for w in wanted if w[4] >= 0 and int(old.kind[w[4]]) == KIND_HOST]
    try:
        owners = dict(zip(hosts, host_tenants(row, old, hosts), strict=True)) if row is not None else {}
    except DatabaseError:
        log.warning("fabric %s: tenants of vanished hosts unreadable; naming them to ALL only", row.pk)
        owners = {}
    out = [dict(c) for c in changes]
    for c, k, name, guid, index in wanted:
        name = str(old.node_name[index]) if index >= 0 else name  # as ``old`` held it (a port's condition: its GUID)
        obj = {"slot": k, "name": name, "guid": guid, "tenants": owners.get(index, [])}
        if index >= 0 and int(old.kind[index]) != KIND_HOST:
            obj["switch"] = True
        out[c].setdefault("gone", []).append(obj)
    return out


def templated(message: str, changes: Sequence[dict]) -> dict:
    """The parts of ``message``, a text that quotes the ``message`` of some of ``changes`` (in their order):
    ``{"text", "nodes", "gone"}`` with the changes' nodes and objects renumbered into one template; ``{}``
    when it quotes none. ``text.format`` of the names gives ``message`` back."""
    text, nodes, gone, rest = [], [], [], message
    for change in changes:
        t, m, ns = change.get("text"), change.get("message"), change.get("nodes")
        if not (isinstance(t, str) and isinstance(m, str) and m and isinstance(ns, list)):
            continue
        at = rest.find(m)
        part = shifted(t, len(nodes)) if at >= 0 else None
        if part is None:
            continue
        text += [escape(rest[:at]), part]
        gone += [{**g, "slot": g["slot"] + len(nodes)} for g in change.get("gone") or []
                 if isinstance(g, dict) and isinstance(g.get("slot"), int)]
        nodes += [int(n) for n in ns]
        rest = rest[at + len(m):]
    if not nodes:
        return {}
    return {"text": "".join(text) + escape(rest), "nodes": nodes, "gone": gone}
