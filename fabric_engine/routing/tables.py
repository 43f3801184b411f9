"""The :class:`Routing` object: linear forwarding tables and the paths they give."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import RoutingError
from ..topology import Fabric

__all__ = ["Routing", "NO_PATH", "MAX_HOPS"]

#: LFT entry for "no route" (OpenSM's OSM_NO_PATH); 0 means "deliver to this switch".
NO_PATH = 255
#: Longest path followed before a loop is declared.
MAX_HOPS = 64


@dataclass(frozen=True, eq=False)
class Routing:
    """Forwarding state of every switch of a fabric (LMC 0).

    Attributes
    ----------
    fabric : Fabric
    lft : ndarray, uint8, shape ``(num_switches, max_lid + 1)``
        ``lft[switch_index, lid]`` is the out port; 0 is the switch itself,
        ``NO_PATH`` (255) an unreachable LID.
    engine : str
        Name of the engine that built it (``"minhop"``, ``"opensm-dump"``, ...).
    """

    fabric: Fabric
    lft: np.ndarray
    engine: str
    info: dict = field(default_factory=dict)

    @property
    def engine_used(self) -> str:
        """The engine whose tables these are: the fallback's (``info["fallback"]``) when ``engine`` gave it up."""
        fallback = (self.info or {}).get("fallback")
        return fallback["engine"] if isinstance(fallback, dict) and fallback.get("engine") else self.engine

    def __post_init__(self) -> None:
        want = (self.fabric.num_switches, self.fabric.max_lid + 1)
        if self.lft.shape[0] != want[0] or self.lft.shape[1] < want[1] or self.lft.dtype != np.uint8:
            raise RoutingError(f"LFT of shape {self.lft.shape} {self.lft.dtype} does not fit {want} uint8")

    # ------------------------------------------------------------------ walking
    def port_paths(self, first_link: np.ndarray, dst_lid: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Incidence of paths that leave on ``first_link`` and follow the LFTs to ``dst_lid``.

        The general walk behind :meth:`paths`; a multi-port HCA (a storage server)
        sends from a chosen port. One step per hop, vectorised over flows.

        Parameters
        ----------
        first_link : ndarray of int, ``(F,)``
            Directed link out of the sending port (-1: not cabled).
        dst_lid : ndarray of int, ``(F,)``
            LID of the receiving port.

        Returns
        -------
        incidence : scipy.sparse.csr_matrix, float64, ``(F, 2L)``
            1 on every directed link crossed; empty rows for broken paths.
        broken : ndarray of bool, ``(F,)``
            No route, an uncabled port or a loop (still travelling after ``MAX_HOPS``).
        """
        f = self.fabric
        first = np.asarray(first_link, dtype=np.int64)
        lids = np.asarray(dst_lid, dtype=np.int64)
        n = len(first)
        dst_nodes = f.lid_to_node[np.clip(lids, 0, len(f.lid_to_node) - 1)]
        broken = (first < 0) | (dst_nodes < 0)
        flow = np.flatnonzero(~broken)
        link = first[flow]
        hops_f, hops_l = [], []
        for _ in range(MAX_HOPS):
            if flow.size == 0:
                break
            hops_f.append(flow)
            hops_l.append(link)
            cur = f.dl_dst[link]
            arrived = cur == dst_nodes[flow]
            flow, cur = flow[~arrived], cur[~arrived]
            sw = f.switch_index[cur]
            port = np.where(sw >= 0, self.lft[np.maximum(sw, 0), lids[flow]], NO_PATH).astype(np.int64)
            ok = (port != 0) & (port != NO_PATH) & (port <= f.nports[cur])
            broken[flow[~ok]] = True
            flow, cur, port = flow[ok], cur[ok], port[ok]
            link = f.port_out_link[f.port_offset[cur] + port - 1]
            dead = link < 0
            broken[flow[dead]] = True
            flow, link = flow[~dead], link[~dead]
        broken[flow] = True  # still travelling after MAX_HOPS: a loop
        fl = np.concatenate(hops_f) if hops_f else np.zeros(0, dtype=np.int64)
        li = np.concatenate(hops_l) if hops_l else np.zeros(0, dtype=np.int64)
        keep = ~broken[fl]
        m = sp.csr_matrix((np.ones(int(keep.sum())), (fl[keep], li[keep])), shape=(n, 2 * f.num_links))
        m.sum_duplicates()
        return m, broken

    def paths(self, src_hosts: np.ndarray, dst_hosts: np.ndarray, *, return_broken: bool = False,
              adaptive: bool = False):
        """Incidence of the routed paths of host pairs.

        Parameters
        ----------
        src_hosts, dst_hosts : array of int, shape ``(F,)``
            Node indices of the hosts; the destination is the LID of the host's first port.
        adaptive : bool
            Model adaptive routing instead of the LFTs: every flow is split evenly over its
            minimal next hops at each switch (:func:`fabric_engine.routing.adaptive.adaptive_paths`);
            entries are then fractions.

        Returns
        -------
        scipy.sparse.csr_matrix, float64, shape ``(F, 2L)``
            ``M[i, d] = 1`` where flow ``i`` crosses directed link ``d``. Rows of broken
            paths are empty. With ``return_broken``, also the boolean mask of those rows.
        """
        src = np.asarray(src_hosts, dtype=np.int64)
        dst = np.asarray(dst_hosts, dtype=np.int64)
        if src.shape != dst.shape:
            raise RoutingError("src_hosts and dst_hosts differ in length")
        if adaptive:
            from .adaptive import adaptive_paths

            m = adaptive_paths(self.fabric, src, dst)
            broken = (np.diff(m.indptr) == 0) & (src != dst)
            return (m, broken) if return_broken else m
        f = self.fabric
        m, broken = self.port_paths(f.port_out_link[f.port_offset[src]], f.port_lid[f.port_offset[dst]])
        return (m, broken) if return_broken else m

    def trace(self, src: int | str, dst: int | str, model=None) -> list[dict]:
        """The hops from host ``src`` to host ``dst``, like ``ibtracert``.

        Each hop: ``{"node", "name", "lid", "in_port", "out_port", "link", "latency_ns"}``;
        ``latency_ns`` is the estimated time from leaving ``src`` to reaching this node
        (:mod:`fabric_engine.routing.latency`; ``model`` is a ``LatencyModel``, default
        130 ns per switch and 5 ns per metre of cable). A host's path to itself is the host
        alone. Raises :class:`RoutingError` when the path breaks or loops.
        """
        from .latency import LatencyModel

        model = model or LatencyModel()
        f = self.fabric
        s = f.node(src) if isinstance(src, str) else int(src)
        t = f.node(dst) if isinstance(dst, str) else int(dst)
        if s == t:
            return [{"node": s, "name": str(f.node_name[s]), "lid": int(f.lid[s]), "in_port": None, "out_port": None,
                     "link": None, "latency_ns": 0.0}]
        m, broken = self.paths(np.array([s]), np.array([t]), return_broken=True)
        if broken[0]:
            raise RoutingError(f"no route from {f.node_name[s]} to {f.node_name[t]}")
        links = m.indices  # unordered; order them by following the chain from s
        nxt = {int(f.dl_src[d]): int(d) for d in links}
        hops, node, in_port, ns = [], s, None, 0.0
        while True:
            if len(hops) > len(nxt):  # each link once at most: more is a loop in the chain
                raise RoutingError(f"the route from {f.node_name[s]} to {f.node_name[t]} loops at {f.node_name[node]}")
            d = nxt.get(node)
            hops.append({"node": node, "name": str(f.node_name[node]), "lid": int(f.lid[node]),
                         "in_port": in_port, "out_port": int(f.dl_src_port[d]) if d is not None else None,
                         "link": d, "latency_ns": round(ns, 3)})
            if d is None:
                return hops
            if f.switch_index[node] >= 0:
                ns += model.switch_ns
            ns += float(f.length_m[d % f.num_links]) * model.ns_per_m
            node, in_port = int(f.dl_dst[d]), int(f.dl_dst_port[d])
