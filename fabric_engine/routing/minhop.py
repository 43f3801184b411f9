"""OpenSM's min-hop routing: shortest paths, destinations spread over equal ports."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from ..topology import KIND_HOST, Fabric
from .tables import NO_PATH, Routing

__all__ = ["minhop", "switch_distances", "lid_targets"]


def switch_distances(fabric: Fabric) -> np.ndarray:
    """Hop counts between all switches, int16 ``[S, S]`` (``-1`` where unreachable)."""
    f = fabric
    si = f.switch_index
    both = (si[f.a_node] >= 0) & (si[f.b_node] >= 0)
    a, b = si[f.a_node[both]], si[f.b_node[both]]
    s = f.num_switches
    adj = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(s, s))
    dist = shortest_path(adj, directed=False, unweighted=True)
    dist[np.isinf(dist)] = -1
    return dist.astype(np.int16)


def lid_targets(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every assigned LID: the switch that delivers it and the port it leaves that switch by.

    Returns ``(lids, target_switch_index, exit_port)``; ``exit_port`` is 0 for a switch's own LID.
    LIDs of unconnected host ports are left out.
    """
    f = fabric
    host_slots = np.flatnonzero(f.kind[f.port_node] == KIND_HOST)
    out = f.port_out_link[host_slots]
    connected = out >= 0
    host_slots, out = host_slots[connected], out[connected]
    rev = f.reverse(out)
    lids = np.concatenate([f.lid[f.switches], f.port_lid[host_slots]]).astype(np.int64)
    target = np.concatenate([np.arange(f.num_switches), f.switch_index[f.dl_dst[out]]]).astype(np.int64)
    port = np.concatenate([np.zeros(f.num_switches, dtype=np.int64), f.dl_src_port[rev].astype(np.int64)])
    ok = target >= 0  # a host cabled to another host has no delivering switch
    order = np.lexsort((lids[ok], target[ok]))
    return lids[ok][order], target[ok][order], port[ok][order]


def switch_port_peers(fabric: Fabric) -> np.ndarray:
    """``peer[s, p - 1]``: switch index behind port ``p`` of switch ``s`` (-1 for none or a host)."""
    f = fabric
    pmax = int(f.nports[f.switches].max(initial=0))
    peer = np.full((f.num_switches, pmax), -1, dtype=np.int32)
    d = np.flatnonzero(f.switch_index[f.dl_src] >= 0)
    peer[f.switch_index[f.dl_src[d]], f.dl_src_port[d] - 1] = f.switch_index[f.dl_dst[d]]
    return peer


def minhop(fabric: Fabric) -> Routing:
    """Route every LID on a shortest path, spreading LIDs over equal-cost ports.

    For each switch and destination LID the out port leads to a neighbour one hop
    closer to the delivering switch; among those, the port with the fewest LIDs
    routed so far wins (lowest port number on ties), as OpenSM's min-hop engine
    does. LIDs are visited grouped by delivering switch, in LID order.

    The loop runs over destination LIDs; each step is vectorised over all switches.
    """
    f = fabric
    dist = switch_distances(f)
    peer = switch_port_peers(f)
    s_count, pmax = peer.shape
    lft = np.full((s_count, f.max_lid + 1), NO_PATH, dtype=np.uint8)
    load = np.zeros((s_count, pmax), dtype=np.int64)
    lids, target, exit_port = lid_targets(f)
    rows = np.arange(s_count)
    big = np.iinfo(np.int64).max
    starts = np.flatnonzero(np.r_[True, target[1:] != target[:-1]])
    for g, start in enumerate(starts):
        stop = starts[g + 1] if g + 1 < len(starts) else len(lids)
        t = target[start]
        d_here = dist[:, t]
        d_peer = np.where(peer >= 0, dist[np.maximum(peer, 0), t], -2)
        cand = (d_peer == (d_here - 1)[:, None]) & (d_here > 0)[:, None]
        reachable = cand.any(axis=1)
        rr = rows[reachable]
        for k in range(start, stop):
            lid = lids[k]
            masked = np.where(cand[reachable], load[reachable], big)
            choice = masked.argmin(axis=1)
            lft[rr, lid] = choice + 1
            load[rr, choice] += 1
            lft[t, lid] = exit_port[k]
    return Routing(f, lft, "minhop")
