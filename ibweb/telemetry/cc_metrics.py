"""Congestion control series of ``/metrics`` (issue 41), beside the link health ones (:mod:`.health_metrics`).

``ibweb_port_fecn_per_second{fabric,node,port}`` and ``ibweb_port_becn_per_second{fabric,node,port}``: packets
received marked FECN / BECN per second over the two newest congestion readings of the port
(:mod:`.cc_readings`: the collector's ``perfquery --rcvcc``, a drop directory's, or a push's), gauges; a port
without a rate (read once, a counter that went down) has no series. The readings are keyed by LID and port as
perfquery addresses them, matched here to the nodes of the fabric's runtime record. As for the counters, a port of
a host the view may not name is left out with the switch port facing it.
"""

from __future__ import annotations

import numpy as np

from ibweb.access import View
from ibweb.runtime import record

from . import cc_readings
from .health_metrics import metric_lines, port_labels

__all__ = ["CC_HELP", "cc_families"]

CC_HELP = {
    "ibweb_port_fecn_per_second": "Packets received marked FECN (forward explicit congestion notification) per "
                                  "second, between the two newest congestion control reads (PortPktRcvFECN).",
    "ibweb_port_becn_per_second": "Packets received marked BECN (backward explicit congestion notification) per "
                                  "second, between the two newest congestion control reads (PortPktRcvBECN).",
}


def cc_families(view: View, fabric, nodes: tuple[int, int] | None = None) -> dict[str, tuple[str, str]]:
    """The congestion control families of ``fabric`` (a row) as ``view`` may see them (empty: no rates);
    ``nodes``: only the ports of nodes ``first <= n < end``."""
    r = cc_readings.readings(fabric.pk)
    if r is None or not r["keys"].size:
        return {}
    h = record.head_of(fabric)
    f = record.fabric(fabric.pk, h) if h is not None else None
    if f is None or not f.num_nodes:
        return {}
    slot_keys = f.port_lid.astype(np.int64) * 256 + f.port_num.astype(np.int64)
    at = np.minimum(np.searchsorted(r["keys"], slot_keys), r["keys"].size - 1)
    slots = np.flatnonzero(r["keys"][at] == slot_keys)  # the fabric's ports that were read
    rows = at[slots]
    node, port = f.port_node[slots].astype(np.int64), f.port_num[slots].astype(np.int64)
    keep, labels = port_labels(view, fabric, f, node, port, nodes)
    if not keep.any():
        return {}
    out = {}
    for name, _ in cc_readings.COUNTERS:
        metric = f"ibweb_port_{name}_per_second"
        text = metric_lines(metric, labels, r[f"{name}_per_s"][rows[keep]])
        if text:
            out[metric] = ("gauge", text)
    return out
