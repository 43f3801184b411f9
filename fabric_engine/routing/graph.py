"""Switch-level views of a fabric that every routing engine starts from.

All arrays are indexed by *switch index* (``fabric.switch_index``), not node index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..topology import KIND_HOST, Fabric

__all__ = ["switch_distances", "switch_port_peers", "lid_targets", "LidTargets", "switch_adjacency"]


def switch_adjacency(fabric: Fabric) -> sp.csr_matrix:
    """Switch-to-switch adjacency (CSR ``[S, S]``, entry = number of parallel cables)."""
    f = fabric
    si = f.switch_index
    both = (si[f.a_node] >= 0) & (si[f.b_node] >= 0)
    a, b = si[f.a_node[both]], si[f.b_node[both]]
    s = f.num_switches
    adj = sp.csr_matrix((np.ones(2 * len(a)), (np.r_[a, b], np.r_[b, a])), shape=(s, s))
    adj.sum_duplicates()
    return adj


def switch_distances(fabric: Fabric) -> np.ndarray:
    """Hop counts between all switches, int16 ``[S, S]`` (``-1`` where unreachable).

    A breadth-first search from every switch at once on bit sets: each level ORs the
    reach sets of every switch's neighbours (one gather and one ``reduceat`` per level).
    """
    return bitset_bfs(switch_adjacency(fabric))


def bitset_bfs(adj: sp.csr_matrix) -> np.ndarray:
    """All-pairs hop counts of the (directed) graph ``adj``, int16 ``[n, n]``, -1 where unreachable."""
    adj = sp.csr_matrix(adj)
    n = adj.shape[0]
    dist = np.full((n, n), -1, dtype=np.int16)
    if n == 0:
        return dist
    words = -(-n // 64)
    eye = np.zeros((n, words * 64), dtype=bool)
    eye[np.arange(n), np.arange(n)] = True
    reach = np.packbits(eye, axis=1, bitorder="little").view("<u8")  # [n, words]
    np.fill_diagonal(dist, 0)
    has = np.diff(adj.indptr) > 0
    starts = adj.indptr[:-1][has]
    for hop in range(1, n):
        gathered = reach[adj.indices]  # [E, words]
        new = np.zeros_like(reach)
        if len(adj.indices):
            new[has] = np.bitwise_or.reduceat(gathered, starts, axis=0)
        new |= reach
        fresh = new & ~reach
        if not fresh.any():
            break
        bits = np.unpackbits(fresh.view(np.uint8), axis=1, bitorder="little")[:, :n].astype(bool)
        dist[bits] = hop
        reach = new
    return dist


def switch_port_peers(fabric: Fabric) -> np.ndarray:
    """``peer[s, p - 1]``: switch index behind port ``p`` of switch ``s`` (-1 for none or a host), int32."""
    f = fabric
    pmax = int(f.nports[f.switches].max(initial=0))
    peer = np.full((f.num_switches, pmax), -1, dtype=np.int32)
    d = np.flatnonzero(f.switch_index[f.dl_src] >= 0)
    peer[f.switch_index[f.dl_src[d]], f.dl_src_port[d] - 1] = f.switch_index[f.dl_dst[d]]
    return peer


@dataclass(frozen=True)
class LidTargets:
    """Every routable LID with the switch that delivers it, ordered by ``(target, lid)``.

    ``lids`` int64, ``target`` int64 (switch index), ``exit_port`` int64 (0 for a switch's own
    LID), ``is_host`` bool (the LID belongs to a channel adapter port).
    """

    lids: np.ndarray
    target: np.ndarray
    exit_port: np.ndarray
    is_host: np.ndarray

    def __iter__(self):  # backwards compatible 3-tuple unpacking
        return iter((self.lids, self.target, self.exit_port))


def lid_targets(fabric: Fabric) -> LidTargets:
    """For every assigned LID: the switch that delivers it and the port it leaves that switch by.

    LIDs of unconnected host ports, and of hosts cabled to hosts, are left out.
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
    is_host = np.r_[np.zeros(f.num_switches, dtype=bool), np.ones(len(host_slots), dtype=bool)]
    ok = target >= 0
    order = np.lexsort((lids[ok], target[ok]))
    return LidTargets(lids[ok][order], target[ok][order], port[ok][order], is_host[ok][order])
