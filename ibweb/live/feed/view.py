"""What one access view sees of a fabric's feed: the frame header filtered, the hosts it may name.

A :class:`FeedView` is computed once per (fabric, view key) and policy or topology change, from
:func:`ibweb.access.redaction` (the one place that decides which tenants' jobs and which hosts a
view sees); then every tick the runner filters the frame header once per active view
(:meth:`FeedView.header`), whatever the number of sockets that share the view.

* ``ALL``: the frame as the engine made it.
* ``TENANTS``: its tenants' jobs (also in SHARP, storage, hotspots and alerts); other tenants'
  traffic on a hotspot summed under ``"other tenant"``; hosts outside its tenants' partitions
  named ``host-<index>`` with GUID ``"hidden"`` (topology, alerts, storage servers).
* ``FABRIC``: aggregates only: no job, tenant, host name or GUID at all.

Per-link arrays are the fabric's and the same for every view.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from fabric_engine.topology import KIND_HOST
from fabric_engine.topology import Fabric as EngineFabric
from ibweb.access import HIDDEN, HIDDEN_NODE, host_label, redaction, view_from_key
from ibweb.relabel import candidates, relabel
from ibweb.runtime import record
from ibweb.tenancy.engine_policy import policy_version

__all__ = ["FeedView", "feed_view", "cached_feed_view", "view_from_key", "OTHER", "HIDDEN_NODE", "filter_sharp",
           "filter_storage"]

#: What other tenants' traffic on a hotspot is summed under.
OTHER = "other tenant"
#: Fields of an alert that name nodes (``found_a``/``found_b``: the ports a plan check found cabled instead).
_NAMED_FIELDS = ("node", "a", "b", "port", "label", "found_a", "found_b")
#: Fields of an alert that hold node GUIDs (``key``: a twin port key, ``"0x<node guid>/<port>"``).
_GUID_FIELDS = frozenset({"guid", "guids", "hosts", "key"})
_LINK_ARROW = " -> "
#: Free texts whose hidden names a view keeps (then starts again).
_TEXT_MEMO = 1024


@dataclass(frozen=True, eq=False)
class FeedView:
    """One view of one fabric: the tenants whose jobs it sees and the hosts it may name.

    ``tenants``: slugs and names of the tenants whose jobs are shown (``None``: all).
    ``hidden``: bool ``[N]`` over the fabric's nodes, the hosts named ``host-<i>`` (``None``: none).
    """

    key: str
    tenants: frozenset[str] | None
    hidden: np.ndarray | None
    fabric: EngineFabric | None = None
    _index: dict = field(default_factory=dict, repr=False)

    @property
    def shows_all(self) -> bool:
        return self.tenants is None and self.hidden is None

    @property
    def version(self) -> str:
        """A short digest of what the view shows (its tenants and hidden hosts): equal views, equal versions.

        Every frame carries the version of the view it was filtered for, so a socket whose
        snapshot was made for another version (a partition or tenant changed meanwhile) takes
        a new one.
        """
        if "version" not in self._index:
            h = hashlib.sha256(repr(sorted(self.tenants) if self.tenants is not None else None).encode())
            h.update(b"-" if self.hidden is None else np.packbits(self.hidden).tobytes())
            self._index["version"] = h.hexdigest()[:12]
        return self._index["version"]

    # ------------------------------------------------------------ topology
    def node_ids(self) -> tuple[list[str], list[str]]:
        """The ``name`` and ``guid`` arrays of the topology's nodes as this view sees them."""
        f = self.fabric
        names = [str(n) for n in f.node_name]
        guids = [f"0x{int(g):016x}" for g in f.guid]
        if self.hidden is not None:
            for i in np.flatnonzero(self.hidden).tolist():  # loop over the hidden hosts, to rewrite two lists
                names[i], guids[i] = host_label(i), HIDDEN
        return names, guids

    # ------------------------------------------------------------ frames
    def header(self, header: dict) -> dict:
        """The frame header (:meth:`FabricState.frame_header`, no per-link arrays) as this view sees it."""
        if self.shows_all:
            return header
        tenants = self.tenants
        jobs = [j for j in header.get("jobs") or [] if tenants is None or j.get("tenant") in tenants]
        mine = {j["id"] for j in jobs}
        out = {**header, "jobs": jobs}
        alerts = []
        for a in header.get("alerts") or []:  # a handful per tick
            if "job" in a and a["job"] not in mine:
                continue
            if a.get("tenant") is not None and tenants is not None and a["tenant"] not in tenants:
                continue
            alerts.append(self.alert(a))
        out["alerts"] = alerts
        if header.get("hotspots"):
            out["hotspots"] = [_hotspot(h, mine) for h in header["hotspots"]]
        if header.get("sharp"):
            out["sharp"] = filter_sharp(header["sharp"], tenants or frozenset())
        if header.get("storage"):
            out["storage"] = self._storage(filter_storage(header["storage"], tenants or frozenset()))
        return out

    def alert(self, alert: dict) -> dict:
        """``alert`` with the hosts this view may not name renamed (fields, link ends, GUIDs and message).

        A message the engine made from parts (``text`` with ``{0}``, ``{1}``... for the node indices
        ``nodes``) is rendered for the view; node and port fields (``"name port 3"``, ``"a -> b"``) are
        rewritten end by end; any other text is relabelled (:func:`ibweb.relabel.relabel`) with the hidden
        hosts it names (:meth:`free_text`) and what those fields' nodes read as. Nodes the view does not
        know (gone from the fabric, or no fabric yet) read as ``hidden node``; GUIDs (``guid``, ``guids``,
        ``hosts``, the GUID in a twin ``key``) of hidden or unknown nodes as ``"hidden"`` (fail-closed).
        """
        if self.hidden is None:
            return alert
        labels: dict[str, str] = {}  # names of its fields the view reads otherwise (nodes it does not know, too)
        out = {}
        for k, v in alert.items():
            if k in _NAMED_FIELDS and isinstance(v, str):
                out[k] = _LINK_ARROW.join(self._port_end(end, labels) for end in v.split(_LINK_ARROW))
            elif k == "guid" and isinstance(v, str):
                out[k] = self._guid(v)
            elif k in ("hosts", "guids") and isinstance(v, list):
                out[k] = [self._guid(g) if isinstance(g, str) else HIDDEN for g in v]
            elif k == "key" and isinstance(v, str):
                out[k] = self._port_key(v)
            elif k == "gone":  # objects of nodes gone from the fabric: those of the view's tenants then
                out[k] = [g for g in v if self._sees_gone(g)] if isinstance(v, list) else []
            else:
                out[k] = v
        rendered = self._render(alert.get("text"), alert.get("nodes"), alert.get("gone"))
        for k, v in out.items():
            if k in _NAMED_FIELDS or k in _GUID_FIELDS or k == "text" or not isinstance(v, str):
                continue
            if k == "message" and rendered is not None:
                out[k] = rendered
            else:
                out[k] = relabel(v, {**labels, **self._named_in(v)})
        return out

    def node_label(self, node: int) -> str:
        """What this view reads for node index ``node``: its name, ``host-<i>`` when hidden, ``hidden node`` when not
        a node of the view's fabric."""
        f = self.fabric
        if f is None or not isinstance(node, int) or not 0 <= node < f.num_nodes or node >= len(self.hidden):
            return HIDDEN_NODE
        return host_label(node) if self.hidden[node] else str(f.node_name[node])

    def _sees_gone(self, obj) -> bool:
        """Whether this view names ``obj``, a node gone from the fabric (:mod:`ibweb.telemetry.message_parts`):
        a switch, or a host of one of its tenants when it left."""
        if not isinstance(obj, dict):
            return False
        tenants = obj.get("tenants") if isinstance(obj.get("tenants"), list) else []
        return obj.get("switch") is True or any(isinstance(t, str) and t in (self.tenants or ()) for t in tenants)

    def _render(self, text, nodes, gone=None) -> str | None:
        """The message of template ``text`` naming ``nodes`` as this view reads them (``None``: no such parts):
        a node gone from the fabric by its object in ``gone`` if the view may name it, else ``hidden node``;
        the template's own words relabelled like a free text."""
        if not isinstance(text, str) or not isinstance(nodes, list):
            return None
        labels = [self.node_label(n) for n in nodes]
        hidden = {}
        for g in gone if isinstance(gone, list) else []:
            slot, name = (g.get("slot"), g.get("name")) if isinstance(g, dict) else (None, None)
            if not isinstance(name, str) or not isinstance(slot, int) or not 0 <= slot < len(labels):
                continue
            if nodes[slot] == -1 and self._sees_gone(g):
                labels[slot] = name
            elif not self._sees_gone(g):
                hidden[name] = HIDDEN_NODE
        try:
            return relabel(text, {**hidden, **self._named_in(text)}).format(*labels)
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):  # not a template of these nodes
            return None

    def _port_end(self, end: str, labels: dict[str, str]) -> str:
        """One end of a node or port field (``"name"``, ``"name port 3"``) with its node as this view reads it."""
        name, sep, port = end.rpartition(" port ") if " port " in end else (end, "", "")
        if not name:
            return end
        i = self._lookup(name)
        shown = HIDDEN_NODE if i is None else self.node_label(i)
        if shown != name:
            labels[name] = shown
        return f"{shown}{sep}{port}"

    def free_text(self, text: str) -> str:
        """A free text (no parts known: a routing warning, a failure) as this view reads it: relabelled
        (:func:`ibweb.relabel.relabel`) with every hidden host it names, by name or GUID."""
        if self.hidden is None or not isinstance(text, str):
            return text
        return relabel(text, self._named_in(text))

    def _named_in(self, text: str) -> dict[str, str]:
        """``{name: host-<i>}`` (``{GUID: "hidden"}``) of the hidden hosts whose names (node or port GUIDs) stand
        in free ``text``, whatever the punctuation around them."""
        f = self.fabric
        if f is None or not text:
            return {}
        memo = self._index.setdefault("texts", {})  # an alert's texts come again every tick
        if text in memo:
            return memo[text]
        if "words" not in self._index:  # the most words and characters a node name (or a GUID) holds
            names = f.node_name.astype(str)
            self._index["words"] = int(np.char.count(names, " ").max(initial=0)) + 1
            self._index["longest"] = max(int(np.char.str_len(names).max(initial=0)), 18)
        found = {}
        for name in candidates(text, self._index["words"], self._index["longest"]):
            guid = name[:2] in ("0x", "0X")
            i = self._lookup_guid(name) if guid else self._lookup(name)
            if i is not None and i < len(self.hidden) and self.hidden[i]:
                found[name] = HIDDEN if guid else host_label(i)
        if len(memo) >= _TEXT_MEMO:
            memo.clear()
        memo[text] = found
        return found

    def _guid(self, text: str) -> str:
        """A node GUID (``"0x..."``) as this view reads it: ``"hidden"`` for a hidden or unknown node."""
        node = self._lookup_guid(text)
        return HIDDEN if node is None or node >= len(self.hidden) or self.hidden[node] else text

    def _port_key(self, key: str) -> str:
        """A twin port key ``"0x<guid>/<port>"``: a hidden host's GUID as ``host-<i>``, an unknown one hidden."""
        guid, sep, port = key.partition("/")
        node = self._lookup_guid(guid)
        if node is None or node >= len(self.hidden):
            return f"{HIDDEN}{sep}{port}"
        return f"{host_label(node)}{sep}{port}" if self.hidden[node] else key

    def _storage(self, section: dict | None) -> dict | None:
        if not section or self.hidden is None:
            return section
        servers = []
        for s in section.get("servers", []):
            i = s.get("node")
            if isinstance(i, int) and 0 <= i < len(self.hidden) and self.hidden[i]:
                s = {**s, "name": host_label(i)}
            servers.append(s)
        return {**section, "servers": servers}

    def _lookup(self, name: str) -> int | None:
        """Index of the node named ``name`` in the view's fabric (``None``: no such node, or no fabric)."""
        try:
            return self.fabric.node(name) if self.fabric is not None else None
        except KeyError:
            return None

    def _lookup_guid(self, text: str) -> int | None:
        """Index of the node with node or port GUID ``text`` (``"0x..."``; ``None``: unknown, or not a GUID)."""
        try:
            return self.fabric.node(int(text, 16)) if self.fabric is not None else None
        except (KeyError, ValueError):
            return None


