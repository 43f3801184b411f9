"""Small fabrics the routing tests share (issue 4): rings, a reference min-hop, degraded trees."""

from __future__ import annotations

import numpy as np

from fabric_engine.routing.graph import lid_targets, switch_distances, switch_port_peers
from fabric_engine.routing.tables import NO_PATH
from fabric_engine.topology import KIND_HOST, KIND_SWITCH, Fabric
from fabric_engine.topology.generate import fat_tree


def ring(n_sw: int = 6, hosts_per: int = 2, chords: tuple = ()) -> Fabric:
    """``n_sw`` switches in a ring (plus ``chords``), ``hosts_per`` hosts on each."""
    n_h = n_sw * hosts_per
    names = [f"sw{i}" for i in range(n_sw)] + [f"h{i:02d}" for i in range(n_h)]
    kind = [KIND_SWITCH] * n_sw + [KIND_HOST] * n_h
    nxt = [1] * n_sw
    a, ap, b, bp = [], [], [], []

    def cable(x, y, py=None):
        a.append(x)
        ap.append(nxt[x])
        nxt[x] += 1
        b.append(y)
        if py is None:
            bp.append(nxt[y])
            nxt[y] += 1
        else:
            bp.append(py)

    for i in range(n_sw):
        cable(i, (i + 1) % n_sw)
    for x, y in chords:
        cable(x, y)
    for h in range(n_h):
        cable(h // hosts_per, n_sw + h, 1)
    n = len(names)
    return Fabric.build("ring", kind=kind, node_name=names, guid=np.arange(1, n + 1) * 16, lid=np.arange(1, n + 1),
                        nports=[8] * n_sw + [1] * n_h, role=[3] * n_sw + [0] * n_h, tier=[1] * n_sw + [0] * n_h,
                        a_node=a, a_port=ap, b_node=b, b_port=bp)


def spine_cables(f: Fabric) -> np.ndarray:
    """Cables between switches, in cable order."""
    return np.flatnonzero((f.kind[f.a_node] == KIND_SWITCH) & (f.kind[f.b_node] == KIND_SWITCH))


def degraded(f: Fabric, count: int = 3, seed: int = 1) -> Fabric:
    """``f`` without ``count`` switch-to-switch cables picked at random."""
    rng = np.random.default_rng(seed)
    return f.without_links(rng.choice(spine_cables(f), count, replace=False))


def opensm_port_order(f: Fabric) -> list[int]:
    """LIDs in OpenSM's ``port_order_list``, worked out one by one (issue 16).

    Switches by adapters attached (most first), ties in ``sw_guid_tbl`` order (the byte-swapped
    GUID, as ``cl_qmap`` compares GUIDs kept in network order on x86); each switch's adapters by
    its port number; then the switch LIDs (uncounted, their order does not matter).
    """
    switches = [int(n) for n in f.switches]
    adapters = {}
    for d in range(2 * f.num_links):
        a, b = int(f.dl_src[d]), int(f.dl_dst[d])
        if f.switch_index[a] >= 0 and f.switch_index[b] < 0:
            lid = int(f.port_lid[f.port_offset[b] + f.dl_dst_port[d] - 1])
            adapters.setdefault(a, []).append((int(f.dl_src_port[d]), lid))
    key = {n: int.from_bytes(int(f.guid[n]).to_bytes(8, "big"), "little") for n in switches}
    ordered = sorted(switches, key=lambda n: (-len(adapters.get(n, [])), key[n]))
    lids = [lid for n in ordered for _, lid in sorted(adapters.get(n, []))]
    return lids + [int(f.lid[n]) for n in ordered]


def reference_minhop(f: Fabric) -> np.ndarray:
    """OpenSM's min-hop choice done the slow way: switch by switch, LID by LID in ``port_order_list``."""
    dist = switch_distances(f)
    peer = switch_port_peers(f)
    s_count, pmax = peer.shape
    tg = lid_targets(f)
    lft = np.full((s_count, f.max_lid + 1), NO_PATH, np.uint8)
    at = {int(lid): k for k, lid in enumerate(tg.lids)}
    order = [at[lid] for lid in opensm_port_order(f) if lid in at]
    for s in range(s_count):
        load = [0] * pmax
        for k in order:
            lid, t = int(tg.lids[k]), int(tg.target[k])
            if dist[s, t] == 0:
                lft[s, lid] = tg.exit_port[k]
                continue
            if dist[s, t] < 0:
                continue
            best = None
            for p in range(pmax):
                if peer[s, p] >= 0 and dist[peer[s, p], t] == dist[s, t] - 1 and (best is None or load[p] < load[best]):
                    best = p
            lft[s, lid] = best + 1
            if tg.is_host[k]:
                load[best] += 1
    return lft


def test_ring_fixture_is_a_valid_fabric():
    f = ring(5, 3, chords=((0, 2),))
    assert (f.num_switches, f.num_hosts, f.num_links) == (5, 15, 21)


def test_degraded_removes_only_switch_cables():
    f = fat_tree(hosts=32, radix=8)
    g = degraded(f, 4)
    assert g.num_links == f.num_links - 4 and g.num_hosts == f.num_hosts
