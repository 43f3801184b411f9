"""Congestion estimates from offered and carried load: PortXmitWait, ECN marking, hotspots.

The solver gives, per directed link, the load its flows would offer and the rate
they are carried at. In a credit-based fabric the difference is time the port
holds data it cannot send:

* **PortXmitWait** counts the ticks in which a port had data to send but sent
  nothing during the whole tick, for lack of credits or of arbitration. A tick is
  a multiple of the symbol time, the time to move one byte on one lane (4 ns at
  SDR), selected by the ``Tick`` field of PortSamplesControl: code ``k`` means
  ``k + 1`` symbol times (ibdiagnet user manual, "Congestion Assessment on
  InfiniBand Links"; how real devices increment it varies by generation). The
  estimate counts the fraction of offered load that is not carried as waiting time.
* **ECN**: a port marks FECN on packets while its queue is above a threshold. In
  a fluid model a queue grows where offered load exceeds a fraction
  ``threshold`` of capacity, so the share of packets marked is the share of the
  offered load above it: ``1 - threshold * capacity / offered``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .incidence import Incidence

__all__ = ["symbol_time_ns", "xmit_wait_ticks", "ecn_fraction", "rank_hotspots"]


def symbol_time_ns(capacity_gbps: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Time to move one byte on one lane, ns, per link: ``8 / (capacity / width)`` (4 ns at SDR 1x)."""
    lane = np.asarray(capacity_gbps, dtype=np.float64) / np.asarray(width, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return 8.0 / lane


def xmit_wait_ticks(offered: np.ndarray, carried: np.ndarray, capacity: np.ndarray, width: np.ndarray,
                    interval_s: float, tick_code: int = 0) -> np.ndarray:
    """Estimated PortXmitWait increase over ``interval_s`` per directed link, float64 ``[E]``.

    The port waits for the fraction ``(offered - carried) / offered`` of the interval.

    >>> xmit_wait_ticks(np.array([400.0, 100.0]), np.array([200.0, 100.0]), np.array([200.0, 200.0]),
    ...                 np.array([4, 4]), 1e-6).tolist()
    [3125.0, 0.0]
    """
    off = np.asarray(offered, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = np.where(off > 0, np.clip((off - carried) / off, 0.0, 1.0), 0.0)
    tick_ns = symbol_time_ns(capacity, width) * (int(tick_code) + 1)
    return np.where(np.isfinite(tick_ns) & (tick_ns > 0), wait * interval_s * 1e9 / tick_ns, 0.0)


def ecn_fraction(offered: np.ndarray, capacity: np.ndarray, threshold: float = 0.9) -> np.ndarray:
    """Estimated fraction of packets marked FECN per directed link, float64 ``[E]`` in ``[0, 1)``.

    >>> ecn_fraction(np.array([450.0, 300.0, 0.0]), np.array([400.0, 400.0, 400.0])).round(3).tolist()
    [0.2, 0.0, 0.0]
    """
    off = np.asarray(offered, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        frac = 1.0 - threshold * np.asarray(capacity, dtype=np.float64) / off
    return np.where(off > 0, np.clip(np.nan_to_num(frac, nan=0.0), 0.0, 1.0), 0.0)


def rank_hotspots(offered: np.ndarray, carried: np.ndarray, capacity: np.ndarray, xmit_wait: np.ndarray,
                  ecn: np.ndarray, incidence: sp.csr_matrix | Incidence, flow_rate, flow_owner: np.ndarray,
                  owner_names: list[str], count: int = 10) -> list[dict]:
    """The ``count`` most congested directed links, ranked by ``offered / capacity`` then utilization.

    Each entry: ``{"link", "congestion", "util", "offered_gbps", "rate_gbps", "xmit_wait", "ecn", "jobs"}``
    where ``jobs`` lists up to three ``{"id", "gbps"}`` that carry most on the link
    (``flow_owner`` indexes ``owner_names``; -1 for unattributed flows). Links
    with no offered load are left out. ``flow_rate``: every flow's rate, float ``(F,)``, or a function
    ``flow_rate(rows)`` giving the rates of the rows ``rows`` (only the flows on the hotspots are asked for).
    """
    cap = np.asarray(capacity, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.nan_to_num(offered / cap, nan=0.0, posinf=0.0)
        util = np.nan_to_num(carried / cap, nan=0.0, posinf=0.0)
    live = np.flatnonzero(offered > 0)
    if live.size == 0:
        return []
    if live.size > 4 * count:  # the links at or above the count-th largest ratio, then the ranking among those few
        bar = np.partition(ratio[live], live.size - count)[live.size - count]
        live = live[ratio[live] >= bar]
    order = np.lexsort((-util[live], -ratio[live]))[:count]
    hot = live[order]
    names = list(owner_names) + ["background"]
    per_job = np.zeros((len(names), len(hot)))
    if len(flow_owner):  # the flows on the hot links only, from the incidence's column pattern
        col, row, share = Incidence.of(incidence).columns(hot)
        owner = np.asarray(flow_owner)[row]
        owner = np.where(owner >= 0, owner, len(owner_names))
        rate = flow_rate(row) if callable(flow_rate) else np.asarray(flow_rate)[row]
        np.add.at(per_job, (owner, col), share * rate)
    out = []
    for col, d in enumerate(hot):  # loop over the few hotspots
        top = np.argsort(-np.round(per_job[:, col], 6), kind="stable")[:3]  # equal shares: in job order
        jobs = [{"id": names[j], "gbps": round(float(per_job[j, col]), 3)} for j in top if per_job[j, col] > 0]
        out.append({"link": int(d), "congestion": round(float(ratio[d]), 4), "util": round(float(util[d]), 4),
                    "offered_gbps": round(float(offered[d]), 3), "rate_gbps": round(float(carried[d]), 3),
                    "xmit_wait": float(np.round(xmit_wait[d])), "ecn": round(float(ecn[d]), 4), "jobs": jobs})
    return out
