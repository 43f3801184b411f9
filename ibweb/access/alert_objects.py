"""What an alert names, resolved on the fabric it is about: the hosts it names and the objects of its template.

An alert names hosts in many ways: a port or node field (``"gpu0006 port 1"``), a link end (``link``,
``links``: directed link indices), a node or port GUID (``guid``, ``guids``, a twin deviation's ``hosts``
and its ``key`` ``"0x<guid>/<port>"``), the nodes of its template (``text`` with ``{0}``... and ``nodes``,
with ``gone``: the nodes the fabric no longer holds, :mod:`ibweb.telemetry.message_parts`), or its message
alone. :func:`objects` lists each host once, as JSON (what an event stores in ``hosts``):

* ``[index, name, "0x<node GUID>"]``: a host of the fabric; ``[index, name, "0x<node GUID>", [], [written]]``
  when the alert also writes it otherwise (a port GUID, a port key ``"0x<GUID>/<port>"``);
* ``[-1, name, "0x<node GUID>", [tenant slugs]]``: a host gone from the fabric, with the tenants whose
  partitions held it then (a node of its template's ``gone``; its fields and GUIDs that write it are it too);
* ``[-1, text]``: a node (or GUID) the fabric does not hold.

Switches are fabric-wide: never listed (a template's slot names a switch by its name, a string).
:class:`ibweb.access.alert_render.AlertRenderer` renders an alert for a view from these alone, so the feed
(resolving them live) and the event store (resolving them once, when recording) read alike. Pure (no Django).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from fabric_engine.topology import KIND_HOST

from .relabel import candidates

__all__ = ["FabricNames", "objects", "text_objects", "slots", "end_object", "gone_objects", "gone_written",
           "NAMED_FIELDS", "GUID_FIELDS", "LINK_ARROW", "PORT_KEY", "UNKNOWN_SLOT"]

#: Fields of an alert that name nodes or ports (``found_a``/``found_b``: the peers a plan check found cabled
#: instead; ``label``: a twin deviation's port or link).
NAMED_FIELDS = ("port", "node", "a", "b", "found_a", "found_b", "label")
#: Fields of an alert that hold node GUIDs (``"0x..."``, one or a list; ``key``: ``"0x<node GUID>/<port>"``).
GUID_FIELDS = ("guid", "guids", "hosts", "key")
#: How a label names both ends of a link.
LINK_ARROW = " -> "
#: A GUID, or a twin's port key (``"0x<GUID>/<port>"``).
PORT_KEY = re.compile(r"0[xX][0-9A-Fa-f]{1,16}(/\d+)?")
#: A template slot whose node is unknown (not in the fabric, no object recorded): ``hidden node`` below ``ALL``.
UNKNOWN_SLOT = [-1, ""]
#: The most links, GUIDs or slots of one alert that are resolved (a summary alert lists at most 50).
_MOST = 200
#: Free texts whose hosts one :class:`FabricNames` keeps (then starts again).
_TEXT_MEMO = 1024


class FabricNames:
    """Lookups of one engine fabric (``None``: none known, every node unknown): names and GUIDs to their objects."""

    def __init__(self, fabric) -> None:
        self.fabric = fabric
        self._texts: dict[str, list[tuple[list, str]]] = {}
        self._entries: dict[int, tuple | None] = {}
        if fabric is None or not fabric.num_nodes:
            self._words, self._longest = 1, 18
            return
        names = fabric.node_name.astype(str)
        self._words = int(np.char.count(names, " ").max(initial=0)) + 1
        self._longest = max(int(np.char.str_len(names).max(initial=0)), 18) + 8  # a name, or a GUID with its port

    def entry(self, node: int) -> list | None:
        """``[index, name, "0x<guid>"]`` of node ``node``; ``None`` for a switch (kept: alerts come every tick)."""
        node = int(node)
        if node not in self._entries:
            f = self.fabric
            self._entries[node] = None if int(f.kind[node]) != KIND_HOST else \
                (node, str(f.node_name[node]), f"0x{int(f.guid[node]):016x}")
        found = self._entries[node]
        return None if found is None else list(found)

    def name_of(self, node: int) -> str:
        return str(self.fabric.node_name[node])

    def holds(self, node) -> bool:
        """Whether ``node`` is a node index of the fabric."""
        return (isinstance(node, int) and not isinstance(node, bool) and self.fabric is not None
                and 0 <= node < self.fabric.num_nodes)

    def by_name(self, name: str) -> list | None:
        """The object of node ``name``: a host's entry, ``None`` for a switch, ``[-1, name]`` if unknown."""
        try:
            node = self.fabric.node(name) if self.fabric is not None else None
        except KeyError:
            node = None
        return [-1, name] if node is None else self.entry(node)

    def by_guid(self, text: str) -> list | None:
        """The object of the node of a node or port GUID or a port key ``text``: a host's entry, ``None`` for a
        switch, ``[-1, text]`` if unknown."""
        try:
            node = self.fabric.node(int(text.partition("/")[0], 16)) if self.fabric is not None else None
        except (KeyError, ValueError):
            node = None
        return [-1, text] if node is None else self.entry(node)

    def link_ends(self, d) -> list[int]:
        """Node indices of both ends of directed link ``d`` (none for an index outside the fabric)."""
        f = self.fabric
        if f is None or not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < 2 * f.num_links:
            return []
        return [int(f.dl_src[d]), int(f.dl_dst[d])]

    def in_text(self, text: str) -> list[tuple[list, str]]:
        """``(entry, as written)`` of the hosts of the fabric ``text`` names by name, node or port GUID or port
        key, whatever punctuation stands around them (:func:`ibweb.access.relabel.candidates`; a run such as
        ``gpu001-ib`` may also list ``gpu001``: fail-closed). Unknown words are none (else every hex word
        would be hidden)."""
        if self.fabric is None or not text:
            return []
        found = self._texts.get(text)
        if found is not None:
            return found
        found = []
        for word in candidates(text, self._words, self._longest):
            m = self.by_guid(word) if PORT_KEY.fullmatch(word) else self.by_name(word)
            if m is not None and m[0] >= 0:
                found.append((m, word))
        if len(self._texts) >= _TEXT_MEMO:
            self._texts.clear()
        self._texts[text] = found
        return found


