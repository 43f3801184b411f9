"""Cumulative per-port counters and their Prometheus text exposition.

Counters are kept per directed link ``d``: row ``d`` holds the counters of the
port at the *source* of ``d`` (its transmit side is ``d``, its receive side the
reverse link), so every cabled port has exactly one row and the labels come from
the topology alone. Two ways to fill them:

* telemetry-fed fabrics: :func:`totals_from_samples`, the raw counters of the
  newest sweep (data counters times 4, in bytes);
* emulated fabrics: :class:`CounterIntegrator`, which integrates the engine's
  per-link rates tick by tick into ever-growing counters (packets estimated at
  ``mtu`` bytes of payload; PortXmitWait from the state's estimate; no errors).

Metric names follow the community InfiniBand exporters (``infiniband_port_
transmit_data_bytes_total``, ``..._transmit_wait_total``, ``..._symbol_error_total``);
the text format is Prometheus' exposition format 0.0.4.
"""

from __future__ import annotations

import numpy as np

from ..state import FabricState
from ..topology import Fabric
from .counters import COLUMN, COLUMNS, WORD_BYTES, CounterSamples
from .observe import link_port_keys

__all__ = ["METRICS", "CounterIntegrator", "totals_from_samples", "render_metrics", "metric_families", "port_nodes",
           "render_families", "down_ports", "PORT_STATE", "CONTENT_TYPE", "escape_label_values"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: (metric name, counter, help) in exposition order.
METRICS: tuple[tuple[str, str, str], ...] = (
    ("infiniband_port_transmit_data_bytes_total", "PortXmitData", "Bytes transmitted (PortXmitData x 4)."),
    ("infiniband_port_receive_data_bytes_total", "PortRcvData", "Bytes received (PortRcvData x 4)."),
    ("infiniband_port_transmit_packets_total", "PortXmitPkts", "Packets transmitted (PortXmitPkts)."),
    ("infiniband_port_receive_packets_total", "PortRcvPkts", "Packets received (PortRcvPkts)."),
    ("infiniband_port_transmit_wait_total", "PortXmitWait",
     "Ticks during which the port had data to transmit but sent nothing (PortXmitWait)."),
    ("infiniband_port_symbol_error_total", "SymbolErrorCounter", "Minor link errors (SymbolErrorCounter)."),
    ("infiniband_port_link_error_recovery_total", "LinkErrorRecoveryCounter",
     "Successful link error recoveries (LinkErrorRecoveryCounter)."),
    ("infiniband_port_link_downed_total", "LinkDownedCounter", "Failed link error recoveries (LinkDownedCounter)."),
    ("infiniband_port_receive_errors_total", "PortRcvErrors", "Packets received with errors (PortRcvErrors)."),
    ("infiniband_port_receive_remote_physical_errors_total", "PortRcvRemotePhysicalErrors",
     "Packets received marked bad (PortRcvRemotePhysicalErrors)."),
    ("infiniband_port_receive_switch_relay_errors_total", "PortRcvSwitchRelayErrors",
     "Packets the switch could not forward (PortRcvSwitchRelayErrors)."),
    ("infiniband_port_transmit_discards_total", "PortXmitDiscards", "Outbound packets discarded (PortXmitDiscards)."),
    ("infiniband_port_transmit_constraint_errors_total", "PortXmitConstraintErrors",
     "Packets not sent for partition or rate constraints (PortXmitConstraintErrors)."),
    ("infiniband_port_receive_constraint_errors_total", "PortRcvConstraintErrors",
     "Packets dropped for partition or rate constraints (PortRcvConstraintErrors)."),
    ("infiniband_port_local_link_integrity_errors_total", "LocalLinkIntegrityErrors",
     "Local physical errors over the threshold (LocalLinkIntegrityErrors)."),
    ("infiniband_port_excessive_buffer_overrun_errors_total", "ExcessiveBufferOverrunErrors",
     "Consecutive receive buffer overruns (ExcessiveBufferOverrunErrors)."),
    ("infiniband_port_vl15_dropped_total", "VL15Dropped", "Subnet management packets dropped (VL15Dropped)."),
)
_ERRORS = [COLUMN[c] for c in COLUMNS[:13]]
#: The port state family: PortState as the SM reports it (1 Down, 4 Active), kept for the ports of a cable down.
PORT_STATE = ("infiniband_port_state", "Port state (PortState: 1 Down, 4 Active). Ports of a cable that is down "
                                       "but in the fabric's reference cabling stay, at 1, until it is back.")
_HELP = {metric: help_text for metric, _, help_text in METRICS}


def totals_from_samples(fabric: Fabric, samples: CounterSamples) -> np.ndarray:
    """Counters of the out port of every directed link from one sweep, float64 ``[2L, C]`` (NaN: not read)."""
    xkey, _ = link_port_keys(fabric)
    keys = samples.keys
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    out = np.full((len(xkey), len(COLUMNS)), np.nan)
    if len(sk) == 0:
        return out
    pos = np.minimum(np.searchsorted(sk, xkey), len(sk) - 1)
    hit = sk[pos] == xkey
    rows = order[pos[hit]]
    vals = samples.values[rows].astype(np.float64)
    vals[:, [COLUMN["PortXmitData"], COLUMN["PortRcvData"]]] *= WORD_BYTES
    out[hit] = np.where(samples.bits[rows] > 0, vals, np.nan)
    return out


class CounterIntegrator:
    """Ever-growing counters of an emulated fabric, integrated from its per-link rates.

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> from fabric_engine.state import FabricState
    >>> f = fat_tree(hosts=8, radix=4)
    >>> acc = CounterIntegrator(f)
    >>> rate = np.full(2 * f.num_links, 8.0, np.float32)   # 8 Gb/s = 1 GB/s everywhere
    >>> acc.add(FabricState(1, 0.0, 0.5, rate, rate / 400))
    >>> float(acc.totals[0, COLUMN["PortXmitData"]])
    500000000.0
    """

    def __init__(self, fabric: Fabric, mtu: int = 4096) -> None:
        self.fabric = fabric
        self.mtu = int(mtu)
        n = 2 * fabric.num_links
        self.totals = np.zeros((n, len(COLUMNS)), dtype=np.float64)
        self.totals[:, [COLUMN[c] for c in ("PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts",
                                            "PortMulticastRcvPkts", "QP1Dropped")]] = np.nan
        self._reverse = np.asarray(fabric.reverse(np.arange(n)))

    def add(self, state: FabricState) -> None:
        """Add one tick of ``state`` (its rates held for ``state.tick_s`` seconds)."""
        sent = state.rate_gbps.astype(np.float64) * 1e9 / 8.0 * state.tick_s
        got = sent[self._reverse]
        t = self.totals
        t[:, COLUMN["PortXmitData"]] += sent
        t[:, COLUMN["PortRcvData"]] += got
        t[:, COLUMN["PortXmitPkts"]] += np.ceil(sent / self.mtu)
        t[:, COLUMN["PortRcvPkts"]] += np.ceil(got / self.mtu)
        if state.xmit_wait is not None:
            t[:, COLUMN["PortXmitWait"]] += np.round(state.xmit_wait.astype(np.float64))


def escape_label_values(values: np.ndarray) -> np.ndarray:
    """Label values as the exposition format writes them (backslash, double quote and newline escaped)."""
    if not values.size:
        return values.astype(str)
    out = np.char.replace(values.astype(str), "\\", "\\\\")
    out = np.char.replace(out, '"', '\\"')
    return np.char.replace(out, "\n", "\\n")


def _labels(fabric: str, guid, port, name, rguid, rport, rname) -> np.ndarray:
    """``{fabric=..,guid=..,port=..,name=..,remote_guid=..,remote_port=..,remote_name=..} `` per port (arrays)."""
    fab = escape_label_values(np.array([fabric], dtype=object))[0]
    out = np.char.add(np.char.add(np.char.add(f'{{fabric="{fab}",guid="', guid), '",port="'), port.astype(str))
    out = np.char.add(np.char.add(np.char.add(out, '",name="'), name), '",remote_guid="')
    out = np.char.add(np.char.add(np.char.add(out, rguid), '",remote_port="'), rport.astype(str))
    return np.char.add(np.char.add(np.char.add(out, '",remote_name="'), rname), '"} ')


def down_ports(alerts: list[dict]) -> list[dict]:
    """Both ports of every cable down (condition alerts ``link_down``), as ``/metrics`` labels them."""
    out = []
    for a in alerts:  # the few condition alerts of a tick
        if a.get("kind") != "link_down" or not a.get("condition"):
            continue
        names = [str(a.get(k, "")).rsplit(" port ", 1)[0] for k in ("a", "b")]
        (ga, gb), (pa, pb) = a["guids"], a["ports"]
        out += [{"guid": ga, "port": pa, "name": names[0], "remote_guid": gb, "remote_port": pb,
                 "remote_name": names[1]},
                {"guid": gb, "port": pb, "name": names[1], "remote_guid": ga, "remote_port": pa,
                 "remote_name": names[0]}]
    return out


def port_nodes(topology: dict) -> np.ndarray:
    """The node of every exported port (the source of every directed link, :func:`metric_families`' rows)."""
    links = topology["links"]
    return np.r_[np.asarray(links["a_node"], np.int64), np.asarray(links["b_node"], np.int64)]


def metric_families(topology: dict, totals: np.ndarray, fabric: str, extra: dict[str, float] | None = None,
                    down: list[dict] | None = None, nodes: tuple[int, int] | None = None,
                    hidden: np.ndarray | None = None) -> dict[str, tuple[str, str]]:
    """The samples of one fabric per metric family: ``{name: (type, text of its sample lines)}``.

    Parameters as :func:`render_metrics`; ``down``: ports of cables that are down
    (:func:`down_ports`), exported in :data:`PORT_STATE` at 1 beside every cabled port at 4;
    ``nodes``: only the ports of nodes ``first <= n < end`` (a scrape target's part,
    :mod:`~fabric_engine.telemetry.metric_targets`); ``hidden``: bool ``[2L]``, rows not exported at all.
    """
    names, links = topology["nodes"], topology["links"]
    a, b = np.asarray(links["a_node"], np.int64), np.asarray(links["b_node"], np.int64)
    ap, bp = np.asarray(links["a_port"], np.int64), np.asarray(links["b_port"], np.int64)
    src, dst = np.r_[a, b], np.r_[b, a]
    sport, dport = np.r_[ap, bp], np.r_[bp, ap]
    if len(src) != len(totals):
        raise ValueError(f"totals cover {len(totals)} directed links, the topology has {len(src)}")
    guid = np.asarray(names["guid"], dtype=object)
    keep = np.ones(len(src), bool) if hidden is None else ~np.asarray(hidden, bool)
    if nodes is not None:  # labels are made for the part's rows only
        keep &= (src >= nodes[0]) & (src < nodes[1])
        if down:
            mine = set(guid[nodes[0]:nodes[1]].tolist())
            down = [p for p in down if p["guid"] in mine]
    if not keep.all():
        src, dst, sport, dport, totals = src[keep], dst[keep], sport[keep], dport[keep], totals[keep]
    ends = np.unique(np.r_[src, dst])
    name = np.empty(len(names["name"]), dtype=object)
    name[ends] = escape_label_values(np.asarray(names["name"], dtype=object)[ends])
    labels = _labels(fabric, guid[src].astype(str), sport, name[src], guid[dst].astype(str), dport, name[dst])
    out: dict[str, tuple[str, str]] = {}
    for metric, counter, _ in METRICS:  # loop over the metric families
        v = totals[:, COLUMN[counter]]
        ok = ~np.isnan(v)
        if ok.any():
            lines = np.char.add(np.char.add(metric, labels[ok]), np.round(v[ok]).astype(np.uint64).astype(str))
            out[metric] = ("counter", "\n".join(lines.tolist()) + "\n")
    shown = ~np.isnan(totals).all(axis=1)  # ports a view may not see have no counters at all
    state = [np.char.add(np.char.add(PORT_STATE[0], labels[shown]), "4")] if shown.any() else []
    if down:
        d = {k: np.array([str(p[k]) for p in down], dtype=object) for k in down[0]}
        d_labels = _labels(fabric, d["guid"], d["port"], escape_label_values(d["name"]), d["remote_guid"],
                           d["remote_port"], escape_label_values(d["remote_name"]))
        state.append(np.char.add(np.char.add(PORT_STATE[0], d_labels), "1"))
    if state:
        out[PORT_STATE[0]] = ("gauge", "\n".join(np.concatenate(state).tolist()) + "\n")
    fab = escape_label_values(np.array([fabric], dtype=object))[0]
    for metric, value in (extra or {}).items():
        out[metric] = ("gauge", f'{metric}{{fabric="{fab}"}} {float(value)!r}\n')
    return out


def render_families(per_fabric: list[dict[str, tuple[str, str]]], help_text: dict[str, str] | None = None) -> str:
    """The exposition of several fabrics' :func:`metric_families`: each family once (one ``# HELP``/``# TYPE``),
    its samples of every fabric after it, families in first-seen order."""
    helps = {**_HELP, PORT_STATE[0]: PORT_STATE[1], **(help_text or {})}
    order: dict[str, str] = {}
    for families in per_fabric:
        for metric, (kind, _) in families.items():
            order.setdefault(metric, kind)
    parts: list[str] = []
    for metric, kind in order.items():  # loop over the families
        if metric in helps:
            parts.append(f"# HELP {metric} {helps[metric]}\n")
        parts.append(f"# TYPE {metric} {kind}\n")
        parts.extend(families[metric][1] for families in per_fabric if metric in families)
    return "".join(parts)


def render_metrics(topology: dict, totals: np.ndarray, fabric: str, extra: dict[str, float] | None = None,
                   down: list[dict] | None = None) -> str:
    """The Prometheus text of every cabled port of one fabric (several: :func:`render_families`).

    Parameters
    ----------
    topology : dict
        The fabric in ibweb's JSON form (:func:`fabric_engine.formats.json_format.to_json`),
        as the live feed stores it.
    totals : ndarray, float64 ``[2L, C]``
        Counters of the out port of every directed link (NaN: not known, not exported).
    fabric : str
        Value of the ``fabric`` label (the fabric's slug).
    extra : dict, optional
        Fabric-level gauges ``{metric name: value}`` appended at the end
        (e.g. ``infiniband_sweep_age_seconds``).

    Labels per port: ``fabric``, ``guid`` (node GUID), ``port``, ``name`` (node name),
    ``remote_guid``, ``remote_port``, ``remote_name``.
    """
    return render_families([metric_families(topology, totals, fabric, extra, down)])
