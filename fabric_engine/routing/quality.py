"""How good a routing is: port balance, path lengths, reachability and credit loops.

* **Port loads**: for every switch out-port, the number of destination LIDs whose
  LFT entry is that port (what OpenSM's ftree balances and ``ibdmchk`` reports).
* **Hops**: the number of switch-to-switch hops from every switch to every LID,
  following the LFTs (-1 where the walk breaks or loops). Host-to-host paths are these
  plus the two host cables.
* **Credit loops**: the channel dependency graph (CDG) has a vertex per directed link
  and an edge ``a -> b`` whenever some route enters a switch on ``a`` and leaves it on
  ``b``. A routing is deadlock-free iff the CDG of every virtual lane is acyclic
  (Dally & Seitz, IEEE Trans. Computers C-36, 1987). Cycles are found as strongly
  connected components (``scipy.sparse.csgraph``); one cycle is returned as links.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

from .graph import lid_targets, switch_distances, switch_port_peers
from .levels import levels
from .tables import MAX_HOPS, Routing

__all__ = ["PortLoads", "port_loads", "switch_hops", "credit_loops", "CreditLoopCheck", "RoutingReport", "report"]


@dataclass(frozen=True, eq=False)
class PortLoads:
    """Destination LIDs per switch out-port.

    ``counts`` int64 ``[S, P]`` (``counts[s, p - 1]``), ``to_switch`` bool ``[S, P]`` (the port
    is cabled to a switch), ``is_up`` bool ``[S, P]`` (it leads one level up).
    """

    counts: np.ndarray
    to_switch: np.ndarray
    is_up: np.ndarray

    def up_counts(self) -> np.ndarray:
        """Counts of every up port (int64, flat)."""
        return self.counts[self.is_up]

    def inter_switch(self) -> np.ndarray:
        """Counts of every port cabled to another switch (int64, flat)."""
        return self.counts[self.to_switch]

    def summary(self) -> dict:
        """``max``, ``min``, ``mean`` and ``spread`` (max - min) over the inter-switch ports."""
        c = self.inter_switch()
        if c.size == 0:
            return {"max": 0, "min": 0, "mean": 0.0, "spread": 0}
        return {"max": int(c.max()), "min": int(c.min()), "mean": float(c.mean()), "spread": int(c.max() - c.min())}

    def per_switch(self) -> dict[str, np.ndarray]:
        """Per switch over its inter-switch ports: ``min``, ``max``, ``mean`` (float64 ``[S]``, NaN if none)."""
        masked = np.where(self.to_switch, self.counts, np.nan)
        has = self.to_switch.any(axis=1)
        out = {}
        for name, fn in (("min", np.nanmin), ("max", np.nanmax), ("mean", np.nanmean)):
            v = np.full(len(has), np.nan)
            if has.any():
                v[has] = fn(masked[has], axis=1)
            out[name] = v
        return out


def _host_lids(routing: Routing) -> np.ndarray:
    tg = lid_targets(routing.fabric)
    return tg.lids[tg.is_host]


def port_loads(routing: Routing, lids: np.ndarray | None = None) -> PortLoads:
    """Count, for every switch out-port, the destination LIDs (default: all host LIDs) routed out of it."""
    f = routing.fabric
    lids = _host_lids(routing) if lids is None else np.asarray(lids, dtype=np.int64)
    peer = switch_port_peers(f)
    s_count, pmax = peer.shape
    entries = routing.lft[:, lids].astype(np.int64)
    ok = (entries > 0) & (entries <= pmax)
    rows = np.broadcast_to(np.arange(s_count)[:, None], entries.shape)
    counts = np.zeros((s_count, max(pmax, 1)), dtype=np.int64)
    np.add.at(counts, (rows[ok], entries[ok] - 1), 1)
    lv = levels(f, switch_distances(f))
    is_up = (peer >= 0) & (lv.level[np.maximum(peer, 0)] == lv.level[:, None] + 1) & (lv.level[:, None] > 0)
    return PortLoads(counts[:, :pmax], peer >= 0, is_up)


def switch_hops(routing: Routing, lids: np.ndarray | None = None) -> np.ndarray:
    """Switch-to-switch hops from every switch to every LID along the LFTs, int16 ``[S, len(lids)]``.

    0 at the delivering switch (the one the LID's port is cabled to), -1 where the walk hits
    NO_PATH, a dead port or a loop.
    """
    f = routing.fabric
    lids = _host_lids(routing) if lids is None else np.asarray(lids, dtype=np.int64)
    s_count = f.num_switches
    out = np.full((s_count, len(lids)), -1, dtype=np.int16)
    cur = np.broadcast_to(np.arange(s_count)[:, None], out.shape).ravel().copy()
    col = np.broadcast_to(np.arange(len(lids))[None, :], out.shape).ravel().copy()
    start = cur.copy()
    owner = f.lid_to_node[np.minimum(lids, len(f.lid_to_node) - 1)]
    sw_nodes = f.switches
    for hop in range(MAX_HOPS + 1):
        if cur.size == 0:
            break
        port = routing.lft[cur, lids[col]].astype(np.int64)
        live = (port > 0) & (port <= f.nports[sw_nodes[cur]])
        link = np.where(live, f.port_out_link[f.port_offset[sw_nodes[cur]] + np.where(live, port, 1) - 1], -1)
        there = np.where(link >= 0, f.dl_dst[np.maximum(link, 0)], -1)
        to_host = (link >= 0) & (there == owner[col]) & (f.switch_index[np.maximum(owner[col], 0)] < 0)
        done = ((port == 0) & (sw_nodes[cur] == owner[col])) | to_host
        out[start[done], col[done]] = hop
        nxt = np.where(link >= 0, f.switch_index[np.maximum(there, 0)], -1)
        go = ~done & (nxt >= 0)
        cur, col, start = nxt[go], col[go], start[go]
    return out


@dataclass(frozen=True, eq=False)
class CreditLoopCheck:
    """Result of :func:`credit_loops`: ``acyclic``, the ``cycle`` found (directed links, per VL) and sizes."""

    acyclic: bool
    cycle: list[int] = field(default_factory=list)
    cycle_vl: int | None = None
    vertices: int = 0
    edges: int = 0

    def describe(self, fabric) -> str:
        if self.acyclic:
            return f"acyclic ({self.edges} dependencies between {self.vertices} channels)"
        hops = " -> ".join(f"{fabric.node_name[fabric.dl_src[d]]}/{int(fabric.dl_src_port[d])}" for d in self.cycle)
        return f"credit loop on VL {self.cycle_vl} through {len(self.cycle)} channels: {hops}"


def _dependencies(routing: Routing, lids: np.ndarray, from_hosts: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CDG edges ``(a, b, lid_column)`` of the routes to ``lids``.

    With ``from_hosts`` only routes that some host's traffic takes count (walks start at
    the switches hosts are cabled to); otherwise every switch is a source too.
    """
    f = routing.fabric
    peer = switch_port_peers(f)
    s_count, pmax = peer.shape
    # out link of every (switch, lid column)
    sw_nodes = f.switches
    entry = routing.lft[:, lids].astype(np.int64)
    ok = (entry > 0) & (entry <= pmax)
    out_link = np.full(entry.shape, -1, dtype=np.int64)
    r, c = np.nonzero(ok)
    out_link[r, c] = f.port_out_link[f.port_offset[sw_nodes[r]] + entry[r, c] - 1]
    nxt = np.where(out_link >= 0, f.switch_index[f.dl_dst[np.maximum(out_link, 0)]], -1)
    if from_hosts:
        hl = f.host_leaf[f.hosts]
        starts = np.unique(f.switch_index[hl[hl >= 0]])
        used = np.zeros(entry.shape, dtype=bool)
        frontier = np.zeros(entry.shape, dtype=bool)
        frontier[starts] = True
        for _ in range(MAX_HOPS):
            if not frontier.any():
                break
            used |= frontier
            fr, fc = np.nonzero(frontier & (nxt >= 0))
            frontier = np.zeros(entry.shape, dtype=bool)
            frontier[nxt[fr, fc], fc] = True
            frontier &= ~used
    else:
        used = np.ones(entry.shape, dtype=bool)
    ur, uc = np.nonzero(used & (nxt >= 0))
    b = out_link[nxt[ur, uc], uc]
    keep = b >= 0
    return out_link[ur, uc][keep], b[keep], uc[keep]


def credit_loops(routing: Routing, lids: np.ndarray | None = None, vl: np.ndarray | None = None,
                 from_hosts: bool = True) -> CreditLoopCheck:
    """Check the channel dependency graph of the routes to ``lids`` (default: host LIDs) for cycles.

    ``vl[i]`` puts the routes to ``lids[i]`` on a virtual lane (default: all on VL 0,
    or ``routing.info["vl"]`` when the engine assigned lanes); each lane has its own CDG.
    """
    f = routing.fabric
    lids = _host_lids(routing) if lids is None else np.asarray(lids, dtype=np.int64)
    if vl is None and "vl_of_lid" in routing.info:
        vl = np.asarray(routing.info["vl_of_lid"])[lids]
    vl = np.zeros(len(lids), dtype=np.int64) if vl is None else np.asarray(vl, dtype=np.int64)
    n_links = 2 * f.num_links
    a, b, col = _dependencies(routing, lids, from_hosts)
    lane = vl[col]
    n_vl = int(vl.max(initial=0)) + 1
    g = sp.csr_matrix((np.ones(len(a), dtype=np.int8), (lane * n_links + a, lane * n_links + b)),
                      shape=(n_vl * n_links, n_vl * n_links))
    g.sum_duplicates()
    g.data[:] = 1
    n_comp, labels = connected_components(g, directed=True, connection="strong")
    sizes = np.bincount(labels, minlength=n_comp)
    big = np.flatnonzero(sizes > 1)
    if big.size == 0:
        return CreditLoopCheck(True, vertices=int(len(np.unique(np.r_[a, b]))), edges=int(g.nnz))
    comp = big[0]
    members = np.flatnonzero(labels == comp)
    sub = g[members][:, members]
    order, pred = breadth_first_order(sub, 0, directed=True, return_predecessors=True)
    back = sub[:, [0]].nonzero()[0]  # members with an edge back to the start
    u = int(back[0])
    path = [u]
    while path[-1] != 0:
        path.append(int(pred[path[-1]]))
    cycle = [int(members[i]) for i in reversed(path)]
    lane0 = cycle[0] // n_links
    return CreditLoopCheck(False, [c % n_links for c in cycle], lane0, int(len(np.unique(np.r_[a, b]))), int(g.nnz))


@dataclass(frozen=True, eq=False)
class RoutingReport:
    """Everything :func:`report` found; ``to_dict()`` is JSON-ready, ``str()`` is for people."""

    engine: str
    ports: dict
    per_switch: dict
    hop_histogram: dict
    unreachable_pairs: int
    host_pairs: int
    credit_loops: CreditLoopCheck
    fabric_name: str
    loop_text: str

    def to_dict(self) -> dict:
        return {"engine": self.engine, "fabric": self.fabric_name, "ports": self.ports,
                "per_switch": self.per_switch, "hop_histogram": self.hop_histogram,
                "unreachable_pairs": self.unreachable_pairs, "host_pairs": self.host_pairs,
                "credit_loops": {"acyclic": self.credit_loops.acyclic, "cycle": self.credit_loops.cycle,
                                 "vl": self.credit_loops.cycle_vl, "text": self.loop_text}}

    def __str__(self) -> str:
        p = self.ports
        hist = ", ".join(f"{k} links: {v}" for k, v in self.hop_histogram.items())
        return "\n".join([
            f"routing {self.engine} on {self.fabric_name}",
            f"destination LIDs per inter-switch port: min {p['min']}, max {p['max']}, mean {p['mean']:.2f}, "
            f"spread {p['spread']}",
            f"host-to-host path lengths: {hist or 'none'}",
            f"unreachable host pairs: {self.unreachable_pairs} of {self.host_pairs}",
            f"credit loops: {self.loop_text}",
        ])


def report(routing: Routing) -> RoutingReport:
    """Port balance, path-length histogram, unreachable host pairs and credit-loop check of ``routing``."""
    f = routing.fabric
    tg = lid_targets(f)
    loads = port_loads(routing, tg.lids[tg.is_host])
    # Host pairs: every host (from the switch its first port is cabled to) to the first-port LID
    # of every other host; hosts without a cable can neither send nor receive.
    lids = f.port_lid[f.port_offset[f.hosts]].astype(np.int64)
    hops = switch_hops(routing, lids)
    hl = f.host_leaf[f.hosts]
    src_sw = f.switch_index[hl[hl >= 0]]
    h = hops[src_sw]  # [connected hosts, hosts]
    valid = f.hosts[hl >= 0][:, None] != f.hosts[None, :]
    lengths = np.where(h >= 0, h + 2, -1)[valid]
    hist_v, hist_c = np.unique(lengths[lengths >= 0], return_counts=True)
    n_h = f.num_hosts
    unreachable = int((lengths < 0).sum()) + int((hl < 0).sum()) * (n_h - 1)
    check = credit_loops(routing, tg.lids[tg.is_host])
    per = loads.per_switch()
    names = [str(n) for n in f.node_name[f.switches]]
    per_switch = {names[i]: {"min": _num(per["min"][i]), "max": _num(per["max"][i]), "mean": _num(per["mean"][i])}
                  for i in range(len(names))}
    pairs = n_h * (n_h - 1)
    hist = {int(k): int(v) for k, v in zip(hist_v, hist_c, strict=True)}
    return RoutingReport(routing.engine, loads.summary(), per_switch, hist, unreachable, pairs, check, f.name,
                         check.describe(f))


def _num(v: float) -> float | None:
    return None if np.isnan(v) else float(v)

