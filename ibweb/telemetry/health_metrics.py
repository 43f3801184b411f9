"""Link health series of ``/metrics`` (issue 37), from each fabric's graded ports (:mod:`ibweb.runtime.health`).

``ibweb_port_ber{fabric,node,port,kind="raw|effective"}``, ``ibweb_port_module_temperature_celsius{fabric,node,
port}`` and ``ibweb_port_health_grade{fabric,node,port}`` (0 normal, 1 warning, 2 error: the worst of BER, module
and downs). As for the counters, a port of a host the view may not name is left out with the switch port facing it.

Link downs are counters (downs seen since the fabric's leader started, never lowered; a new leader starts them
again, which Prometheus' ``rate``/``increase`` take as a counter reset):

* ``ibweb_fabric_link_downs_total{fabric}``: every port's, always one series per fabric (0 included), what an
  operator alerts on (``increase(...[5m]) > 0``) without knowing which ports exist;
* ``ibweb_port_link_downs_total{fabric,node,port}``: only the ports seen down at least once. A series for each of
  200,000 ports would add 200,000 series that stay at 0 on a healthy fabric to every scrape; downs are rare and
  concentrated on a few bad cables, so the series that exist are the ones worth looking at (a port's series
  appears at its first down: compare it with the fabric's counter, which does not miss it).
"""

from __future__ import annotations

import numpy as np

from fabric_engine.telemetry.prometheus import escape_label_values
from ibweb.access import View, redaction
from ibweb.runtime import health, record

__all__ = ["HEALTH_HELP", "health_families", "port_labels", "metric_lines"]

HEALTH_HELP = {
    "ibweb_port_ber": "Bit error rate of the port: raw (pre-FEC, the worst lane) or effective (post-FEC).",
    "ibweb_port_module_temperature_celsius": "Temperature of the port's cable module.",
    "ibweb_port_health_grade": "Link health grade of the port: 0 normal, 1 warning, 2 error (BER, module, downs).",
    "ibweb_fabric_link_downs_total": "Link downs seen on the fabric's ports since its leader started.",
    "ibweb_port_link_downs_total": "Link downs seen on the port since the fabric's leader started (ports seen down "
                                   "at least once).",
}


def metric_lines(metric: str, labels: np.ndarray, values: np.ndarray, kind: str | None = None) -> str:
    ok = ~np.isnan(values)
    if not ok.any():
        return ""
    lab = labels[ok] if kind is None else np.char.add(labels[ok], f',kind="{kind}"')
    text = np.char.add(np.char.add(np.char.add(metric, lab), "} "), np.char.mod("%.6g", values[ok]))
    return "\n".join(text.tolist()) + "\n"


def port_labels(view: View, fabric, f, node: np.ndarray, port: np.ndarray,
                nodes: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Which of the ports ``(node, port)`` of ``f`` (the record's fabric of row ``fabric``) ``view`` may see, in the
    node range ``nodes`` (a port of a host the view may not name is left out with the switch port facing it), and
    the labels ``{fabric="..",node="..",port=".."`` (no closing brace) of those it keeps."""
    keep = np.ones(node.size, bool) if nodes is None else (node >= nodes[0]) & (node < nodes[1])
    shown = redaction(view, fabric, f)
    if shown.host_guids is not None:
        hidden = shown.hidden_nodes(f)
        d = f.port_out_link[f.slot(node, port)]
        facing = np.where(d >= 0, f.dl_dst[np.maximum(d, 0)], node)
        keep &= ~hidden[node] & ~hidden[facing]
    fab = escape_label_values(np.array([fabric.slug], dtype=object))[0]
    names = escape_label_values(np.asarray(f.node_name, dtype=object)[node[keep]])
    labels = np.char.add(np.char.add(np.char.add(f'{{fabric="{fab}",node="', names), '",port="'),
                         port[keep].astype(str))
    return keep, np.char.add(labels, '"')


def health_families(view: View, fabric, nodes: tuple[int, int] | None = None) -> dict[str, tuple[str, str]]:
    """The link health families of ``fabric`` (a row) as ``view`` may see them (empty: none graded); ``nodes``:
    only the ports of nodes ``first <= n < end`` and, unless the range starts at node 0, no fabric-wide series
    (a scrape target's part)."""
    entry = health.ports_for(fabric)
    h = record.head_of(fabric)
    f = record.fabric(fabric.pk, h) if entry is not None and h is not None else None
    if f is None or not entry["node"].size or int(entry["node"].max()) >= f.num_nodes:
        return {}
    node, port = entry["node"].astype(np.int64), entry["port"].astype(np.int64)
    keep, labels = port_labels(view, fabric, f, node, port, nodes)
    out = {}
    ber = metric_lines("ibweb_port_ber", labels, entry["raw"][keep], "raw") + \
        metric_lines("ibweb_port_ber", labels, entry["effective"][keep], "effective")
    if ber:
        out["ibweb_port_ber"] = ("gauge", ber)
    temp = metric_lines("ibweb_port_module_temperature_celsius", labels, entry["temp"][keep])
    if temp:
        out["ibweb_port_module_temperature_celsius"] = ("gauge", temp)
    grade = metric_lines("ibweb_port_health_grade", labels, entry["grade"][keep].astype(np.float64))
    if grade:
        out["ibweb_port_health_grade"] = ("gauge", grade)
    if "downs_total" in entry:  # fabric-wide: a count names no host
        if nodes is None or nodes[0] == 0:
            fab = escape_label_values(np.array([fabric.slug], dtype=object))[0]
            out["ibweb_fabric_link_downs_total"] = (
                "counter",
                f'ibweb_fabric_link_downs_total{{fabric="{fab}"}} {int(entry.get("downs_fabric_total", 0))}\n')
        total = entry["downs_total"][keep].astype(np.float64)
        downs = metric_lines("ibweb_port_link_downs_total", labels, np.where(total > 0, total, np.nan))
        if downs:
            out["ibweb_port_link_downs_total"] = ("counter", downs)
    return out