def _hotspot(hotspot: dict, mine: set[str]) -> dict:
    kept, other = [], 0.0
    for j in hotspot.get("jobs", []):
        if j["id"] in mine or j["id"] == "background":
            kept.append(j)
        else:
            other += j.get("gbps") or 0.0
    if other:
        kept.append({"id": OTHER, "gbps": round(other, 3)})
    return {**hotspot, "jobs": kept}


def filter_sharp(section: dict | None, tenants) -> dict | None:
    """The ``sharp`` section as ``tenants``' users see it: their jobs, their jobs' names on switches and events."""
    if not section:
        return section
    jobs = [j for j in section.get("jobs", []) if j.get("tenant") in tenants]
    mine = {j["id"] for j in jobs}
    switches = [{**s, "jobs": [j for j in s.get("jobs", []) if j in mine]} for s in section.get("switches", [])]
    events = [e for e in section.get("events", []) if e.get("job") in mine]
    out = {**section, "jobs": jobs, "switches": switches, "events": events}
    if isinstance(section.get("allowed_tenants"), list):
        out["allowed_tenants"] = [t for t in section["allowed_tenants"] if t in tenants]
    return out


def filter_storage(section: dict | None, tenants) -> dict | None:
    """The ``storage`` section as ``tenants``' users see it: their jobs and tenants (and the background row)."""
    if not section:
        return section
    return {**section, "jobs": [j for j in section.get("jobs", []) if j.get("tenant") in tenants],
            "tenants": [t for t in section.get("tenants", []) if t["tenant"] in tenants or t["tenant"] == "background"]}


