"""RoCEv2 beside InfiniBand: the same jobs on the same Clos under ECMP hashing, static LFTs and adaptive routing.

A RoCEv2 fabric forwards every packet of a flow along one equal-cost path chosen by a hash of
its headers at each switch (ECMP, RFC 2992): the 5-tuple (source and destination IP, UDP
source port, destination port 4791, protocol). The UDP source port is the RoCEv2 entropy
field; NICs derive it from the queue pair, so each QP of a connection hashes on its own, and
NCCL spreads a connection's bytes over ``NCCL_IB_QPS_PER_CONNECTION`` QPs. Switches mix the
tuple with a per-switch hash seed; equal seeds (and equal hash functions) on consecutive
stages correlate their choices -- *hash polarization* -- so fewer distinct paths are used.

:class:`EcmpModel` models exactly that, vectorized over all QPs: each QP of a host pair gets
a 64-bit key from ``(src, dst, qp, salt)``; at every switch the QP leaves by the
``mix(key ^ seed[switch]) mod n``-th of the ``n`` ports one hop closer to the destination
switch (parallel cables count as separate next hops). A flow's row of the incidence is the
mean of its QPs' paths (bytes split evenly over the QPs). :func:`compare` runs the jobs'
collectives at once on three sides -- InfiniBand's LFTs, InfiniBand's adaptive routing
(:mod:`fabric_engine.routing.adaptive`) and RoCEv2 ECMP -- with the same max-min flow solver
(:func:`~fabric_engine.analysis.whatif.workload_impact`) and reports per job the collective
time, and per side the load imbalance over the equal-cost links (max/mean of offered load) and
flow collisions (QPs that share an inter-switch link with another QP).

Left out (``docs/roce-vs-infiniband.md``): PFC pauses, DCQCN rate control and their head-of-line
blocking; ECN marking thresholds; packet loss and retransmission; flowlet or packet spraying
(adaptive RoCE); time -- flows are fluid and steady.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import FabricEngineError
from ..routing import Routing, route
from ..routing.graph import switch_distances, switch_port_peers
from ..topology import Fabric
from ..workload import Job, expand_jobs
from .whatif import workload_impact

__all__ = ["mix64", "flow_keys", "switch_seeds", "EcmpModel", "SideSummary", "RoceComparison",
           "compare", "link_stats", "MAX_QPS"]

#: Upper bound of QPs per connection (NCCL allows 1..128 with NCCL_IB_QPS_PER_CONNECTION).
MAX_QPS = 128
#: QP-flows walked per step (bounds the ``rows x ports`` temporaries).
_CHUNK = 1 << 16
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def mix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer: a bijective 64-bit mix with full avalanche, uint64 in and out."""
    z = np.asarray(x, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return z


def flow_keys(src: np.ndarray, dst: np.ndarray, qp: np.ndarray, salt: int = 0) -> np.ndarray:
    """The header hash input of each QP: ``(src host, dst host, qp)`` mixed with ``salt``, uint64."""
    with np.errstate(over="ignore"):
        k = mix64(np.asarray(src, dtype=np.uint64) * _GOLD + np.uint64(salt & 0xFFFFFFFFFFFFFFFF))
        k = mix64(k ^ (np.asarray(dst, dtype=np.uint64) * _M1))
        return mix64(k ^ (np.asarray(qp, dtype=np.uint64) + np.uint64(1)) * _M2)


def switch_seeds(num_switches: int, seed: int = 1, same: bool = False) -> np.ndarray:
    """Per-switch hash seeds, uint64 ``[S]``: independent draws, or one seed everywhere (``same``, polarizing)."""
    rng = np.random.default_rng(seed)
    if same:
        return np.full(num_switches, rng.integers(0, 2**63, dtype=np.uint64), dtype=np.uint64)
    return rng.integers(0, 2**63, size=num_switches, dtype=np.uint64)


class EcmpModel:
    """ECMP forwarding of one fabric: next hops towards every switch, per-switch seeds, ``paths()`` like a Routing.

    Parameters
    ----------
    fabric : Fabric
    qps : int
        Queue pairs per connection (each hashed on its own; a flow's bytes split evenly over them).
    seed : int
        Draws the switches' hash seeds and salts the flow keys.
    same_seed : bool
        One seed on every switch (hash polarization) instead of one each.
    """

    def __init__(self, fabric: Fabric, qps: int = 1, seed: int = 1, same_seed: bool = False) -> None:
        if isinstance(qps, bool) or not isinstance(qps, (int, np.integer)) or not 1 <= qps <= MAX_QPS:
            raise FabricEngineError(f"qps must be an integer in 1..{MAX_QPS}, not {qps!r}")
        f = fabric
        self.fabric, self.qps, self.seed, self.same_seed = f, int(qps), int(seed), bool(same_seed)
        self.dist = switch_distances(f)
        self.peer = switch_port_peers(f).astype(np.int64)
        self.out_link = np.full(self.peer.shape, -1, dtype=np.int64)
        d = np.flatnonzero(f.switch_index[f.dl_src] >= 0)
        self.out_link[f.switch_index[f.dl_src[d]], f.dl_src_port[d] - 1] = d
        self.seeds = switch_seeds(f.num_switches, seed, same_seed)

    def qp_walk(self, src_sw: np.ndarray, dst_sw: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Hash every QP from switch ``src_sw`` to switch ``dst_sw`` hop by hop.

        Returns ``(rows, links)``: the directed switch-to-switch links each QP crosses (``rows`` index
        the inputs), int64; QPs whose switches are not connected cross none.
        """
        rows_out, links_out = [], []
        dist, peer, out_link, seeds = self.dist, self.peer, self.out_link, self.seeds
        for c0 in range(0, len(src_sw), _CHUNK):
            cur = src_sw[c0:c0 + _CHUNK].copy()
            tgt = dst_sw[c0:c0 + _CHUNK]
            key = keys[c0:c0 + _CHUNK]
            idx = np.arange(len(cur)) + c0
            live = (cur != tgt) & (dist[cur, tgt] > 0)
            cur, tgt, key, idx = cur[live], tgt[live], key[live], idx[live]
            while len(cur):
                p = peer[cur]  # [A, P]
                here = dist[cur, tgt]
                cand = (p >= 0) & (dist[np.maximum(p, 0), tgt[:, None]] == (here - 1)[:, None])
                n = cand.sum(axis=1)
                ok = n > 0
                h = mix64(key ^ seeds[cur])
                k = (h % np.maximum(n, 1).astype(np.uint64)).astype(np.int64)
                port = ((np.cumsum(cand, axis=1) - 1 == k[:, None]) & cand).argmax(axis=1)
                link = out_link[cur, port]
                rows_out.append(idx[ok])
                links_out.append(link[ok])
                nxt = p[np.arange(len(cur)), port]
                keep = ok & (nxt != tgt)
                cur, tgt, key, idx = nxt[keep], tgt[keep], key[keep], idx[keep]
        if not rows_out:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(rows_out), np.concatenate(links_out)

    def paths(self, src_hosts: np.ndarray, dst_hosts: np.ndarray, *, return_broken: bool = False):
        """Fractional incidence of host flows under ECMP, CSR float64 ``[F, 2L]`` (as :meth:`Routing.paths`).

        Each flow's row is the mean of its ``qps`` QPs' paths: the host's cable (1.0), the hashed
        switch-to-switch hops, the destination's cable (1.0).
        """
        f = self.fabric
        src = np.asarray(src_hosts, dtype=np.int64)
        dst = np.asarray(dst_hosts, dtype=np.int64)
        if src.shape != dst.shape:
            raise FabricEngineError("src_hosts and dst_hosts differ in length")
        up = f.port_out_link[f.port_offset[src]]
        down_rev = f.port_out_link[f.port_offset[dst]]
        s_sw = np.where(up >= 0, f.switch_index[f.dl_dst[np.maximum(up, 0)]], -1)
        d_sw = np.where(down_rev >= 0, f.switch_index[f.dl_dst[np.maximum(down_rev, 0)]], -1)
        ok = (s_sw >= 0) & (d_sw >= 0) & (src != dst)
        ok &= self.dist[np.maximum(s_sw, 0), np.maximum(d_sw, 0)] >= 0
        idx = np.flatnonzero(ok)
        q = self.qps
        flow = np.repeat(idx, q)
        qp = np.tile(np.arange(q), len(idx))
        keys = flow_keys(src[flow], dst[flow], qp, self.seed)
        r, links = self.qp_walk(s_sw[flow], d_sw[flow], keys)
        rows = np.concatenate([flow[r], idx, idx])
        cols = np.concatenate([links, up[idx], f.reverse(down_rev[idx])])
        vals = np.concatenate([np.full(len(r), 1.0 / q), np.ones(2 * len(idx))])
        m = sp.csr_matrix((vals, (rows, cols)), shape=(len(src), 2 * f.num_links))
        m.sum_duplicates()
        broken = ~ok & (src != dst)
        return (m, broken) if return_broken else m

    def qp_link_counts(self, src_hosts: np.ndarray, dst_hosts: np.ndarray) -> np.ndarray:
        """QPs crossing every directed link (switch-to-switch hops only), int64 ``[2L]``."""
        f = self.fabric
        src = np.asarray(src_hosts, dtype=np.int64)
        dst = np.asarray(dst_hosts, dtype=np.int64)
        up = f.port_out_link[f.port_offset[src]]
        down_rev = f.port_out_link[f.port_offset[dst]]
        s_sw = np.where(up >= 0, f.switch_index[f.dl_dst[np.maximum(up, 0)]], -1)
        d_sw = np.where(down_rev >= 0, f.switch_index[f.dl_dst[np.maximum(down_rev, 0)]], -1)
        idx = np.flatnonzero((s_sw >= 0) & (d_sw >= 0) & (src != dst))
        flow = np.repeat(idx, self.qps)
        qp = np.tile(np.arange(self.qps), len(idx))
        _, links = self.qp_walk(s_sw[flow], d_sw[flow], flow_keys(src[flow], dst[flow], qp, self.seed))
        return np.bincount(links, minlength=2 * f.num_links)


def link_stats(inc: sp.csr_matrix, nbytes: np.ndarray, support: np.ndarray, units: np.ndarray | None = None) -> dict:
    """Imbalance and collisions of one side over the equal-cost inter-switch links ``support`` (bool ``[2L]``).

    ``imbalance``: max / mean of the bytes the flows put on each link per iteration (offered load, before
    any sharing) over ``support``;
    ``collisions``: QPs that share an inter-switch link with another QP, summed over links
    (``sum(max(0, qps_on_link - 1))``; ``units`` gives the QPs per link when a row is split over QPs,
    else each flow counts one); ``max_flows_on_link``: the most QPs on one link.
    """
    offered = np.asarray(inc.T @ nbytes).ravel()
    sel = offered[support]
    mean = float(sel.mean()) if sel.size else 0.0
    imbalance = float(sel.max()) / mean if mean > 0 else 1.0
    counts = np.asarray((inc > 0).astype(np.int64).sum(axis=0)).ravel() if units is None else units
    counts = np.where(support, counts, 0)
    return {"imbalance": round(imbalance, 4), "collisions": int(np.maximum(counts - 1, 0).sum()),
            "max_flows_on_link": int(counts.max(initial=0)), "links": int(support.sum())}


@dataclass(frozen=True)
class SideSummary:
    """One side of the comparison: label, per-job results and the link statistics."""

    label: str
    jobs: list[dict]
    stats: dict
    max_util: float
    unrouted_flows: int

    def as_dict(self) -> dict:
        return {"label": self.label, "jobs": self.jobs, **self.stats, "max_util": round(self.max_util, 4),
                "unrouted_flows": self.unrouted_flows}


@dataclass(frozen=True)
class RoceComparison:
    """InfiniBand LFTs, InfiniBand adaptive and RoCEv2 ECMP side by side, with what was assumed."""

    sides: list[SideSummary]
    params: dict
    summary: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"params": self.params, "sides": [s.as_dict() for s in self.sides], "summary": self.summary}


def compare(fabric: Fabric, jobs: list[Job], *, engine: str = "ftree", routing: Routing | None = None, qps: int = 1,
            seed: int = 1, same_seed: bool = False, progress=None) -> RoceComparison:
    """Run ``jobs`` on ``fabric`` as InfiniBand (``engine``'s LFTs, and adaptive routing) and as RoCEv2 with ECMP.

    Collective times on every side are against each job alone on the LFTs. ``progress(fraction, message)``
    is called between sides.
    """
    if not jobs:
        raise FabricEngineError("the comparison needs at least one job")
    say = progress or (lambda fraction, message: None)
    say(0.0, f"routing with {engine}")
    ib = routing if routing is not None else route(fabric, engine)
    ecmp = EcmpModel(fabric, qps=qps, seed=seed, same_seed=same_seed)
    jf = expand_jobs(list(jobs), fabric, ib.paths)
    fl = jf.flows
    live = ~jf.broken & (fl.nbytes > 0)
    adaptive = ib.paths(fl.src, fl.dst, adaptive=True)
    si = fabric.switch_index
    inter = (si[fabric.dl_src] >= 0) & (si[fabric.dl_dst] >= 0)
    support = inter & (np.asarray(adaptive[live].sum(axis=0)).ravel() > 0)  # the equal-cost links the flows may use
    sides = []
    alone = None
    def adaptive_paths(s, d, return_broken=False):
        return ib.paths(s, d, return_broken=return_broken, adaptive=True)

    models = ((f"InfiniBand LFT ({ib.engine})", "lft", ib.paths),
              ("InfiniBand adaptive routing", "adaptive", adaptive_paths),
              (f"RoCEv2 ECMP ({qps} QP{'s' if qps > 1 else ''}/connection)", "ecmp", ecmp.paths))
    for i, (label, kind, paths) in enumerate(models):
        say(0.1 + 0.8 * i / len(models), label)
        out, link_rate, own_alone, broken = workload_impact(ib, jobs, alone_s=alone, paths=paths)
        alone = own_alone if alone is None else alone
        inc = paths(fl.src[live], fl.dst[live])
        units = ecmp.qp_link_counts(fl.src[live], fl.dst[live]) if kind == "ecmp" else None
        stats = {"kind": kind, **link_stats(inc, fl.nbytes[live], support, units)}
        if kind == "adaptive":  # adaptive routing spreads packets: flows do not hash-collide
            stats.update(collisions=None, max_flows_on_link=None)
        sides.append(SideSummary(label, out, stats, float((link_rate / fabric.capacity_gbps).max(initial=0.0)),
                                 broken))
    summary = []
    for k, job in enumerate(jobs):
        times = [s.jobs[k]["comm_s"] for s in sides]
        summary.append({"id": job.name, "tenant": job.tenant, "comm_s": times,
                        "vs_lft": [None if (t is None or not times[0]) else round(t / times[0], 4) for t in times]})
    say(1.0, "done")
    params = {"engine": ib.engine, "qps": int(qps), "seed": int(seed), "same_seed": bool(same_seed),
              "jobs": len(jobs), "flows": int(len(fl))}
    return RoceComparison(sides, params, summary)
