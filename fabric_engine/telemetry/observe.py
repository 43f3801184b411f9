"""Two sweeps of counters plus the :class:`Fabric` -> a :class:`FabricState`.

Per directed link ``d`` (from port ``ps`` of node ``s`` to port ``pt`` of node ``t``):

* **rate**: bytes sent, from ``PortXmitData`` of ``(s, ps)``; when that port was not
  read (a host port, a failed shard) from ``PortRcvData`` of ``(t, pt)``; when
  neither was read in both sweeps the link is *stale*: rate 0, listed in an alert,
  never an invented value.
* **util** = rate / capacity, exactly what the counters imply (not clipped).
* **xmit_wait**: the increase of ``PortXmitWait`` of ``(s, ps)`` normalized to one
  engine tick (``delta * tick_s / dt``), so telemetry and emulation frames compare.
  The share of time the port waited is ``delta * tick / dt`` with a tick of
  ``(tick_code + 1)`` symbol times (the time to move one byte on one lane, 4 ns at
  SDR; :func:`fabric_engine.congestion.symbol_time_ns`).
* **offered**: the rate the port would have sent had it never waited,
  ``rate / (1 - wait_share)``, so ``offered / capacity`` is the same congestion
  signal the emulator reports.
* error counters of ``(s, ps)`` against :class:`Thresholds` -> alerts.

Counters are checked before they become rates (issue 26; :mod:`.rates`): a read older
than the previous one, a read from the future, two reads closer than
:data:`~.rates.MIN_INTERVAL_S`, or a data counter giving more than
:data:`~.rates.CAPACITY_MARGIN` times its link's ``capacity_gbps`` is *held*: no rate
from it (when the other end's counter is good, the link's rate comes from that one;
otherwise the link is stale, rate 0), and a ``counter_suspect`` alert (warning) names
the port, the counter, the reason and the figures. A 64-bit counter that went
backwards is a reset, never a wrap: its rate is the new value's only when that is
plausible.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..congestion import rank_hotspots, symbol_time_ns
from ..state import FabricState
from ..topology import KIND_HOST, Fabric
from .alerts import Thresholds, error_alerts, named
from .counters import COLUMN, CounterSamples, port_key
from .rates import (
    CAPACITY_MARGIN,
    FUTURE,
    FUTURE_MARGIN_S,
    LATCHED,
    MIN_INTERVAL_S,
    OUT_OF_ORDER,
    OVER_CAPACITY,
    RESET,
    STALE,
    SUSPECT,
    TOO_CLOSE,
    WRAPPED,
    CounterDeltas,
    counter_deltas,
)

__all__ = ["Observation", "observe", "link_port_keys"]

_XD, _RD, _XW = COLUMN["PortXmitData"], COLUMN["PortRcvData"], COLUMN["PortXmitWait"]
#: Waiting share above which ``offered`` is capped (a port that waited all the time).
_MAX_WAIT = 0.99
#: Held reads listed one alert each (the rest are counted in one more alert).
_SUSPECT_ALERTS = 20


@dataclass(frozen=True, eq=False)
class Observation:
    """What one pair of sweeps says about the fabric.

    ``state`` is the :class:`FabricState` (``rate_gbps``, ``util``, ``offered_gbps``,
    ``xmit_wait``, ``capacity_gbps``, alerts). Per directed link ``[2L]``: ``stale`` bool,
    ``flags`` uint8 (``rates`` flags of the counters used), ``wait_share`` float32 (time
    share the out port waited); a stale link's flags are those of both its counters, so a held
    read shows why (``rates.SUSPECT`` bits). ``deltas`` keeps every port's increases.
    """

    state: FabricState
    stale: np.ndarray
    flags: np.ndarray
    wait_share: np.ndarray
    deltas: CounterDeltas


def link_port_keys(fabric: Fabric) -> tuple[np.ndarray, np.ndarray]:
    """``port_key`` of the out port and of the in port of every directed link, int64 ``[2L]`` each."""
    f = fabric
    src_slot = f.port_offset[f.dl_src] + f.dl_src_port - 1
    dst_slot = f.port_offset[f.dl_dst] + f.dl_dst_port - 1
    return port_key(f.port_lid[src_slot], f.dl_src_port), port_key(f.port_lid[dst_slot], f.dl_dst_port)


def _out_end(fabric: Fabric, d: int) -> tuple[int, str, int]:
    """``(node, name, port)`` of the port directed link ``d`` leaves."""
    n = int(fabric.dl_src[d])
    return n, str(fabric.node_name[n]), int(fabric.dl_src_port[d])


def _in_end(fabric: Fabric, d: int) -> tuple[int, str, int]:
    """``(node, name, port)`` of the port directed link ``d`` enters."""
    n = int(fabric.dl_dst[d])
    return n, str(fabric.node_name[n]), int(fabric.dl_dst_port[d])


def observe(fabric: Fabric, prev: CounterSamples, cur: CounterSamples, *, seq: int, t: float | None = None,
            tick_s: float = 1.0, wrap: bool = False, tick_code: int = 0,
            thresholds: Thresholds | None = None, hotspots: int = 10, now: float | None = None) -> Observation:
    """The fabric's state between sweep ``prev`` and sweep ``cur``.

    Parameters
    ----------
    fabric : Fabric
        Topology whose LIDs the samples were read through.
    prev, cur : CounterSamples
        Two successive sweeps, merged (one row per port).
    seq : int
        Sequence number of the frame.
    t : float, optional
        Time of the state; defaults to the newest read in ``cur``.
    tick_s : float
        Engine tick that ``xmit_wait`` is normalized to.
    wrap : bool
        Basic counters of this fabric wrap instead of latching.
    tick_code : int
        ``Tick`` of PortSamplesControl (0..255): one counter tick is ``tick_code + 1`` symbol times.
    now : float, optional
        The clock that reads from the future are held against; defaults to ``time.time()``.

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> f = fat_tree(hosts=4, radix=4, speed="SDR")
    >>> xkey, _ = link_port_keys(f)
    >>> def sweep(words, t):
    ...     return CounterSamples.from_records([{"lid": int(k // 256), "port": int(k % 256), "t": t,
    ...         "extended": True, "counters": {"PortXmitData": words}} for k in xkey])
    >>> obs = observe(f, sweep(0, 0.0), sweep(125_000_000, 1.0), seq=1)
    >>> obs.state.rate_gbps.tolist()[:2], obs.state.util.tolist()[:2]
    ([4.0, 4.0], [0.5, 0.5])
    """
    f = fabric
    now = time.time() if now is None else float(now)
    deltas = counter_deltas(prev, cur, wrap=wrap, now=now)
    xkey, rkey = link_port_keys(f)
    xrow, rrow = deltas.lookup(xkey), deltas.lookup(rkey)
    cap = f.capacity_gbps
    # the data counters at either end of a link may not carry more than the link can, with a margin for clocks
    max_rate = np.full(deltas.delta.shape, np.inf)
    most = cap * (CAPACITY_MARGIN * 1e9 / 8.0)  # bytes/s
    for rows, c in ((xrow, _XD), (rrow, _RD)):
        on = (rows >= 0) & (cap > 0)
        max_rate[rows[on], c] = most[on]
    deltas = deltas.hold_over(max_rate)
    rate = deltas.rate
    flags = deltas.flags

    def col(rows: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ok = rows >= 0
        r = np.where(ok, rows, 0)
        fl = np.where(ok, flags[r, c], STALE)
        good = ok & ((fl & STALE) == 0)
        return np.where(good, rate[r, c], 0.0), good, fl

    x_bps, x_ok, x_fl = col(xrow, _XD)
    r_bps, r_ok, r_fl = col(rrow, _RD)
    use_x = x_ok
    bytes_s = np.where(use_x, x_bps, np.where(r_ok, r_bps, 0.0))
    stale = ~(x_ok | r_ok)
    link_flags = np.where(use_x, x_fl, np.where(r_ok, r_fl, x_fl | r_fl | STALE)).astype(np.uint8)
    rate_gbps = bytes_s * 8.0 / 1e9
    util = np.divide(rate_gbps, cap, out=np.zeros_like(rate_gbps), where=cap > 0)
    w_rate, w_ok, _ = col(xrow, _XW)
    width2 = np.concatenate([f.width, f.width]).astype(np.float64)
    tick_ns = symbol_time_ns(cap, width2) * (int(tick_code) + 1)
    wait_share = np.clip(np.where(w_ok, w_rate * tick_ns * 1e-9, 0.0), 0.0, 1.0)
    offered = rate_gbps / (1.0 - np.minimum(wait_share, _MAX_WAIT))
    xmit_wait = np.where(w_ok, w_rate * tick_s, 0.0)
    into_host = f.kind[f.dl_dst] == KIND_HOST
    between_switches = (f.kind[f.dl_src] != KIND_HOST) & ~into_host
    newest = cur.t[cur.bits > 0]
    when = float(t) if t is not None else (float(newest.max()) if newest.size else 0.0)
    alerts = error_alerts(deltas, xrow, lambda k: _out_end(f, k), np.arange(2 * f.num_links), thresholds)
    alerts += _counter_alerts(f, stale, link_flags)
    alerts += _suspect_alerts(f, deltas, xrow, rrow, now)
    n = 2 * f.num_links
    hot = rank_hotspots(offered, rate_gbps, cap, xmit_wait, np.zeros(n), sp.csr_matrix((0, n)), np.zeros(0),
                        np.zeros(0, np.int64), [], count=hotspots) if hotspots else []
    state = FabricState(
        seq, when, float(tick_s), rate_gbps.astype(np.float32), util.astype(np.float32),
        throughput_gbps=float(rate_gbps[into_host].sum()), switch_gbps=float(rate_gbps[between_switches].sum()),
        jobs=[], alerts=alerts,
        offered_gbps=offered.astype(np.float32), xmit_wait=xmit_wait.astype(np.float32),
        ecn=np.zeros(n, np.float32), hotspots=hot, capacity_gbps=cap, stale=stale,
    )
    return Observation(state, stale, link_flags, wait_share.astype(np.float32), deltas)


def _counter_alerts(fabric: Fabric, stale: np.ndarray, flags: np.ndarray) -> list[dict]:
    """One summary alert each for stale links and for data counters that reset, latched or wrapped."""
    out = []
    for mask, kind, severity, what in (
        (stale, "stale", "warning", "no counters in both sweeps; rate unknown"),
        ((flags & RESET) > 0, "counter_reset", "info", "data counter went backwards (reset or cleared)"),
        ((flags & LATCHED) > 0, "counter_latched", "warning", "data counter stopped at its maximum"),
        ((flags & WRAPPED) > 0, "counter_wrapped", "info", "data counter wrapped around"),
    ):
        links = np.flatnonzero(mask)
        if links.size:
            ends = [_out_end(fabric, int(d)) for d in links[:3]]
            first = ", ".join(f"{{{i}}} port {p}" for i, (_, _, p) in enumerate(ends))
            out.append({"kind": kind, "severity": severity, "count": int(links.size), "links": links[:50].tolist(),
                        **named(f"{links.size} links: {what} ({first}" + (", ..." if links.size > 3 else "") + ")",
                                [n for n, _, _ in ends], [name for _, name, _ in ends])})
    return out


#: Why a read was held, most telling first: (flag, ``reason`` of the alert).
_REASONS = ((FUTURE, "future"), (OUT_OF_ORDER, "out_of_order"), (TOO_CLOSE, "too_close"),
            (OVER_CAPACITY, "over_capacity"))


def _suspect_alerts(fabric: Fabric, deltas: CounterDeltas, xrow: np.ndarray, rrow: np.ndarray, now: float,
                    limit: int = _SUSPECT_ALERTS) -> list[dict]:
    """One ``counter_suspect`` alert per held data counter of a link end (at most ``limit``, then one summary).

    Each names the port (``port``, so that views that may not name its host get it hidden), the
    ``counter``, the directed ``link`` it counts, the ``reason`` (``future``, ``out_of_order``,
    ``too_close``, ``over_capacity``) and the figures: ``read_at``, ``dt_s``, ``words`` (the
    increase the counters gave, in 4-octet words), ``rate_gbps`` (what it would have been),
    ``capacity_gbps``, and ``reset`` (the counter also went backwards).
    """
    f = fabric
    cap = f.capacity_gbps
    hits = []  # (links, rows, column, counter name, label of the port)
    for rows, c, name, label in ((xrow, _XD, "PortXmitData", _out_end), (rrow, _RD, "PortRcvData", _in_end)):
        fl = deltas.flags[np.maximum(rows, 0), c]
        links = np.flatnonzero((rows >= 0) & ((fl & SUSPECT) > 0))
        if links.size:
            hits.append((links, rows[links], c, name, label))
    total = sum(len(h[0]) for h in hits)
    if not total:
        return []
    gbps = deltas.implied_rate * 8.0 / 1e9
    out = []
    for links, rows, c, name, label in hits:
        for d, r in zip(links[:limit - len(out)].tolist(), rows[:limit - len(out)].tolist(), strict=True):
            fl = int(deltas.flags[r, c])  # the few listed ports only
            reason = next(why for bit, why in _REASONS if fl & bit)
            t, dt = float(deltas.t[r, c]), float(deltas.dt[r, c])
            words = float(deltas.delta[r, c]) / 4.0
            figures = {
                "future": f"read at {max(t, t - dt):.3f}, {max(t, t - dt) - now:,.0f} s ahead of the clock "
                          f"(at most {FUTURE_MARGIN_S:g} s)",
                "out_of_order": f"read at {t:.3f}, {-dt:.3f} s before the previous read",
                "too_close": f"{dt * 1e3:.1f} ms after the previous read (at least {MIN_INTERVAL_S * 1e3:g} ms)"
                             + (f"; {words:,.0f} words would read as {gbps[r, c]:,.0f} Gb/s" if dt > 0 else ""),
                "over_capacity": f"{words:,.0f} words in {dt:.3f} s = {gbps[r, c]:,.0f} Gb/s, over "
                                 f"{CAPACITY_MARGIN:g}x the link's {cap[d]:g} Gb/s",
            }[reason]
            reset = bool(fl & RESET)
            node, node_name, number = label(f, d)
            out.append({
                "kind": "counter_suspect", "severity": "warning", "port": f"{node_name} port {number}",
                "counter": name, "link": d, "reason": reason, "read_at": round(t, 3), "dt_s": round(dt, 6),
                "words": words, "rate_gbps": round(float(gbps[r, c]), 3), "capacity_gbps": float(cap[d]),
                "reset": reset, **named(f"{{0}} port {number}: {name} held, no rate ({reason.replace('_', ' ')}"
                                        + (", after going backwards" if reset else "") + f"): {figures}",
                                        [node], [node_name]),
            })
        if len(out) >= limit:
            break
    if total > len(out):
        counts = {why: 0 for _, why in _REASONS}
        for _links, rows, c, *_ in hits:
            fl = deltas.flags[rows, c]
            taken = np.zeros(len(rows), dtype=bool)
            for bit, why in _REASONS:  # each counter under its most telling reason
                mine = ((fl & bit) > 0) & ~taken
                counts[why] += int(mine.sum())
                taken |= mine
        why = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in counts.items() if n)
        out.append({"kind": "counter_suspect", "severity": "warning", "count": total, "listed": len(out),
                    "message": f"{total} data counters held, no rate ({why}); {len(out)} listed"})
    return out