def feed_view(key: str, row, fabric: EngineFabric | None) -> FeedView:
    """The :class:`FeedView` of view ``key`` on fabric ``row`` whose engine runs ``fabric`` (uses the database).

    Which jobs and hosts are shown is :func:`ibweb.access.redaction`'s decision; without a
    fabric (not discovered yet) a restricted view names no host at all.
    """
    view = view_from_key(key)
    if view.sees_all:
        return FeedView(key, None, None, fabric)
    shown = redaction(view, row, fabric)
    tenants = shown.tenants if shown.tenants is not None else frozenset()
    if fabric is None:
        return FeedView(key, tenants, np.zeros(0, dtype=bool), None)
    hidden = shown.hidden_hosts(fabric.kind == KIND_HOST, fabric.guid)
    return FeedView(key, tenants, hidden, fabric)


_memo: dict[tuple, tuple] = {}
_MEMO_SIZE = 64


def cached_feed_view(key: str, row, expect: str | None = None) -> tuple[FeedView | None, list[str], list[str]]:
    """``(FeedView, node names, node GUIDs)`` of view ``key`` on ``row`` as its record and policy are now.

    Computed once per process, record version and policy version (sockets of a view share it);
    ``(None, [], [])`` before the fabric's engine published a record. ``expect``: the view
    version the fabric's runner filters frames for; a held view of another version is computed
    again. Uses the database.
    """
    h = record.head(row.pk, record.row_identity(row))
    if h is None:
        return None, [], []
    stamp = (row.pk, key, h["version"], policy_version(row.pk))
    held = _memo.get(stamp)
    if held is None or (expect is not None and held[0].version != expect):
        fv = feed_view(key, row, record.fabric(row.pk, h))
        names, guids = fv.node_ids() if fv.fabric is not None else ([], [])
        held = (fv, names, guids)
        if len(_memo) >= _MEMO_SIZE:
            _memo.pop(next(iter(_memo)))
        _memo[stamp] = held
    return held
