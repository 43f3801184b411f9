"""Links and ports of the live API's history and rollups views, by **link identity**
(:mod:`ibweb.live.history.link_identity`): the current topology, the names of links' ends as the user may see
them, and the port a ``ports/<node>/<port>/`` route names."""

from __future__ import annotations

import numpy as np
from rest_framework.exceptions import NotFound

from fabric_engine.topology import Fabric as EngineFabric
from fabric_engine.topology.limits import MAX_NODE_PORTS
from ibweb.access import HIDDEN, HIDDEN_NODE, Redaction, find_node, host_label, node_name, redaction, view_of
from ibweb.fabrics.models import Fabric
from ibweb.live.api.base import FabricView
from ibweb.live.history import reads, ring
from ibweb.live.history.link_identity import LinkIdentities, guid_text, port_key
from ibweb.runtime import record

__all__ = ["current_topology", "Ends", "ends_for", "PortView", "peer"]


def _published(fabric: Fabric) -> tuple[dict, EngineFabric] | None:
    """The head and engine fabric of ``fabric``'s runtime record, or None before its engine published."""
    h = record.head_of(fabric)
    f = record.fabric(fabric.pk, h) if h is not None else None
    return (h, f) if f is not None else None


def current_topology(fabric: Fabric) -> tuple[LinkIdentities | None, int | None]:
    """The topology ``links/<d>/`` counts in: the ring's newest tick's (its identities, or None when recorded
    without them, and its directed links), else the published record's; ``(None, None)`` when neither."""
    run = reads.newest(fabric.pk)
    if run is not None:
        return ring.topology(fabric.pk, run[0]), run[1]
    published = _published(fabric)
    if published is None:
        return None, None
    h, f = published
    return ring.topology(fabric.pk, h["base"], f), 2 * f.num_links


class Ends:
    """The ends of link identities as a view sees them, named from ``tables`` (topologies, the current one
    first, then older ones for nodes gone since)."""

    def __init__(self, tables: list[LinkIdentities], shown: Redaction) -> None:
        self.tables, self.shown = tables, shown

    def end(self, guid: int, port: int) -> dict:
        """``{"guid", "port", "node"}`` of a port; a hidden host reads ``host-<i>`` (its index in the current
        topology; ``hidden node`` if it has left it) and GUID ``hidden``; a node of no known topology is
        hidden below the ``ALL`` view."""
        g = np.array([guid], dtype=np.uint64)
        for k, ids in enumerate(self.tables):  # newest topology first
            i = int(ids.node_index(g)[0])
            if i < 0:
                continue
            if self.shown.hidden_hosts(ids.node_host[i:i + 1], g)[0]:
                return {"guid": HIDDEN, "port": int(port), "node": host_label(i) if k == 0 else HIDDEN_NODE}
            return {"guid": guid_text(guid), "port": int(port), "node": str(ids.node_name[i])}
        if self.shown.shows_all:
            return {"guid": guid_text(guid), "port": int(port), "node": None}
        return {"guid": HIDDEN, "port": int(port), "node": HIDDEN_NODE}

    def pair(self, key) -> tuple[dict | None, dict | None]:
        """``tx`` and ``rx`` of an :data:`~ibweb.live.history.link_identity.IDENTITY` scalar (None: no link)."""
        if key is None:
            return None, None
        return self.end(int(key["tx_guid"]), int(key["tx_port"])), self.end(int(key["rx_guid"]), int(key["rx_port"]))

    def recablings(self, changes: list[reads.Recabling]) -> list[dict]:
        """``{"t", "from", "to"}`` of each change, ``from`` and ``to`` the receiving ends."""
        return [{"t": round(c.t, 3), "from": self.pair(c.before)[1], "to": self.pair(c.after)[1]} for c in changes]


def ends_for(request, fabric: Fabric, current: LinkIdentities | None, topology: EngineFabric | None = None) -> Ends:
    """The :class:`Ends` of ``fabric`` for the request's user: the current topology, then the ring's."""
    tables = [current] if current is not None else []
    tables += [ids for ids in reads.known(fabric.pk) if ids is not current]
    return Ends(tables, redaction(view_of(request.user), fabric, topology))


class PortView(FabricView):
    """A view of one port, ``node`` a name, a ``0x`` node or port GUID, or the ``host-<i>`` label of a hidden host
    (or the node GUID of a node only the ring's older topologies have)."""

    def port(self, request, slug: str, node: str, port: int) -> tuple[Fabric, Ends, LinkIdentities, int, str]:
        """The fabric, the ends' names, the current topology's identities, the node's GUID and its name as the
        user sees it; 404 for a node the user may not see or a port not cabled now nor in the ring."""
        fabric = self.fabric(request, slug)
        h, f = self.head(fabric), self.engine_fabric(fabric)
        current = ring.topology(fabric.pk, h["base"], f)
        ends = ends_for(request, fabric, current, f)
        hidden = ends.shown.hidden_nodes(f)
        i = find_node(f, node, hidden)
        guid, name = (int(f.guid[i]), node_name(f, i, hidden)) if i is not None else (_gone_guid(node), None)
        if i is None and guid is not None:
            seen = ends.end(guid, 1)
            guid, name = (None, None) if seen["guid"] == HIDDEN or seen["node"] is None else (guid, seen["node"])
        if guid is None:
            raise NotFound(f"no node {node!r} in fabric {fabric.slug}")
        key = port_key(guid, port) if 1 <= port <= MAX_NODE_PORTS else None
        if key is None or all(ids.find_ports(key)[0] < 0 for ids in ends.tables):
            raise NotFound(f"port {port} of {node} is not cabled")
        return fabric, ends, current, guid, name


def _gone_guid(node: str) -> int | None:
    """The GUID ``node`` spells (``0x`` and up to 16 hex digits), or None."""
    try:
        guid = int(node, 16) if node.lower().startswith("0x") else -1
    except ValueError:
        return None
    return guid if 0 <= guid < 2**64 else None


def peer(ends: Ends, guid: int, port: int) -> np.void | None:
    """The newest identity of the link leaving a port among the known topologies (None: never cabled)."""
    key = port_key(guid, port)
    for ids in ends.tables:  # newest first
        d = int(ids.find_ports(key)[0])
        if d >= 0:
            return ids.keys[d]
    return None
