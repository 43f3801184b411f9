"""What an alert names, resolved on the fabric it was raised on: the hosts, whatever field or text names them.

An alert names hosts in many ways: a port or node field (``"gpu0006 port 1"``), a link end
(``link``, ``links``: directed link indices, as a ``counter_reset`` lists them), a node GUID
(``guid``, ``guids``, a twin deviation's ``hosts`` and its ``key`` ``"0x<guid>/<port>"``), or its
message alone. :func:`named_hosts` finds them all on one :class:`FabricNames` (one per engine
fabric, built once by the recorder), so the event store keeps every host an event names as
``[node index, name, "0x<node GUID>"]`` and each view renders the event from that list
(:mod:`ibweb.events.visibility`). Switches are fabric-wide and never listed. A host the fabric no longer
holds (an alert's ``gone``: :mod:`ibweb.telemetry.message_parts`) is listed as the alert recorded it, with
the tenants whose partitions held it then: ``[-1, name, "0x<node GUID>", [tenant slugs]]``.

Pure (no Django): numpy and the engine's :class:`~fabric_engine.topology.Fabric`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

from fabric_engine.topology import KIND_HOST
from ibweb.relabel import candidates

__all__ = ["FabricNames", "named_hosts", "gone_objects", "NAMED_FIELDS", "GUID_FIELDS", "LINK_ARROW"]

#: Fields of an alert that name nodes or ports (``found_a``/``found_b``: the peers a plan check found cabled
#: instead; ``label``: a twin deviation's port or link).
NAMED_FIELDS = ("port", "node", "a", "b", "found_a", "found_b", "label")
#: Fields of an alert that hold node GUIDs (``"0x..."``, one or a list; ``key``: ``"0x<node GUID>/<port>"``).
GUID_FIELDS = ("guid", "guids", "hosts", "key")
#: How a label names both ends of a link.
LINK_ARROW = " -> "
#: A twin's port key (``"0x<node GUID>/<port>"``), as a label or a message may name a port.
_KEY = re.compile(r"0x[0-9A-Fa-f]{1,16}(/\d+)?")
#: The most links of one alert whose ends are resolved (a summary alert lists at most 50).
_MOST_LINKS = 200


def _node_of(label: str) -> str:
    """``"gpu0001 port 1"`` -> ``"gpu0001"``."""
    return label.rsplit(" port ", 1)[0] if " port " in label else label


class FabricNames:
    """Lookups of one engine fabric: host names and GUIDs to ``[index, name, "0x<guid>"]``, link ends, text scans."""

    def __init__(self, fabric) -> None:
        self.fabric = fabric
        hosts = fabric.hosts
        self._by_name = {str(fabric.node_name[h]): int(h) for h in hosts.tolist()}
        self._guid_index = {int(g): i for i, g in enumerate(fabric.guid.tolist())}
        self._switches = frozenset(str(n) for n in fabric.node_name[fabric.kind != KIND_HOST])
        self._words = max((n.count(" ") + 1 for n in self._by_name), default=1)
        self._longest = max((len(n) for n in self._by_name), default=0) + 20  # a name, or a GUID with its port

    def entry(self, node: int) -> list | None:
        """``[index, name, "0x<guid>"]`` of node ``node``; ``None`` for a switch."""
        f = self.fabric
        if int(f.kind[node]) != KIND_HOST:
            return None
        return [int(node), str(f.node_name[node]), f"0x{int(f.guid[node]):016x}"]

    def by_name(self, name: str) -> list | None:
        """The host named ``name``: its entry; ``None`` for a switch; ``[-1, name]`` for a node not in the fabric."""
        node = self._by_name.get(name)
        if node is not None:
            return self.entry(node)
        return None if name in self._switches else [-1, name]

    def by_guid(self, text: str) -> list | None:
        """The node of a node or port GUID ``text`` (``"0x..."``): a host's entry, ``None`` for a switch,
        ``[-1, text]`` if unknown."""
        try:
            value = int(text, 16)
        except ValueError:
            return [-1, text]
        node = self._guid_index.get(value)
        if node is None:  # a port GUID names its node too
            ports, found = self.fabric.guid_index.nodes([value])
            node = int(ports[0]) if found[0] else None
        return [-1, text] if node is None else self.entry(node)

    def link_ends(self, d: int) -> list[int]:
        """Node indices of both ends of directed link ``d`` (none for an index outside the fabric)."""
        f = self.fabric
        if not 0 <= d < 2 * f.num_links:
            return []
        return [int(f.dl_src[d]), int(f.dl_dst[d])]

    def in_text(self, text: str) -> list[list]:
        """The hosts ``text`` names by name, node or port GUID, whatever punctuation stands around them
        (:func:`ibweb.relabel.candidates`; a run such as ``gpu001-ib`` may also list ``gpu001``: fail-closed)."""
        out = []
        for name in candidates(text, self._words, self._longest):
            if name[:2] in ("0x", "0X"):
                entry = self.by_guid(name.partition("/")[0])
                out.append(entry if entry is not None and entry[0] >= 0 else None)
            elif name in self._by_name:
                out.append(self.entry(self._by_name[name]))
        return out

    def in_template(self, alert: Mapping) -> list[list]:
        """The nodes a structured alert names (``text`` with ``{0}``... and their ``nodes``), with the names
        ``message`` gives them: a node the fabric does not hold is its object as the alert recorded it (``gone``:
        ``[-1, name, "0x<guid>", [tenant slugs then]]``; none for a switch), else ``[-1, name]``."""
        text, nodes, message = alert.get("text"), alert.get("nodes"), alert.get("message")
        if not (isinstance(text, str) and isinstance(nodes, list) and isinstance(message, str)):
            return []
        shown = _template_names(text, message)
        gone = gone_objects(alert)
        out = []
        for i, n in enumerate(nodes[:_MOST_LINKS]):
            if isinstance(n, int) and not isinstance(n, bool) and 0 <= n < self.fabric.num_nodes:
                out.append(self.entry(n))
            elif i in gone:
                out.append(gone[i])
            elif shown is not None and i < len(shown):
                out.append(self.by_name(shown[i]))
        return out


def gone_objects(alert: Mapping) -> dict[int, list | None]:
    """The objects of the nodes an alert names that its fabric no longer holds (``gone``: ``{"slot", "name",
    "guid", "tenants"}`` each, :mod:`ibweb.telemetry.message_parts`), by slot: a host's entry with its tenants
    then, ``[-1, name, "0x<guid>", [slugs]]``; ``None`` for a switch (fabric-wide). Malformed ones are left out
    (their slots read as unknown nodes: hidden below ``ALL``)."""
    out: dict[int, list | None] = {}
    for g in alert["gone"] if isinstance(alert.get("gone"), list) else []:
        if not (isinstance(g, Mapping) and isinstance(g.get("slot"), int) and isinstance(g.get("name"), str)):
            continue
        if g.get("switch") is True:
            out[g["slot"]] = None
            continue
        tenants = g.get("tenants") if isinstance(g.get("tenants"), list) else []
        guid = g.get("guid") if isinstance(g.get("guid"), str) and _KEY.fullmatch(g["guid"]) else ""
        tenants = [t for t in tenants if isinstance(t, str)]
        out[g["slot"]] = [-1, g["name"], guid, tenants]
    return out


def _template_names(template: str, message: str) -> list[str] | None:
    """What ``message`` puts in place of ``{0}``, ``{1}``... of ``template`` (None when it does not fit)."""
    parts, fields = [], []
    try:
        for literal, name, _, _ in string.Formatter().parse(template):
            parts.append(re.escape(literal))
            if name is not None:
                parts.append("(.+?)")
                fields.append(int(name))
    except ValueError:
        return None
    m = re.fullmatch("".join(parts), message, re.S)
    if m is None:
        return None
    out: dict[int, str] = {}
    for k, value in zip(fields, m.groups(), strict=True):
        out.setdefault(k, value)
    return [out.get(k, "") for k in range(max(out, default=-1) + 1)]


def named_hosts(alert: Mapping, names: FabricNames) -> list[list]:
    """Every host ``alert`` names, once each: ``[index, name, "0x<guid>"]``, or ``[-1, name]`` for a node (or
    GUID) the fabric does not hold (every view below ``ALL`` reads those as ``hidden node``)."""
    found: list = names.in_template(alert)  # first: a node gone from the fabric is its recorded object
    for k in NAMED_FIELDS:
        value = alert.get(k)
        if isinstance(value, str):  # a name, a port, a link's two ends, or a twin's port key
            for end in (e.strip() for e in value.split(LINK_ARROW)):
                if _KEY.fullmatch(end):
                    found.append(names.by_guid(end.partition("/")[0]))
                elif end:
                    found.append(names.by_name(_node_of(end)))
    links = [alert.get("link")] + list(alert.get("links") or [])[:_MOST_LINKS]
    for d in links:
        if isinstance(d, int) and not isinstance(d, bool):
            found += [names.entry(n) for n in names.link_ends(d)]
    for k in GUID_FIELDS:
        value = alert.get(k)
        values = value if isinstance(value, list) else [value]
        for v in values[:_MOST_LINKS]:
            if isinstance(v, str) and v.lower().startswith("0x"):
                found.append(names.by_guid(v.partition("/")[0]))
    if isinstance(alert.get("message"), str):
        found += names.in_text(alert["message"])
    out, seen = [], set()
    for entry in found:
        if entry is None or entry[1] in seen:
            continue
        seen.add(entry[1])
        out.append(entry)
    return out
