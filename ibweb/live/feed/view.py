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

Alerts and free texts are rendered by the one alert renderer (:class:`ibweb.access.alert_render.AlertRenderer`,
:meth:`FeedView.renderer`), the event store's, so the feed and the stored events read alike. Per-link arrays are
the fabric's and the same for every view.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from fabric_engine.topology import KIND_HOST
from fabric_engine.topology import Fabric as EngineFabric
from ibweb.access import HIDDEN, HIDDEN_NODE, AlertRenderer, Redaction, host_label, redaction, view_from_key
from ibweb.access.alert_objects import FabricNames
from ibweb.runtime import record
from ibweb.tenancy.engine_policy import policy_version

__all__ = ["FeedView", "feed_view", "cached_feed_view", "view_from_key", "OTHER", "HIDDEN_NODE", "filter_sharp",
           "filter_storage"]

#: What other tenants' traffic on a hotspot is summed under.
OTHER = "other tenant"


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

    def renderer(self) -> AlertRenderer:
        """This view's :class:`~ibweb.access.alert_render.AlertRenderer` of the fabric's alerts (made once): the
        event store's renderer, with the hosts of :attr:`hidden` hidden."""
        if "renderer" not in self._index:
            f = self.fabric
            if f is None or self.hidden is None or len(self.hidden) != f.num_nodes:
                shown = None if self.hidden is None else frozenset()
            else:
                shown = frozenset(int(g) for g in f.guid[(f.kind == KIND_HOST) & ~self.hidden].tolist())
            self._index["renderer"] = AlertRenderer(Redaction(self.tenants, shown), FabricNames(f))
        return self._index["renderer"]

    def alert(self, alert: dict) -> dict:
        """``alert`` as this view reads it (:meth:`ibweb.access.alert_render.AlertRenderer.alert`): the hosts it
        may not name relabelled in its fields, GUIDs and texts, its message rendered from its parts."""
        return alert if self.hidden is None else self.renderer().alert(alert)

    def free_text(self, text: str) -> str:
        """A free text (no parts known: a routing warning, a failure) as this view reads it: relabelled
        with every hidden host it names, by name or GUID."""
        return text if self.hidden is None else self.renderer().text(text)

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
    h = record.head_of(row)
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
