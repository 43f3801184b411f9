"""The orders OpenSM visits switches, ports and destinations in, so our tables never depend on file order.

OpenSM keeps switches, nodes and ports in ``cl_qmap`` maps keyed by their GUID as stored, in
network byte order (``osm_subn.c``: ``cl_qmap_insert(&sw_guid_tbl, node_guid, ...)``). The map
compares keys as 64-bit integers, so on a little-endian host (x86) its order is that of the
*byte-swapped* GUID: the last byte of a GUID is its most significant key byte. Every routing
engine starts from ``sw_guid_tbl`` in that order (:func:`guid_key`, :func:`switch_order`).

Min-hop, updn and dfsssp visit destination LIDs in ``port_order_list``
(``osm_ucast_mgr.c``, ``ucast_mgr_build_lfts`` and ``sort_ports_by_switch_load``): the switches
with the most channel adapters attached first (a stable sort of ``sw_guid_tbl``: glibc's
``qsort`` is a merge sort), the adapter ports of each switch in the switch's port order, then
every other port (switch port 0) in ``port_guid_tbl`` order (:func:`minhop_lid_order`).

>>> import numpy as np
>>> guids = np.array([0xff, 0x100], dtype=np.uint64)
>>> [hex(int(g)) for g in guids[np.argsort(guid_key(guids))]]
['0x100', '0xff']
"""

from __future__ import annotations

import numpy as np

from ..topology import KIND_HOST, Fabric
from .graph import LidTargets, lid_targets

__all__ = ["guid_key", "switch_order", "endport_links", "minhop_lid_order", "OpenSMOrder"]


def guid_key(guid: np.ndarray) -> np.ndarray:
    """The ``cl_qmap`` key of each GUID on a little-endian host: the GUID byte-swapped, uint64."""
    return np.asarray(guid, dtype=np.uint64).byteswap()


def switch_order(fabric: Fabric) -> np.ndarray:
    """Switch indices in OpenSM's ``sw_guid_tbl`` order, int64 ``[S]``."""
    return np.argsort(guid_key(fabric.guid[fabric.switches]), kind="stable").astype(np.int64)


def endport_links(fabric: Fabric) -> np.ndarray:
    """Ports of every switch cabled to a channel adapter (``sw->endport_links``), int64 ``[S]``."""
    f = fabric
    d = np.flatnonzero((f.switch_index[f.dl_src] >= 0) & (f.kind[f.dl_dst] == KIND_HOST))
    return np.bincount(f.switch_index[f.dl_src[d]], minlength=f.num_switches).astype(np.int64)


class OpenSMOrder:
    """Destination LIDs relabelled into OpenSM's min-hop visiting order.

    Attributes
    ----------
    target_order : int64 ``[S]``
        Switch indices in the order their adapters are visited (most adapters first, then GUID order).
    rank : int64 ``[S]``
        Position of every switch in ``target_order`` (the inverse permutation).
    targets : LidTargets
        Every routable LID, ordered by ``(rank of its delivering switch, port it leaves that switch by)``;
        its ``target`` field holds the *rank*, ``switch`` the switch index.
    """

    def __init__(self, fabric: Fabric, tg: LidTargets | None = None) -> None:
        f = fabric
        tg = lid_targets(f) if tg is None else tg
        by_guid = switch_order(f)
        load = endport_links(f)
        self.target_order = by_guid[np.argsort(-load[by_guid], kind="stable")]
        self.rank = np.empty(f.num_switches, dtype=np.int64)
        self.rank[self.target_order] = np.arange(f.num_switches)
        r = self.rank[tg.target]
        o = np.lexsort((tg.exit_port, r))
        self.switch = tg.target[o]
        self.targets = LidTargets(tg.lids[o], r[o], tg.exit_port[o], tg.is_host[o])


def minhop_lid_order(fabric: Fabric) -> np.ndarray:
    """LIDs in OpenSM's ``port_order_list`` order: adapter ports switch by switch, then switch LIDs."""
    t = OpenSMOrder(fabric).targets
    return t.lids[np.argsort(~t.is_host, kind="stable")]
