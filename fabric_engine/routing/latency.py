"""Latency of a routed path: switch forwarding plus cable propagation.

``latency = hops_through_switches x switch_ns + sum(cable length) x ns_per_m``

* ``switch_ns`` defaults to 130 ns, the port-to-port cut-through latency NVIDIA
  quotes for its Quantum (HDR) switches. For Quantum-2 (NDR) the data sheet gives no
  per-port figure and published numbers range from about 150 to 330 ns, so pass the
  figure of your hardware.
* ``ns_per_m`` defaults to 5 ns/m: signals in copper twinax and in optical fibre
  travel at about two thirds of the speed of light (~0.2 m/ns).
* Host adapters (HCA send/receive, PCIe) are outside the fabric and not counted;
  add them with ``adapter_ns`` (per end) when an end-to-end figure is wanted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import RoutingError
from .tables import Routing

__all__ = ["LatencyModel", "path_latency_ns", "trace_latency", "latency_claim", "DEFAULT_SWITCH_NS", "NS_PER_M"]

#: Default switch forwarding latency (NVIDIA Quantum HDR port-to-port figure), ns.
DEFAULT_SWITCH_NS = 130.0
#: Propagation delay per metre of cable (~2/3 c), ns.
NS_PER_M = 5.0


@dataclass(frozen=True)
class LatencyModel:
    """Per-switch forwarding latency, propagation per metre and per-end adapter latency (all ns)."""

    switch_ns: float = DEFAULT_SWITCH_NS
    ns_per_m: float = NS_PER_M
    adapter_ns: float = 0.0


def path_latency_ns(routing: Routing, src_hosts, dst_hosts, model: LatencyModel | None = None) -> np.ndarray:
    """Latency estimate of the routed path of every host pair, float64 ``[F]`` (NaN where broken)."""
    model = model or LatencyModel()
    f = routing.fabric
    m, broken = routing.paths(np.asarray(src_hosts), np.asarray(dst_hosts), return_broken=True)
    m = m.tocsr()
    links = np.diff(m.indptr)
    length = np.concatenate([f.length_m, f.length_m]).astype(np.float64)
    metres = m @ length
    switches = np.maximum(links - 1, 0)  # a path of k cables crosses k - 1 switches
    ns = switches * model.switch_ns + metres * model.ns_per_m + 2 * model.adapter_ns
    return np.where(broken, np.nan, ns)


def trace_latency(routing: Routing, hops: list[dict], model: LatencyModel | None = None) -> dict:
    """Latency breakdown of a :meth:`Routing.trace` result: ``switch_ns``, ``cable_ns``, ``total_ns``, ``metres``."""
    model = model or LatencyModel()
    f = routing.fabric
    links = [h["link"] for h in hops if h["link"] is not None]
    metres = float(sum(float(f.length_m[d % f.num_links]) for d in links))
    n_sw = sum(1 for h in hops if f.switch_index[h["node"]] >= 0)
    sw = n_sw * model.switch_ns
    cable = metres * model.ns_per_m
    return {"switches": n_sw, "metres": metres, "switch_ns": sw, "cable_ns": cable,
            "adapter_ns": 2 * model.adapter_ns, "total_ns": sw + cable + 2 * model.adapter_ns}


def latency_claim(routing: Routing, limit_ns: float = 1000.0, model: LatencyModel | None = None,
                  sample: int = 20000, seed: int = 0) -> dict:
    """Check "end-to-end fabric latency below ``limit_ns``" on a sample of host pairs.

    Returns the worst and mean latency found, the longest path (links) and whether the claim holds.
    """
    f = routing.fabric
    if f.num_hosts < 2:
        raise RoutingError("latency check needs at least two hosts")
    rng = np.random.default_rng(seed)
    h = f.hosts
    if len(h) * (len(h) - 1) <= sample:
        s, d = np.meshgrid(h, h, indexing="ij")
        keep = s != d
        s, d = s[keep], d[keep]
    else:
        s, d = rng.choice(h, sample), rng.choice(h, sample)
        keep = s != d
        s, d = s[keep], d[keep]
    ns = path_latency_ns(routing, s, d, model)
    ok = ~np.isnan(ns)
    worst = float(ns[ok].max()) if ok.any() else float("nan")
    model = model or LatencyModel()
    return {"pairs": int(len(ns)), "broken": int((~ok).sum()), "worst_ns": worst,
            "mean_ns": float(ns[ok].mean()) if ok.any() else float("nan"), "limit_ns": limit_ns,
            "holds": bool(ok.any() and worst < limit_ns), "switch_ns": model.switch_ns, "ns_per_m": model.ns_per_m}
