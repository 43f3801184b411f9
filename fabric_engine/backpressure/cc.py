"""InfiniBand congestion control (IBA Annex A10) on top of the credit model: a steady-state what-if.

With congestion control on, a switch port that is the root of congestion marks FECN on the packets it sends
(one in ``marking_rate + 1`` while its queue is above the threshold); the destination returns a BECN to the
source; the source raises its congestion control table index (CCTI) by ``ccti_increase`` per BECN and lowers it
by one each ``ccti_timer``; the table entry at the CCTI delays its packets (:meth:`CongestionControl.rate_steps`).

Steady state, per flow the sources throttle (its path crosses a marking port, its SL is under CC at the CA):

* **Held at its fair share.** The CCTI settles where BECNs and timer expiries balance: every flow at a marking
  port sees the same marking, so the flows there settle at equal rates that just fill the port (no queue left
  to spread): the max-min fair rate, what ideal congestion control gives (:func:`fabric_engine.flows.max_min_fair`).
* **Marking too sparse.** A flow at rate ``x`` (a fraction of its line rate, ``P`` packets a second at line rate)
  gets at most ``x * P / (marking_rate + 1)`` BECNs a second; the CCTI can only stay up if that times
  ``ccti_increase`` matches one decrement per timer: below ``x_cc = (marking_rate + 1) / (P * ccti_increase *
  ccti_timer * 1.024 us)`` the timer wins. A flow whose fair share is below ``x_cc`` is held at ``x_cc``: its
  port stays oversubscribed and the credit model spreads what is left.
* **Table too short.** No source goes below the last entry's rate (``CCTI_Limit``); ``ccti_min`` caps every
  flow of a CC-enabled SL at its entry's rate, congested or not.

The throttled demands are solved again by :func:`~fabric_engine.backpressure.credit_rates` (a flow at its fair
share fills no buffer; flows CC cannot hold, or on SLs without CC, still block others), repeated while new
ports become roots (at most :data:`MAX_ROUNDS`). Not modelled: the sawtooth of rates around the balance (the
utilization it costs), credit starvation marking (``credit_mask``). With per-SL-and-port control
(``ca_port_control`` bit 0) a source port's flows of one SL share one CCTI: its flows no port marks are held at
the rate of its marked ones (:data:`SHARED`), the highest of them where several are marked.

Counters, per second: FECN marks made at each marking port, FECN packets received at each destination (on the
row's last link) and BECNs received by each source (on the row's first link).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from ..flows import max_min_fair
from .cc_params import CCTI_TIMER_UNIT_S, CongestionControl
from .hops import Hops
from .solve import CreditResult, credit_rates

__all__ = ["CCResult", "cc_rates", "MAX_ROUNDS", "NOT_THROTTLED", "FAIR", "MARKING", "TABLE", "SHARED"]

#: Solves with throttling at most (each may find new roots).
MAX_ROUNDS = 4
#: ``held_by`` codes: not throttled, held at its fair share, by sparse marking, by the table's last entry.
NOT_THROTTLED, FAIR, MARKING, TABLE = 0, 1, 2, 3
#: ``held_by``: not marked itself, held by its source port's CCTI (per-SL-and-port control).
SHARED = 4


@dataclass(frozen=True)
class CCResult:
    """Rates with congestion control: ``credit`` the credit solve of the throttled demands (rates, roots, held
    links of what congestion is left), per row ``[R]``: ``target`` (its demand after throttling), ``held_by``
    (codes above), ``ccti`` (the index it settles at, -1 not throttled), ``becn`` (BECNs a second its source
    receives); per link ``[E]``: ``fecn_marked`` (marks a second the port makes), ``fecn_rcv`` (FECN packets a
    second received at the destination on this last link), ``becn_rcv`` (BECNs a second the source on this
    first link receives); ``marking`` the ports that mark; ``rounds`` solves."""

    credit: CreditResult
    target: np.ndarray
    held_by: np.ndarray
    ccti: np.ndarray
    becn: np.ndarray
    fecn_marked: np.ndarray
    fecn_rcv: np.ndarray
    becn_rcv: np.ndarray
    marking: np.ndarray
    rounds: int

    @property
    def rate(self) -> np.ndarray:
        return self.credit.rate


def cc_rates(hops: Hops, capacity: np.ndarray, demand: np.ndarray, cc: CongestionControl,
             vl_weight: np.ndarray | None = None, *, sl: np.ndarray | None = None, unit_gbps: float = 1.0,
             packet_bytes: int = 4096, victim: np.ndarray | None = None, credit: CreditResult | None = None,
             start: CreditResult | None = None, carry: CCResult | None = None, fair: np.ndarray | None = None,
             cache: dict | None = None, progress: Callable[[int], None] | None = None, **solve) -> CCResult:
    """Steady-state rates of ``hops``' rows with congestion control ``cc`` (module docstring).

    ``capacity``/``demand``/``vl_weight`` as for :func:`credit_rates`, in units of ``unit_gbps`` Gbit/s;
    ``sl``: each row's service level (default 0); ``packet_bytes``: the packets' size (the MTU);
    ``victim`` per link: switch ports in ``cc.victim_mask`` (they mark when held back by credits too);
    ``credit``: the credit solve without CC of the same input, if already made; ``start``: an earlier result of
    the throttled solve on the same hops to start it from (each round then starts from the one before), else each
    round is solved cold. ``carry``: the last result on the same hops, for a live tick that carries the rounds on from
    tick to tick: the congestion roots of its throttled solve mark, with those of this input's solve without CC, and
    one round is made (default: rounds from none marking until no new row is throttled, at most ``MAX_ROUNDS``).
    ``fair``: the rows' max-min rates (every flow its fair share, where effective CC holds it), when the caller has
    them (the emulator's max-min of the same flows, QoS weights and priorities as it has them); else solved here
    (unweighted). ``cache``: a dict the caller keeps between calls on the same hops: what CC makes of each row for
    the capacities, SLs and settings (its line rate, its floors, its source port), and the max-min rates solved here,
    computed again only when those change. ``progress(round)``: called before each throttled solve (an analysis at
    fabric scale reports them). ``solve``: passed on to :func:`credit_rates` (``max_iter``, ``tol``, ...).
    """
    cap = np.asarray(capacity, dtype=np.float64)
    dem = np.asarray(demand, dtype=np.float64)
    row_sl = np.zeros(hops.rows, np.int64) if sl is None else np.asarray(sl, dtype=np.int64)
    if row_sl.shape != (hops.rows,) or (hops.rows and (row_sl.min() < 0 or row_sl.max() > 15)):
        raise SolverError(f"sl needs one service level 0..15 per row ({hops.rows})")
    if unit_gbps <= 0 or packet_bytes <= 0:
        raise SolverError("unit_gbps and packet_bytes must be > 0")
    cc.validate()
    base = credit if credit is not None else credit_rates(hops, cap, dem, vl_weight, **solve)
    rows = _row_control(hops, cap, row_sl, cc, unit_gbps, packet_bytes, cache)
    if not cc.marks or packet_bytes < cc.packet_size * 64 or not rows.on.any():
        return _unthrottled(hops, base, dem)

    steps = cc.rate_steps()
    capped = np.minimum(dem, rows.top)  # ccti_min caps every CC flow
    if fair is None:
        fair = _fair(hops, cap, capped, cache)
    elif np.shape(fair) != (hops.rows,):
        raise SolverError(f"fair needs one rate per row ({hops.rows})")
    else:
        fair = np.minimum(fair, capped)
    victim_ports = np.zeros(hops.n_links, bool) if victim is None else np.asarray(victim, dtype=bool)

    # Per SL and port (CA port control bit 0): a source port's flows of one SL share one CCTI, so its flows that no
    # port marks are held at the rate of its marked ones (the port's injection delay applies to all its packets).
    per_port = bool(cc.ca_port_control & 1)
    throttled = np.zeros(hops.rows, bool)
    result, rounds, marking = base, 0, np.zeros(hops.n_links, bool)
    if carry is not None:  # a port marks while its queue is full: the roots of the last throttled solve (and below,
        if carry.marking.shape != (hops.n_links,):  # those of this input's solve without CC)
            raise SolverError("carry: a CCResult of the same hops is needed")
        marking = rows.is_switch & (carry.credit.root | (carry.credit.held & victim_ports))
    for rounds in range(1, (1 if carry is not None else MAX_ROUNDS) + 1):  # noqa: B007 (reported)
        marking |= rows.is_switch & (result.root | (result.held & victim_ports))
        at_mark = np.flatnonzero(marking[hops.out])  # the hops at marking ports
        crosses = np.zeros(hops.rows, bool)
        crosses[hops.row[at_mark]] = True
        now = throttled | (crosses & rows.on)
        if rounds > 1 and (now == throttled).all():
            break
        throttled = now
        target = np.where(throttled, np.minimum(dem, np.maximum(fair, rows.x_floor)), capped)
        if per_port:
            target = np.where(rows.on & ~throttled, np.minimum(target, _port_rate(rows.port_group, throttled, target)),
                              target)
        if progress is not None:
            progress(rounds)
        result = credit_rates(hops, cap, target, vl_weight, start=start, **solve)
        start = None if start is None else result
    held_by = np.where(~throttled, np.where(target < capped, SHARED, NOT_THROTTLED),
                       np.where(fair >= rows.x_floor, FAIR, rows.held_by))
    # Figures of the throttled rows (the others' CCTI is -1, their BECNs none).
    thr = np.flatnonzero(throttled)
    line = rows.line[thr]
    frac = np.where(line > 0, target[thr] / np.where(line > 0, line, 1.0), 1.0)
    ccti = np.full(hops.rows, -1, np.int64)
    ccti[thr] = np.minimum(np.searchsorted(-steps, -frac, side="left"), len(steps) - 1)
    balance = rows.balance[thr]
    becn = np.zeros(hops.rows)
    becn[thr] = np.where(held_by[thr] == TABLE, np.maximum(balance, result.rate[thr] / line * rows.packets[thr]
                                                           / (cc.marking_rate + 1)), balance)
    # A packet is marked once, at the first marking port of its path.
    first_mark = np.full(hops.rows, -1, np.int64)
    idx = at_mark[throttled[hops.row[at_mark]]][::-1]  # last write wins: reversed, the first hop of each row stays
    first_mark[hops.row[idx]] = hops.out[idx]
    marked = first_mark >= 0
    fecn_marked = np.bincount(first_mark[marked], weights=becn[marked], minlength=hops.n_links)
    fecn_rcv = np.bincount(hops.last_link[thr], weights=becn[thr], minlength=hops.n_links)
    becn_rcv = np.bincount(hops.first_link[thr], weights=becn[thr], minlength=hops.n_links)
    return CCResult(credit=result, target=target, held_by=held_by.astype(np.int8), ccti=ccti,
                    becn=becn, fecn_marked=fecn_marked, fecn_rcv=fecn_rcv, becn_rcv=becn_rcv, marking=marking,
                    rounds=rounds)


@dataclass(frozen=True)
class _RowControl:
    """What congestion control makes of each row ``[R]`` for given capacities, SLs and settings: ``on`` (its SL is
    under CC), ``line`` (its source link's rate), ``top`` (``ccti_min``'s cap), ``x_floor`` (the lowest rate CC holds
    it at: sparse marking's ``x_cc`` or the table's last entry), ``held_by`` (which of the two, when its fair share
    is below), ``packets`` (a second at line rate), ``balance`` (BECNs a second that hold a CCTI still),
    ``port_group`` (its source port and SL); per link, ``is_switch`` (a switch's port: it may mark)."""

    on: np.ndarray
    line: np.ndarray
    top: np.ndarray
    x_floor: np.ndarray
    held_by: np.ndarray
    packets: np.ndarray
    balance: np.ndarray
    port_group: np.ndarray
    is_switch: np.ndarray


def _row_control(hops: Hops, cap: np.ndarray, row_sl: np.ndarray, cc: CongestionControl, unit_gbps: float,
                 packet_bytes: int, cache: dict | None) -> _RowControl:
    """The rows' :class:`_RowControl`, kept in ``cache`` with the inputs it was made for."""
    key = (cc, float(unit_gbps), int(packet_bytes))
    if cache is not None and cache.get("rows_hops") is hops and cache["rows_key"] == key \
            and np.array_equal(cache["rows_cap"], cap) and np.array_equal(cache["rows_sl"], row_sl):
        return cache["rows"]
    on = np.array([cc.sl_enabled(s) for s in range(16)])[row_sl] if hops.rows else np.zeros(0, bool)
    steps = cc.rate_steps()
    first_link = hops.first_link
    line = cap[first_link]  # each row's line rate: its source's link
    ccti_min = np.asarray(cc.ccti_min)[row_sl]
    top = np.where(on, steps[np.minimum(ccti_min, len(steps) - 1)] * line, np.inf)  # ccti_min caps every CC flow
    floor = steps[-1] * line
    packets = line * unit_gbps * 1e9 / (8.0 * packet_bytes)  # a second, at line rate
    inc = np.asarray(cc.ccti_increase, dtype=np.float64)[row_sl]
    timer_s = np.asarray(cc.ccti_timer, dtype=np.float64)[row_sl] * CCTI_TIMER_UNIT_S
    with np.errstate(divide="ignore", invalid="ignore"):
        balance = np.where(on, 1.0 / (inc * timer_s), 0.0)  # BECNs a second that hold a CCTI still
        x_cc = np.where(on, (cc.marking_rate + 1) * balance / packets * line, np.inf)
    is_switch = np.ones(hops.n_links, bool)
    is_switch[first_link] = False  # a host's own link: its port is a CA's, it does not mark
    port_group = (np.unique(first_link * 16 + row_sl, return_inverse=True)[1] if cc.ca_port_control & 1
                  else np.zeros(hops.rows, np.int64))
    rows = _RowControl(on=on, line=line, top=top, x_floor=np.maximum(x_cc, floor),
                       held_by=np.where(x_cc >= floor, MARKING, TABLE), packets=packets, balance=balance,
                       port_group=port_group, is_switch=is_switch)
    if cache is not None:
        cache.update(rows_hops=hops, rows_key=key, rows_cap=cap.copy(), rows_sl=row_sl.copy(), rows=rows)
    return rows


def _fair(hops: Hops, cap: np.ndarray, demand: np.ndarray, cache: dict | None) -> np.ndarray:
    """The rows' max-min rates (every flow its fair share: where effective CC holds them), kept in ``cache`` with
    the capacities and demands they were solved for."""
    if cache is not None and cache.get("fair_hops") is hops and np.array_equal(cache["fair_cap"], cap) \
            and np.array_equal(cache["fair_demand"], demand):
        return cache["fair"]
    fair = max_min_fair(hops.incidence, cap, demand)
    if cache is not None:
        cache.update(fair_hops=hops, fair_cap=cap.copy(), fair_demand=demand.copy(), fair=fair)
    return fair


def _port_rate(group: np.ndarray, throttled: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per row, the rate its (source port, SL) group's shared CCTI allows: the highest target of the group's
    throttled rows (inf where none is throttled)."""
    top = np.full(int(group.max(initial=-1)) + 1, -np.inf)
    np.maximum.at(top, group[throttled], target[throttled])
    return np.where(np.isfinite(top), top, np.inf)[group]


def _unthrottled(hops: Hops, base: CreditResult, dem: np.ndarray) -> CCResult:
    """CC off (or nothing it could act on): the credit solve as it is, no marks."""
    zero_links = np.zeros(hops.n_links)
    return CCResult(credit=base, target=dem.copy(), held_by=np.zeros(hops.rows, np.int8),
                    ccti=np.full(hops.rows, -1, np.int64), becn=np.zeros(hops.rows), fecn_marked=zero_links,
                    fecn_rcv=zero_links.copy(), becn_rcv=zero_links.copy(), marking=np.zeros(hops.n_links, bool),
                    rounds=0)
