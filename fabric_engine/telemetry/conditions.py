"""Conditions of a discovered fabric against its reference cabling: what stays wrong until fixed.

An event (:mod:`.diff`) says what changed between two discoveries and is over with the next
one; a condition says what is wrong *now*: a cable of the reference that is not cabled, a node
of the reference that is missing, a cable running at a lower width or speed than the
reference's. Each tick of a telemetry-fed fabric carries its conditions as alerts
(``"condition": True``), so the alert, its event and the overview's counts stay until a
discovery shows the cable back. The reference is the fabric's cabling plan where it has one,
else its last good discovery (see :func:`is_good`).

Condition alerts: ``{"kind", "severity", "condition": True, "message", ...}`` with

* ``link_down``: ``a``/``b`` (``"name port"``), ``guids``, ``ports``, ``nodes`` (indices of the
  ends in the current fabric, -1 where the node is missing) and ``cable`` -1;
* ``width_degraded`` / ``speed_degraded``: the same with the cable's index ``cable`` in the current
  fabric and ``old``/``new`` (``"4x"``/``"1x"``, ``"NDR"``/``"HDR"``);
* ``node_missing``: ``node`` and ``guid``.

Each also carries ``text`` and ``nodes`` (:func:`~.alerts.named`; a missing node's index is -1).

None carries ``link``: a cable's index changes with the cabling, the identity of a condition
must not.
"""

from __future__ import annotations

import numpy as np

from ..topology import Fabric
from ..topology.guid_index import GuidIndex
from .alerts import named
from .diff import diff_topology

__all__ = ["CONDITION_KINDS", "cabling_conditions", "is_good"]

#: Condition kind of each topology-change kind that makes one.
CONDITION_KINDS = {"link_down": "link_down", "node_vanished": "node_missing", "width_degraded": "width_degraded",
                   "speed_degraded": "speed_degraded"}
_SEVERITY = {"link_down": "critical", "node_missing": "critical", "width_degraded": "warning",
             "speed_degraded": "warning"}


def _node_index(current: Fabric) -> GuidIndex:
    """``current``'s node GUIDs indexed (a host's node GUID is none of its port GUIDs': not ``guid_index``)."""
    return GuidIndex(current.guid, np.arange(current.num_nodes, dtype=np.int64))


def cabling_conditions(reference: Fabric, current: Fabric, *, cabling: bool = True) -> list[dict]:
    """The conditions of ``current`` against ``reference`` (see the module docstring).

    ``cabling=False`` leaves out missing cables and nodes (when a cabling plan checks those).

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> f = fat_tree(hosts=8, radix=4)
    >>> [(c["kind"], c["cable"]) for c in cabling_conditions(f, f.without_links([0]))]
    [('link_down', -1)]
    """
    out = []
    index = None
    for e in diff_topology(reference, current):  # the (few) differences
        kind = CONDITION_KINDS.get(e["kind"])
        if kind is None or (not cabling and kind in ("link_down", "node_missing")):
            continue
        c = {"kind": kind, "severity": _SEVERITY[kind], "condition": True}
        if kind == "node_missing":
            out.append({**c, "node": e["node"], "guid": e["guid"], **named("{0} missing", [-1], [e["node"]])})
            continue
        index = index or _node_index(current)
        nodes = index.nodes(np.array([int(g, 16) for g in e["guids"]], dtype=np.uint64))[0].tolist()
        c.update(a=e["a"], b=e["b"], guids=e["guids"], ports=e["ports"], nodes=nodes, cable=e["link"])
        names = [end.rsplit(" port ", 1)[0] for end in (e["a"], e["b"])]
        if kind == "link_down":
            c.update(named(f"cable down: {{0}} port {e['ports'][0]} - {{1}} port {e['ports'][1]}", nodes, names))
        else:
            c.update(old=e["old"], new=e["new"], **named(f"{e['text']} (reference: {e['old']})", nodes, names))
        out.append(c)
    return out


def is_good(reference: Fabric, current: Fabric) -> bool:
    """Whether ``current`` may become the reference by itself: nothing of ``reference`` missing or degraded."""
    return not cabling_conditions(reference, current)
