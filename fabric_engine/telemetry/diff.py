"""Topology changes between two discoveries of the same subnet, as events.

Nodes are matched by GUID, cables by their two ends ``(node GUID, port)`` in
either order, so the result does not depend on the order a tool listed things
in. Event kinds: ``node_appeared``, ``node_vanished``, ``link_down``, ``link_up``,
``width_degraded``, ``speed_degraded``, ``width_restored``, ``speed_restored``.
"""

from __future__ import annotations

import numpy as np

from ..topology import SPEEDS, Fabric
from .alerts import named

__all__ = ["diff_topology", "EVENT_KINDS"]

EVENT_KINDS = ("node_appeared", "node_vanished", "link_down", "link_up", "width_degraded", "speed_degraded",
               "width_restored", "speed_restored")
_SEVERITY = {"node_appeared": "info", "node_vanished": "critical", "link_down": "critical", "link_up": "info",
             "width_degraded": "warning", "speed_degraded": "warning", "width_restored": "info",
             "speed_restored": "info"}


def _cable_keys(f: Fabric, index: dict[int, int]) -> np.ndarray:
    """Order-free key of every cable of ``f`` in the shared GUID index space, int64 ``[L]``."""
    lookup = np.array([index[int(g)] for g in f.guid], dtype=np.int64) if f.num_nodes else np.zeros(0, np.int64)
    a = lookup[f.a_node] * 256 + f.a_port
    b = lookup[f.b_node] * 256 + f.b_port
    span = (len(index) + 1) * 256
    return np.minimum(a, b) * span + np.maximum(a, b)


def _end(f: Fabric, n: int, p: int) -> str:
    return f"{f.node_name[n]} port {p}"


def _index_in(new: Fabric, f: Fabric, n: int) -> int:
    """Index in ``new`` of node ``n`` of ``f`` (by GUID when ``f`` is another fabric), -1 when ``new`` lacks it."""
    if f is new:
        return int(n)
    try:
        return new.node(int(f.guid[n]))
    except KeyError:
        return -1


def _cable_text(f: Fabric, new: Fabric, c: int, template: str) -> dict:
    """:func:`~.alerts.named` of ``template`` ({0}, {1}: the ends of cable ``c`` of ``f``), in ``new``."""
    ends = (int(f.a_node[c]), int(f.b_node[c]))
    return named(template, [_index_in(new, f, n) for n in ends], [str(f.node_name[n]) for n in ends])


def diff_topology(old: Fabric, new: Fabric) -> list[dict]:
    """Events that turn ``old`` into ``new``.

    Each event: ``{"kind", "severity", "message", "text", "nodes", ...}`` (``text``/``nodes``:
    :func:`~.alerts.named`, indices in ``new``, -1 for a node it lacks) plus ``node``/``guid`` for
    node events, ``a``/``b`` (``"name port"``), the ends' node ``guids`` and ``ports``
    and the new cable index ``link`` (``-1`` when the cable is gone) for cable
    events, ``old``/``new`` for width and speed changes.

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> f = fat_tree(hosts=8, radix=4)
    >>> [e["kind"] for e in diff_topology(f, f.without_links([0]))]
    ['link_down']
    """
    guids = np.unique(np.concatenate([old.guid, new.guid]))
    index = {int(g): i for i, g in enumerate(guids)}  # one entry per node, not per link
    events: list[dict] = []
    gone = np.flatnonzero(~np.isin(old.guid, new.guid))
    came = np.flatnonzero(~np.isin(new.guid, old.guid))
    for f, nodes, kind in ((old, gone, "node_vanished"), (new, came, "node_appeared")):
        for n in nodes:  # loop over the (few) changed nodes
            events.append({"kind": kind, "severity": _SEVERITY[kind], "node": str(f.node_name[n]),
                           "guid": f"0x{int(f.guid[n]):016x}",
                           **named(f"{{0}} {kind.split('_')[1]}", [_index_in(new, f, n)], [str(f.node_name[n])])})
    ko, kn = _cable_keys(old, index), _cable_keys(new, index)
    down = np.flatnonzero(~np.isin(ko, kn))
    up = np.flatnonzero(~np.isin(kn, ko))
    for f, cables, kind in ((old, down, "link_down"), (new, up, "link_up")):
        for c in cables:  # loop over the changed cables
            a, b = _end(f, f.a_node[c], int(f.a_port[c])), _end(f, f.b_node[c], int(f.b_port[c]))
            events.append({"kind": kind, "severity": _SEVERITY[kind], "a": a, "b": b,
                           "guids": [f"0x{int(f.guid[f.a_node[c]]):016x}", f"0x{int(f.guid[f.b_node[c]]):016x}"],
                           "ports": [int(f.a_port[c]), int(f.b_port[c])],
                           "link": int(c) if f is new else -1,
                           **_cable_text(f, new, c, f"{kind.replace('_', ' ')}: {{0}} port {int(f.a_port[c])} - "
                                                    f"{{1}} port {int(f.b_port[c])}")})
    _, io, inew = np.intersect1d(ko, kn, return_indices=True)
    for attr, names in (("width", None), ("speed", SPEEDS)):
        before, after = getattr(old, attr)[io], getattr(new, attr)[inew]
        for j in np.flatnonzero(before != after):  # loop over the changed cables
            c = int(inew[j])
            kind = f"{attr}_{'degraded' if after[j] < before[j] else 'restored'}"
            show = (lambda v: f"{int(v)}x") if names is None else (lambda v: SPEEDS[int(v)])
            a, b = _end(new, new.a_node[c], int(new.a_port[c])), _end(new, new.b_node[c], int(new.b_port[c]))
            events.append({"kind": kind, "severity": _SEVERITY[kind], "a": a, "b": b, "link": c,
                           "guids": [f"0x{int(new.guid[new.a_node[c]]):016x}",
                                     f"0x{int(new.guid[new.b_node[c]]):016x}"],
                           "ports": [int(new.a_port[c]), int(new.b_port[c])],
                           "old": show(before[j]), "new": show(after[j]),
                           **_cable_text(new, new, c, f"{attr} {show(before[j])} -> {show(after[j])}: {{0}} port "
                                                      f"{int(new.a_port[c])} - {{1}} port {int(new.b_port[c])}")})
    return events
