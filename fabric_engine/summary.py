"""What a fabric is, in numbers: nodes by kind, tier and role, links by rate, bisection, oversubscription per tier.

:func:`describe` is what ``python -m fabric_engine info`` prints and what ibweb's new-fabric preview shows.
"""

from __future__ import annotations

import numpy as np

from .topology import KIND_SWITCH, ROLES, SPEEDS, TIER_NAMES, Fabric

__all__ = ["describe", "bisection_gbps"]


def bisection_gbps(f: Fabric) -> float:
    """Max flow between the first and the second half of the hosts (in node order), in Gb/s.

    Node order follows the design (leaf by leaf, pod by pod), so this is the
    bandwidth across the natural bisection of the design: for a non-blocking fat
    tree it equals half the hosts' link capacity.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    hosts = f.hosts
    if len(hosts) < 2:
        return 0.0
    half = len(hosts) // 2
    n = f.num_nodes
    src, dst = n, n + 1
    cap = np.round(f.capacity_gbps * 100).astype(np.int64)  # integer centi-Gb/s for maximum_flow
    big = int(cap.sum()) + 1
    rows = np.concatenate([f.dl_src, np.full(half, src), hosts[half:]])
    cols = np.concatenate([f.dl_dst, hosts[:half], np.full(len(hosts) - half, dst)])
    vals = np.concatenate([cap, np.full(len(hosts), big)])
    graph = csr_matrix((vals, (rows, cols)), shape=(n + 2, n + 2))
    graph.sum_duplicates()
    return maximum_flow(graph, src, dst).flow_value / 100.0


def describe(fabric: Fabric) -> dict:
    """Summary of a fabric: nodes by kind/tier/role, links by rate, bisection, oversubscription per tier."""
    f = fabric
    nodes = {"hosts": f.num_hosts, "switches": f.num_switches}
    tiers = {TIER_NAMES[t]: int(c) for t, c in zip(*np.unique(f.tier[f.switches], return_counts=True), strict=True)}
    roles = {ROLES[r]: int(c) for r, c in zip(*np.unique(f.role[f.hosts], return_counts=True), strict=True)}
    cap = f.capacity_gbps[: f.num_links]
    rate_key = f.width.astype(np.int64) * 16 + f.speed
    links = {}
    for k in np.unique(rate_key):
        sel = rate_key == k
        links[f"{int(k) // 16}x{SPEEDS[int(k) % 16]}"] = {"links": int(sel.sum()), "gbps_each": float(cap[sel][0])}
    # Oversubscription per switch tier: capacity towards lower tiers / capacity towards higher tiers
    # (an Aggregation Node's cable is its switch's own SHARP resource, not capacity towards hosts).
    tier = f.tier.astype(np.int64)
    ta, tb = tier[f.a_node], tier[f.b_node]
    to_an = np.isin(f.a_node, f.aggregation_nodes) | np.isin(f.b_node, f.aggregation_nodes)
    cap_hosts = np.where(to_an, 0.0, cap)
    over = {}
    for t in np.unique(tier[f.switches]).tolist():
        down = cap_hosts[(ta == t) & (tb < t)].sum() + cap_hosts[(tb == t) & (ta < t)].sum()
        up = cap[(ta == t) & (tb > t)].sum() + cap[(tb == t) & (ta > t)].sum()
        if up > 0:
            over[TIER_NAMES[t]] = round(float(down / up), 3)
    if "host_systems" in f.meta:
        nodes["host_systems"] = int(f.meta["host_systems"])
    return {
        "name": f.name, "nodes": nodes, "switch_tiers": tiers, "host_roles": roles,
        "sharp": {"aggregation_nodes": len(f.aggregation_nodes), "switches": len(f.aggregation_switches)},
        "chassis": list(f.meta.get("chassis") or ()), "warnings": list(f.meta.get("warnings") or ()),
        "host_ports": int(f.nports[f.hosts].sum()),
        "switch_ports_used": int(np.isin(f.port_node[f.port_out_link >= 0], f.switches).sum()),
        "switch_ports": int(f.nports[f.kind == KIND_SWITCH].sum()),
        "links": {"total": f.num_links, "by_rate": links, "loopbacks": list(f.meta.get("loopbacks") or ()),
                  "trained_down": int(f.trained_down.sum())},
        "bisection_gbps": bisection_gbps(f), "oversubscription": over,
    }
