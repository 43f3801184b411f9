"""The congestion scenarios checked against BookSim 2: one 16-host two-level fat tree, flows named by role.

The fat tree: 4 leaves of 4 hosts (host ``h`` on leaf ``h // 4``), 4 spines, every leaf joined to every
spine by one link, all links of one rate (1 flit per cycle in BookSim, 1.0 here). Static routing is
d-mod-k: a flow from one leaf to another goes up to spine ``dst % 4``. Random routing sprays every
packet over the 4 spines.

Roles: ``hot`` (an incast flow), ``victim`` (shares a buffer with incast flows on its way),
``unaffected`` (shares no buffer and no link with the incast: it should run at its full rate).

The runner (``run_booksim.py``) writes BookSim's configuration from these descriptions; the tests build
the model's input from them with :func:`paths`. Both read this one module so that they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

LEAVES = 4
HOSTS_PER_LEAF = 4
SPINES = 4
HOSTS = LEAVES * HOSTS_PER_LEAF


@dataclass(frozen=True)
class Flow:
    """One flow: ``src`` and ``dst`` hosts, its role and its virtual lane."""

    name: str
    src: int
    dst: int
    role: str
    vl: int = 0


@dataclass(frozen=True)
class Scenario:
    """A scenario: its flows, the routing (``dmodk`` or ``random``) and what BookSim runs it on.

    ``network`` is ``anynet`` (the flows as given, routes pinned by link latencies) or ``fattree``
    (BookSim's own k-ary n-tree: every host sends to ``hotspot``; only expressible for a full incast).
    ``booksim`` is False for a scenario BookSim cannot express (the reason in ``why_not``).
    """

    name: str
    description: str
    flows: tuple[Flow, ...]
    routing: str = "dmodk"
    network: str = "anynet"
    booksim: bool = True
    why_not: str = ""
    vl_weights: tuple[float, ...] = field(default=(1.0,))


def leaf_of(host: int) -> int:
    return host // HOSTS_PER_LEAF


def _incast(dst: int, srcs: list[int], prefix: str = "incast") -> list[Flow]:
    return [Flow(f"{prefix}_h{s}", s, dst, "hot") for s in srcs]


ISSUE = Scenario(
    "incast_victims_shared",
    "Issue 41: 5+3 senders to h0 (3 on leaf 1, 3 on leaf 3, 1 on leaf 2, 1 beside h0); a victim beside "
    "the 3 incast flows of leaf 1 and one beside the 1 of leaf 2 share their uplink to spine 0; two "
    "flows on other uplinks and one to a cold host on the hot leaf.",
    tuple(_incast(0, [1, 4, 5, 6, 8, 12, 13, 14]) + [
        Flow("victim3_h7", 7, 8, "victim"),      # leaf 1 -> spine 0 -> leaf 2, beside 3 incast flows
        Flow("victim1_h9", 9, 12, "victim"),     # leaf 2 -> spine 0 -> leaf 3, beside 1 incast flow
        Flow("other_h10", 10, 5, "unaffected"),  # leaf 2 -> spine 1 -> leaf 1
        Flow("other_h15", 15, 11, "unaffected"),  # leaf 3 -> spine 3 -> leaf 2
        Flow("cold_h3", 3, 2, "unaffected"),     # to a cold host on the hot leaf
    ]),
)

UNSHARED = Scenario(
    "incast_victims_unshared",
    "The same incast; the would-be victims' destinations (h9, h14) take them up to spines 1 and 2, not "
    "the incast's spine 0: they share the leaf's crossbar with the incast but no buffer.",
    tuple(_incast(0, [1, 4, 5, 6, 8, 12, 13, 14]) + [
        Flow("victim3_h7", 7, 9, "unaffected"),
        Flow("victim1_h9", 9, 14, "unaffected"),
        Flow("other_h10", 10, 5, "unaffected"),
        Flow("other_h15", 15, 11, "unaffected"),
        Flow("cold_h3", 3, 2, "unaffected"),
    ]),
)

SEPARATE_VL = Scenario(
    "incast_victims_separate_vl",
    "The issue's scenario with the victims on VL 1 (equal VL arbitration weights).",
    tuple(_incast(0, [1, 4, 5, 6, 8, 12, 13, 14]) + [
        Flow("victim3_h7", 7, 8, "victim", vl=1),
        Flow("victim1_h9", 9, 12, "victim", vl=1),
        Flow("other_h10", 10, 5, "unaffected"),
        Flow("other_h15", 15, 11, "unaffected"),
        Flow("cold_h3", 3, 2, "unaffected"),
    ]),
    booksim=False,
    why_not="BookSim 2 picks a packet's virtual channel range by packet type only (the routing "
            "function's read/write request/reply ranges), never by flow or source: victims cannot be "
            "put on a lane of their own without changing its code.",
    vl_weights=(1.0, 1.0),
)

TWO_INCASTS = Scenario(
    "two_incasts",
    "Two incasts at once: 5 senders to h0 (spine 0) and 4 to h6 (spine 2); a victim beside each "
    "(h11 -> h12 over spine 0, h14 -> h10 over spine 2), a flow inside leaf 3.",
    tuple(_incast(0, [1, 4, 5, 8, 12], "incastA") + _incast(6, [7, 9, 10, 13], "incastB") + [
        Flow("victimA_h11", 11, 12, "victim"),
        Flow("victimB_h14", 14, 10, "victim"),
        Flow("local_h15", 15, 14, "unaffected"),
    ]),
)

FULL_INCAST_STATIC = Scenario(
    "full_incast_static",
    "Every other host sends to h0 (15 flows), d-mod-k: every remote flow through spine 0.",
    tuple(_incast(0, list(range(1, HOSTS)))),
)

FULL_INCAST_RANDOM = Scenario(
    "full_incast_random",
    "Every host sends to h0, h0 included (BookSim's fat tree with its hotspot traffic); every packet "
    "goes up to a random spine (BookSim's nca routing).",
    tuple(_incast(0, list(range(HOSTS)))),
    routing="random",
    network="fattree",
)

SCENARIOS: tuple[Scenario, ...] = (ISSUE, UNSHARED, SEPARATE_VL, TWO_INCASTS, FULL_INCAST_STATIC,
                                   FULL_INCAST_RANDOM)


# ---------------------------------------------------------------- the fabric as the model sees it

def link_ids() -> dict[tuple[str, int, int], int]:
    """Directed links of the fat tree: ``("up", host, leaf)``, ``("down", leaf, host)``,
    ``("l2s", leaf, spine)``, ``("s2l", spine, leaf)`` -> link index (capacity 1.0 each)."""
    ids: dict[tuple[str, int, int], int] = {}
    for h in range(HOSTS):
        ids[("up", h, leaf_of(h))] = len(ids)
        ids[("down", leaf_of(h), h)] = len(ids)
    for leaf in range(LEAVES):
        for s in range(SPINES):
            ids[("l2s", leaf, s)] = len(ids)
            ids[("s2l", s, leaf)] = len(ids)
    return ids


def route(src: int, dst: int, spine: int) -> list[tuple[str, int, int]]:
    """The links from ``src`` to ``dst`` in order, going over ``spine`` if the hosts are on two leaves."""
    ls, ld = leaf_of(src), leaf_of(dst)
    if ls == ld:
        return [("up", src, ls), ("down", ld, dst)]
    return [("up", src, ls), ("l2s", ls, spine), ("s2l", spine, ld), ("down", ld, dst)]


def paths(scenario: Scenario) -> dict[str, np.ndarray | int]:
    """The model's input for ``scenario``: one row per path in hop order.

    Returns ``links`` (rows' link indices, concatenated), ``indptr`` (row starts), ``queue`` (the
    source queue of each row: one per flow; a flow sprayed over several paths has one row per path
    sharing its queue), ``demand`` (per row, a flow's demand split over its rows), ``vl`` (per row),
    ``owner`` (the flow of each row) and ``n_links``.
    """
    ids = link_ids()
    links: list[int] = []
    indptr = [0]
    queue, demand, vl, owner = [], [], [], []
    for i, f in enumerate(scenario.flows):
        spines = [f.dst % SPINES] if scenario.routing == "dmodk" else list(range(SPINES))
        if leaf_of(f.src) == leaf_of(f.dst):
            spines = spines[:1]
        for s in spines:
            links += [ids[k] for k in route(f.src, f.dst, s)]
            indptr.append(len(links))
            queue.append(i)
            demand.append(1.0 / len(spines))
            vl.append(f.vl)
            owner.append(i)
    return {"links": np.array(links, np.int64), "indptr": np.array(indptr, np.int64),
            "queue": np.array(queue, np.int64), "demand": np.array(demand), "vl": np.array(vl, np.int64),
            "owner": np.array(owner, np.int64), "n_links": len(ids)}
