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

__all__ = ["PortLoads", "port_loads", "switch_hops", "credit_loops", "CreditLoopCheck", "RoutingReport", "report",
           "engine_warnings", "unreachable_entries"]


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
    # Per switch, a histogram of its LFT entries towards ``lids`` (ports 1..pmax), a block of switches at a time.
    counts = np.zeros((s_count, 256), dtype=np.int64)
    step = max(1, _WALK_CELLS // max(1, len(lids)))
    for s0 in range(0, s_count, step):
        block = routing.lft[s0:s0 + step, lids]
        key = np.arange(len(block), dtype=np.int64)[:, None] * 256 + block
        counts[s0:s0 + len(block)] = np.bincount(key.ravel(), minlength=256 * len(block)).reshape(-1, 256)
    counts = counts[:, 1:max(pmax, 1) + 1]
    lv = levels(f, switch_distances(f))
    is_up = (peer >= 0) & (lv.level[np.maximum(peer, 0)] == lv.level[:, None] + 1) & (lv.level[:, None] > 0)
    return PortLoads(counts[:, :pmax], peer >= 0, is_up)


#: Engines whose tables leave some switch-to-switch (switch, LID) entries unrouted by design: OpenSM's ftree
#: (a switch LID from switches with no common ancestor) and OpenSM's own dumps, which ftree may have written.
SWITCH_LIDS_UNROUTED_BY_DESIGN = ("ftree", "opensm-dump")
#: (switch, LID) walks followed at once by :func:`switch_hops`.
_WALK_CELLS = 1 << 22


def switch_hops(routing: Routing, lids: np.ndarray | None = None) -> np.ndarray:
    """Switch-to-switch hops from every switch to every LID along the LFTs, int16 ``[S, len(lids)]``.

    0 at the delivering switch (the one the LID's port is cabled to), -1 where the walk hits
    NO_PATH, a dead port or a loop.
    """
    f = routing.fabric
    lids = _host_lids(routing) if lids is None else np.asarray(lids, dtype=np.int64)
    s_count = f.num_switches
    out = np.full((s_count, len(lids)), -1, dtype=np.int16)
    owner = f.lid_to_node[np.minimum(lids, len(f.lid_to_node) - 1)]
    sw_nodes = f.switches
    # Walks of a block of switches at a time: at 32,768 GPUs (2,560 switches, 35,328 LIDs) the walks of
    # all switches at once need gigabytes of index arrays (issue 15).
    step = max(1, _WALK_CELLS // max(1, len(lids)))
    for s0 in range(0, s_count, step):
        rows = np.arange(s0, min(s_count, s0 + step))
        cur = np.repeat(rows, len(lids))
        col = np.tile(np.arange(len(lids)), len(rows))
        start = cur.copy()
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
    n_vl = int(vl.max(initial=0)) + 1
    size = n_vl * n_links
    # Dependencies of a block of LIDs at a time, each edge kept once: at 32,768 GPUs the routes to every
    # host LID have 90 million (switch, LID) steps and a few million distinct edges (issue 15).
    step = max(1, _WALK_CELLS // max(1, f.num_switches))
    keys = []
    for c0 in range(0, len(lids), step):
        a, b, col = _dependencies(routing, lids[c0:c0 + step], from_hosts)
        lane = vl[c0:c0 + step][col]
        keys.append(np.unique((lane * n_links + a) * size + lane * n_links + b))
    key = np.unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    src, dst = key // size, key % size
    a, b = src % n_links, dst % n_links
    g = sp.csr_matrix((np.ones(len(key), dtype=np.int8), (src, dst)), shape=(size, size))
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
    unreachable_entries: int = 0
    unreachable_host_entries: int = 0
    entries: int = 0
    warnings: list = field(default_factory=list)
    fallback: dict | None = None
    #: Of ``unreachable_entries``: switch-to-switch entries the engine leaves unrouted by design (ftree).
    unreachable_expected: int = 0

    @property
    def engine_used(self) -> str:
        """The engine whose tables these are: the fallback's when the requested engine gave the fabric up."""
        return self.fallback["engine"] if self.fallback else self.engine

    def to_dict(self) -> dict:
        return {"engine": self.engine, "engine_used": self.engine_used, "fallback": self.fallback,
                "fabric": self.fabric_name, "ports": self.ports,
                "per_switch": self.per_switch, "hop_histogram": self.hop_histogram,
                "unreachable_pairs": self.unreachable_pairs, "host_pairs": self.host_pairs,
                "unreachable_entries": self.unreachable_entries,
                "unreachable_host_entries": self.unreachable_host_entries, "entries": self.entries,
                "unreachable_expected": self.unreachable_expected,
                "warnings": list(self.warnings),
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
            f"unreachable (switch, LID) entries: {self.unreachable_entries} of {self.entries} "
            f"({self.unreachable_host_entries} towards host LIDs"
            + (f"; {self.unreachable_expected} switch-to-switch, unrouted by design as OpenSM's ftree leaves them"
               if self.unreachable_expected else "") + ")",
            f"credit loops: {self.loop_text}",
            *(f"warning: {w}" for w in self.warnings),
        ])


def engine_warnings(routing: Routing) -> list[str]:
    """What an engine could not do as designed, in words: its fallback, irregularities it met (from ``info``)."""
    info = routing.info or {}
    out = []
    fb = info.get("fallback")
    if fb:
        out.append(fb["reason"])
    for key in ("ftree", "updn"):
        out += [f"{key}: {note}" for note in (info.get(key) or {}).get("notes", [])]
    if info.get("switches_missing"):
        miss = info["switches_missing"]
        out.append(f"the LFT dump has no table for {len(miss)} switch(es): {', '.join(miss[:5])}"
                   + (" ..." if len(miss) > 5 else ""))
    if info.get("unmapped_entries"):
        out.append(f"{info['unmapped_entries']} LFT entries name LIDs or ports this fabric does not have")
    return out


def unreachable_entries(routing: Routing, hops: np.ndarray | None = None) -> tuple[int, int, int]:
    """``(unreachable, towards hosts, total)`` (switch, LID) entries whose walk along the LFTs never arrives.

    Every switch against every routable LID (hosts and switches); a walk breaks on NO_PATH, a dead
    port or a loop. ``hops`` may pass :func:`switch_hops` over ``lid_targets(...).lids`` already computed.
    """
    tg = lid_targets(routing.fabric)
    hops = switch_hops(routing, tg.lids) if hops is None else hops
    bad = hops < 0
    return int(bad.sum()), int(bad[:, tg.is_host].sum()), int(bad.size)


def report(routing: Routing) -> RoutingReport:
    """Port balance, path lengths, unreachable pairs and entries, credit loops and engine warnings of ``routing``."""
    f = routing.fabric
    tg = lid_targets(f)
    loads = port_loads(routing, tg.lids[tg.is_host])
    # Host pairs: every host (from the switch its first port is cabled to) to the first-port LID
    # of every other host; hosts without a cable can neither send nor receive.
    all_hops = switch_hops(routing, tg.lids)
    bad, bad_hosts, entries = unreachable_entries(routing, all_hops)
    # OpenSM's ftree leaves a switch's LID unrouted from switches with no common ancestor
    # (fabric_route_to_switches): by design, and no host traffic uses those entries.
    expected = bad - bad_hosts if routing.engine in SWITCH_LIDS_UNROUTED_BY_DESIGN else 0
    lids = f.port_lid[f.port_offset[f.hosts]].astype(np.int64)
    col = np.searchsorted(tg.lids, lids, sorter=np.argsort(tg.lids))
    known = np.zeros(len(lids), dtype=bool)
    if len(tg.lids):
        col = np.argsort(tg.lids)[np.minimum(col, len(tg.lids) - 1)]
        known = tg.lids[col] == lids
    hops = np.where(known[None, :], all_hops[:, np.where(known, col, 0)], -1)
    hl = f.host_leaf[f.hosts]
    n_h = f.num_hosts
    # Hosts behind the same switch see the same hops: count pairs per source switch (weighted by its hosts)
    # instead of a [hosts x hosts] array (a billion pairs at 32,768 GPUs), then take each host's pair to itself out.
    sw, row_of, per_sw = np.unique(f.switch_index[hl[hl >= 0]], return_inverse=True, return_counts=True)
    h = hops[sw]  # [switches with hosts, hosts]: path length h + 2, -1 unreachable
    top = int(h.max(initial=-1)) + 2
    key = np.arange(len(sw), dtype=np.int64)[:, None] * (top + 1) + np.where(h >= 0, h + 2, 0)  # column 0: none
    per_len = np.bincount(key.ravel(), minlength=len(sw) * (top + 1)).reshape(len(sw), top + 1)
    del key
    hist = per_sw @ per_len
    self_len = np.where(h[row_of, np.flatnonzero(hl >= 0)] >= 0, h[row_of, np.flatnonzero(hl >= 0)] + 2, 0)
    hist -= np.bincount(self_len, minlength=top + 1)  # a connected host to itself: not a pair
    unreachable = int(hist[0]) + int((hl < 0).sum()) * (n_h - 1)
    hist_v = np.flatnonzero(hist[1:] > 0) + 1
    hist_c = hist[hist_v]
    check = credit_loops(routing, tg.lids[tg.is_host])
    per = loads.per_switch()
    names = [str(n) for n in f.node_name[f.switches]]
    per_switch = {names[i]: {"min": _num(per["min"][i]), "max": _num(per["max"][i]), "mean": _num(per["mean"][i])}
                  for i in range(len(names))}
    pairs = n_h * (n_h - 1)
    hist = {int(k): int(v) for k, v in zip(hist_v, hist_c, strict=True)}
    warnings = engine_warnings(routing)
    if bad - expected:
        warnings.append(f"{bad - expected} of {entries} (switch, LID) entries have no working route "
                        f"({bad_hosts} towards host LIDs)")
    fallback = (routing.info or {}).get("fallback")
    return RoutingReport(routing.engine, loads.summary(), per_switch, hist, unreachable, pairs, check, f.name,
                         check.describe(f), bad, bad_hosts, entries, warnings,
                         dict(fallback) if fallback else None, expected)


def _num(v: float) -> float | None:
    return None if np.isnan(v) else float(v)