def gone_objects(alert: Mapping) -> dict[int, list | str]:
    """The nodes of an alert's template that its fabric no longer holds (``gone``: ``{"slot", "name", "guid",
    "tenants"}`` each), by slot: a host's object ``[-1, name, "0x<guid>", [slugs]]``, a switch's name (fabric-
    wide). Malformed ones are left out (their slots read as unknown nodes: hidden below ``ALL``)."""
    out: dict[int, list | str] = {}
    for g in alert["gone"] if isinstance(alert.get("gone"), list) else []:
        if not (isinstance(g, Mapping) and isinstance(g.get("slot"), int) and isinstance(g.get("name"), str)):
            continue
        if g.get("switch") is True:
            out[g["slot"]] = g["name"]
            continue
        tenants = g.get("tenants") if isinstance(g.get("tenants"), list) else []
        guid = g.get("guid") if isinstance(g.get("guid"), str) and PORT_KEY.fullmatch(g["guid"]) else ""
        out[g["slot"]] = [-1, g["name"], guid, [t for t in tenants if isinstance(t, str)]]
    return out


def slots(alert: Mapping, names: FabricNames) -> list | None:
    """What each ``{k}`` of an alert's template (``text``, ``nodes``) names: a host's entry, a switch's name, a
    gone node's object (:func:`gone_objects`), else :data:`UNKNOWN_SLOT`; ``None`` when it has no template."""
    text, nodes = alert.get("text"), alert.get("nodes")
    if not (isinstance(text, str) and isinstance(nodes, list)):
        return None
    gone = gone_objects(alert)
    out: list = []
    for k, n in enumerate(nodes[:_MOST]):
        if names.holds(n):
            m = names.entry(n)
            out.append(m if m is not None else names.name_of(n))
        elif n == -1 and k in gone:
            out.append(gone[k])
        else:
            out.append(list(UNKNOWN_SLOT))
    return out


def gone_written(template: list | None) -> dict[str, list]:
    """The hosts of a template (its :func:`slots`) gone from the fabric, by how an alert's fields write them: their
    name and node GUID (lower case). A field naming such a host reads it as its object (its tenants then), not as
    an unknown node."""
    out: dict[str, list] = {}
    for s in template or []:
        if isinstance(s, list) and len(s) >= 4 and s[0] < 0 and s[1]:
            out[s[1]] = s
            if s[2]:
                out[s[2].lower()] = s
    return out


def _or_gone(obj: list | None, written: str, gone: Mapping[str, list]) -> list | None:
    """``obj`` (a field's object), or the gone host written so when ``obj`` is an unknown node."""
    if obj is None or obj[0] >= 0 or len(obj) > 2 or not gone:
        return obj
    return gone.get(written) or gone.get(written.lower()) or obj


def _node_of(label: str) -> str:
    """``"gpu0001 port 1"`` -> ``"gpu0001"``."""
    return label.rsplit(" port ", 1)[0] if " port " in label else label


def end_object(end: str, names: FabricNames) -> list | None:
    """The object of one end of a node or port field (``"name"``, ``"name port 3"``, ``"0x<guid>/<port>"``)."""
    return names.by_guid(end) if PORT_KEY.fullmatch(end) else names.by_name(_node_of(end))


def objects(alert: Mapping, names: FabricNames, template: list | None = None) -> list[list]:
    """Every host ``alert`` names, once each (see the module docstring): its template's (``template``: its
    :func:`slots`, computed if not given), fields, link ends, GUIDs and message."""
    template = slots(alert, names) if template is None else template
    gone = gone_written(template)
    found: list[tuple[list | None, str]] = [(s, s[1]) for s in template or [] if isinstance(s, list)]
    for k in NAMED_FIELDS:
        value = alert.get(k)
        if isinstance(value, str):  # a name, a port, a link's two ends, or a twin's port key
            found += [(_or_gone(end_object(end, names), _node_of(end), gone), end)
                      for end in (e.strip() for e in value.split(LINK_ARROW)) if end]
    for d in [alert.get("link"), *list(alert.get("links") or [])[:_MOST]]:
        found += [(names.entry(n), "") for n in names.link_ends(d)]
    for k in GUID_FIELDS:
        value = alert.get(k)
        for v in (value if isinstance(value, list) else [value])[:_MOST]:
            if isinstance(v, str) and PORT_KEY.fullmatch(v):
                found.append((_or_gone(names.by_guid(v), v, gone), v))
    if isinstance(alert.get("message"), str):
        found += names.in_text(alert["message"])
    return _once(found)


def text_objects(text: str, names: FabricNames) -> list[list]:
    """The hosts a free ``text`` names, once each (as :func:`objects` lists them)."""
    return _once(names.in_text(text)) if text else []


def _once(found: list[tuple[list | None, str]]) -> list[list]:
    """Each host of ``found`` (``(object, as written)``) once: by name, with the other ways it is written."""
    out: dict[str, list] = {}
    for entry, written in found:
        if entry is None or not entry[1]:
            continue
        held = out.setdefault(entry[1], list(entry))
        if held[0] >= 0 and PORT_KEY.fullmatch(written) and written.lower() != held[2]:
            if len(held) == 3:
                held += [[], []]
            if written not in held[4]:
                held[4].append(written)
    return list(out.values())
