"""The emulator: advances jobs through time and solves the fabric once per tick.

Time model
----------
Every job iterates: a compute phase of ``compute_s`` seconds without traffic, then
its collective. Jobs run inside their run window (``start_s``, ``stop_s``,
``repeat_s``) and restart at a fresh iteration each time the window opens.

One tick solves the flows of every job that communicates at some point during the
tick, together with the background load (:func:`~fabric_engine.flows.solve_paced`):

1. greedy max-min fair rates give each job the duration ``T`` of its collective
   now (its slowest transfer: ``max(bytes / rate)``) and the links that hold it back;
2. the transfers of a collective move in lock step, so each runs at the pace
   ``bytes / T`` of its job, and the background flows share what is left.

Each job then follows its timeline through the tick (compute, collective of
duration ``T``, compute, ...) in closed form; link rates are averaged over the
tick, so the fabric breathes as jobs iterate. The same job alone on the idle
fabric (one block-diagonal solve over all jobs when they are loaded) gives the
reference for its offered load and its slowdown.

Congestion model
----------------
``congestion="maxmin"`` (the default) is the above: ideal congestion control. With
``congestion="credit"`` the rates come from the credit flow control model instead
(:mod:`fabric_engine.credit_tick`: switch arbiters share outputs among input ports,
head-of-line blocking spreads congestion upstream): the collectives' durations, the
background's rates and the limiting links are the model's, the frame carries its
congestion tree (``congestion_tree``), XmitWait counts the held ports' credit waits, and
each job's ``spreading`` compares its collective with max-min's in the same tick. With
``congestion_control=`` settings that are enabled, the credit model runs with InfiniBand
congestion control (:mod:`fabric_engine.backpressure.cc`: sources throttled by FECN/BECN):
``ecn`` is then the fraction of its packets each port marks, and the congestion tree names
the marking ports.

SHARP and storage
-----------------
With an aggregation manager (``sharp=``), a job that asks for SHARP gets a
reduction tree when its run window opens and runs ``sharp_allreduce`` on it, or
falls back to its own pattern (:mod:`fabric_engine.sharp.session`). With a storage
model (``storage=``), data-loading reads, checkpoint writes and background reads
join the same solve (:mod:`fabric_engine.storage.session`); the servers' backends
are extra columns of the incidence, after the ``2L`` directed links, stripped
before anything is published. A job writing a checkpoint neither computes nor
communicates; its writes form a lock-step group like a collective.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from .backpressure.cc_params import CongestionControl
from .congestion import ecn_fraction, rank_hotspots, xmit_wait_ticks
from .credit_tick import (
    CREDIT,
    CREDIT_BACKGROUND_DRAWS,
    CREDIT_TICK_HOP_ITERATIONS,
    MAXMIN,
    CreditSolve,
    CreditTick,
    check_congestion,
    credit_xmit_wait_carried,
    marked_fraction,
    storage_links,
)
from .errors import FabricEngineError
from .flows import group_duration, group_max, max_min_fair, max_min_fair_alone, slowest_bottlenecks, solve_paced
from .incidence import Block, Incidence
from .routing import Routing
from .sharp import AggregationManager
from .sharp.session import SharpSession
from .state import HOTSPOTS, FabricState, JobState
from .storage import StorageModel
from .storage.session import StorageSession
from .storage.traffic import ROLE_CHECKPOINT, StorageFlows
from .topology import KIND_HOST
from .workload import (
    KIND_BACKGROUND,
    KIND_STORAGE_WRITE,
    Flows,
    Job,
    JobFlows,
    background_pairs,
    compute_hosts,
    expand_jobs,
    run_window,
)

__all__ = ["Emulator", "Background"]

_COMPUTE, _COMM = 0, 1
_TIME_FIELDS = ("_phase", "_left", "_running", "_iterations", "_last_comm")
_STORAGE_KEY = "\x00storage"  # key of the storage state among saved per-job states
_SLOWEST_TOL = 1e-3  # flows within this fraction of a job's slowest count as limiting


@dataclass(frozen=True)
class Background:
    """Uniform random background load: ``fraction`` of hosts each send ``gbps`` to a random peer, redrawn per tick."""

    fraction: float = 0.25
    gbps: float = 20.0

    def __post_init__(self) -> None:
        if not 0 <= self.fraction <= 1 or self.gbps < 0:
            raise FabricEngineError("background: fraction must be in 0..1 and gbps >= 0")


def _bits(nbytes: np.ndarray) -> np.ndarray:
    """Gigabits of ``nbytes`` (rates are in Gb/s)."""
    return nbytes * 8e-9


class Emulator:
    """Time-stepped emulation of jobs on a routed fabric (see the module docstring).

    Parameters
    ----------
    routing : Routing
    jobs : list of Job
    background : Background, optional
    tick_s : float
    seed : int
        Seed of the background traffic draw (deterministic per tick: keyed by the seed and the tick's ``seq``).
    policy : fabric_engine.policy.Policy, optional
        Partitions and QoS: blocked flows get nothing, partition rate limits cap
        flows, VL arbitration gives weights and strict priority classes.
    paths : callable, optional
        Path model ``paths(src, dst, return_broken=True) -> (incidence, broken)``;
        default ``routing.paths`` (static LFT paths). An adaptive model returns
        fractional entries (see :func:`fabric_engine.flows.split_incidence`).
    xmit_wait_tick : int
        ``Tick`` code of PortSamplesControl for the PortXmitWait estimate.
    ecn_threshold : float
        Load, as a fraction of capacity, above which ports mark ECN.
    sharp : fabric_engine.sharp.AggregationManager, optional
        Allocates SHARP trees to jobs that ask for them (none: every request falls back).
    storage : fabric_engine.storage.StorageModel, optional
        Storage servers and backends (needed by jobs with ``read_gbps`` or ``checkpoint``).
    progress : callable, optional
        ``progress(fraction, message)`` during the first expansion of the jobs (see :meth:`_load`).
    health : fabric_engine.health.emulated.HealthModel, optional
        Link health with faults injected: each tick's readings are :attr:`health_readings`, and a flapping
        cable is down in the flow model while its fault says so (both directions' capacity scaled by the
        fraction of the tick it was up: the flows crossing it stall, nothing reroutes).
    congestion : str
        ``"maxmin"`` (ideal congestion control, the default) or ``"credit"`` (credit flow control without
        congestion control: :mod:`fabric_engine.credit_tick`; fabrics up to
        :data:`~fabric_engine.credit_tick.CREDIT_MAX_HOSTS` hosts, static routes, no storage model).
    congestion_control : fabric_engine.backpressure.cc_params.CongestionControl, optional
        InfiniBand congestion control (OpenSM's ``cc_*`` settings); used by the ``"credit"`` model when enabled (fabrics
        up to :data:`~fabric_engine.credit_tick.CREDIT_CC_MAX_HOSTS` hosts).

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> from fabric_engine.routing import route
    >>> f = fat_tree(hosts=8, radix=4)
    >>> emu = Emulator(route(f), [Job("j", "t", f.hosts[:4], buffer_bytes=1e9, compute_s=0.5)], tick_s=0.5)
    >>> emu.step(0.0).job("j").active, emu.step(0.5).job("j").active
    (False, True)
    """

    def __init__(self, routing: Routing, jobs: Sequence[Job], background: Background | None = None,
                 tick_s: float = 1.0, seed: int = 0, *, policy=None, paths=None, xmit_wait_tick: int = 0,
                 ecn_threshold: float = 0.9, sharp: AggregationManager | None = None,
                 storage: StorageModel | None = None, progress=None, health=None, congestion: str = MAXMIN,
                 congestion_control: CongestionControl | None = None) -> None:
        if tick_s <= 0:
            raise FabricEngineError(f"tick_s {tick_s}: must be positive")
        check_congestion(congestion, routing.fabric.num_hosts, adaptive=paths is not None)
        self.congestion = congestion
        self.routing = routing
        self.set_congestion_control(congestion_control)
        #: The credit model's result of the last tick (its live rows' rates, links held back, roots, iterations).
        self.credit_result = None
        self._pool: ThreadPoolExecutor | None = None
        self._ideal: Future | None = None  # the tick's max-min beside the credit model, until its durations are read
        self.fabric = routing.fabric
        self.background = background
        self.tick_s = float(tick_s)
        self.seed = seed
        self.policy = policy
        self.paths = paths if paths is not None else routing.paths
        self.xmit_wait_tick = int(xmit_wait_tick)
        self.ecn_threshold = float(ecn_threshold)
        self.ticks = 0  # ticks stepped (the sequence numbers are the caller's: see step)
        self.elapsed = 0.0
        f = self.fabric
        self.capacity = f.capacity_gbps
        self._width = np.concatenate([f.width, f.width]).astype(np.float64)
        self._into_host = f.kind[f.dl_dst] == KIND_HOST
        self._between_switches = (f.kind[f.dl_src] != KIND_HOST) & ~self._into_host
        self._hosts = compute_hosts(f)
        self.sharp = SharpSession(sharp)
        self.storage = StorageSession(storage) if storage is not None else None
        extra = storage.backend_gbps if storage is not None else np.zeros(0)
        #: Capacity of every column of the incidence: directed links, then storage backends.
        self._cap = np.concatenate([self.capacity, extra])
        self.health = health
        #: Every cable end's link health readings at the start of the last tick (``None`` without a health model).
        self.health_readings = None
        self.jobs: list[Job] = []
        self._load(list(jobs), {}, progress)

    # ------------------------------------------------------------ job set
    def _policy_inputs(self, flows: Flows) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, object]:
        """Demand after isolation and rate caps, weight, priority class, and the policy outcome."""
        dem = flows.demand_gbps.copy()
        if self.policy is None:
            return dem, None, flows.weight.copy(), None
        from .policy import enforce  # the policy module builds on this package's solver

        fp = enforce(self.policy, flows.src, flows.dst, flows.sl)
        dem = np.where(fp.allowed, np.minimum(dem, fp.rate_cap_gbps), 0.0)
        return dem, fp.priority.astype(np.int64), flows.weight * np.maximum(fp.weight, 1e-12), fp

    def _load(self, jobs: list[Job], keep: dict[str, tuple], progress=None) -> None:
        """Expand ``jobs``, solve each alone, and set their time state (``keep``: name -> saved state).

        ``progress(fraction, message)``, if given, hears of each step (a first load at scale takes seconds).
        """
        def report(fraction: float, message: str) -> None:
            if progress is not None:
                progress(fraction, message)

        names = [j.name for j in jobs]
        if len(set(names)) != len(names):
            raise FabricEngineError("job names must be unique")
        needs_storage = [j.name for j in jobs if j.read_gbps > 0 or j.checkpoint is not None]
        if needs_storage and self.storage is None:
            raise FabricEngineError(f"job {needs_storage[0]}: reads or checkpoints need a storage model")
        self.jobs = jobs
        self.tenants = sorted({j.tenant for j in jobs})
        self._credit = None
        report(0.0, f"expanding the flows of {len(jobs)} jobs")
        jf: JobFlows = expand_jobs([self.sharp.effective(j) for j in jobs], self.fabric, self.paths, self.tenants)
        self._jf = jf
        fl = jf.flows
        e_all = len(self._cap)
        jinc = sp.csr_matrix((jf.incidence.data, jf.incidence.indices, jf.incidence.indptr), shape=(len(fl), e_all))
        dem, prio, weight, fp = self._policy_inputs(fl)
        dem[jf.broken] = 0.0
        self._fp = fp
        self._flow_job = fl.job.astype(np.int64)
        self._bits = _bits(fl.nbytes)
        n = len(jobs)
        n_f = len(fl)
        # Every row that can run in a tick, fixed until the job set changes: the job flows, then the storage flows.
        # A tick switches rows off with a zero demand and adds its background rows below them.
        s_inc = sp.csr_matrix((0, e_all))
        s_owner, s_group, s_bits = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        s_dem, s_prio, s_weight = np.zeros(0), None if prio is None else np.zeros(0, np.int64), np.zeros(0)
        if self.storage is not None:
            sf = self.storage.load(jobs, self.tenants, self.seed, keep.get(_STORAGE_KEY, {}))
            s_dem, s_prio, s_weight, s_fp = self._policy_inputs(sf.flows)
            is_ck = sf.role == ROLE_CHECKPOINT
            s_bits = _bits(np.where(is_ck, sf.flows.nbytes, 0.0))
            s_owner = sf.flows.job.astype(np.int64)
            s_group = np.where(is_ck, n + s_owner, -1)
            s_inc = sf.incidence
        self._n_job_flows = n_f
        self._buf = None
        report(0.4, f"indexing {n_f:,} flows")
        self._fixed = Incidence(sp.vstack([jinc, s_inc], format="csr") if s_inc.shape[0] else jinc)
        self._dem = np.concatenate([dem, s_dem])
        self._weight = np.concatenate([weight, s_weight])
        self._prio = None if prio is None else np.concatenate([prio, s_prio])
        self._owner = np.concatenate([self._flow_job, s_owner])
        self._group = np.concatenate([self._flow_job, s_group])
        self._gbits = np.concatenate([self._bits, s_bits])
        self._compute = np.array([j.compute_s for j in jobs], dtype=np.float64)
        self._start = np.array([j.start_s for j in jobs], dtype=np.float64)
        self._stop = np.array([np.nan if j.stop_s is None else j.stop_s for j in jobs], dtype=np.float64)
        self._repeat = np.array([np.nan if j.repeat_s is None else j.repeat_s for j in jobs], dtype=np.float64)
        # Alone on the idle fabric: one solve, every job (and every job's checkpoint) on its own copy of the links.
        report(0.6, f"solving each of {n} jobs alone on the idle fabric")
        rows = np.flatnonzero(self._group >= 0)
        owner, bits = self._group[rows], self._gbits[rows]
        alone = max_min_fair_alone(self._fixed, self._cap, self._dem, self._weight, self._group)[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            t_alone = np.where(bits > 0, bits / alone, 0.0)
        t_all = group_max(np.where(np.isnan(t_alone), np.inf, t_alone), owner, 2 * n)
        self._alone_s, self._ck_alone_s = t_all[:n], t_all[n:]
        with np.errstate(divide="ignore", invalid="ignore"):
            pace = np.where(t_all[owner] > 0, bits / t_all[owner], 0.0)
        # Offered load of every fixed row while it runs: its pace alone (grouped rows) or its demand.
        self._offered = np.where(self._group >= 0, 0.0, self._dem)
        self._offered[rows] = np.where(np.isfinite(pace), pace, 0.0)
        self._offered_alone = self._offered[:n_f]
        self._job_demand = np.bincount(self._flow_job, weights=self._offered_alone, minlength=n)
        # Every job's gigabits per collective and offered load on every column, summed over its flows (jobs x
        # columns, a few hundred thousand entries at 32,768 GPUs): a tick's link loads and the capacity the
        # collectives leave to the other flows are products with these, not passes over ten million entries.
        report(0.8, f"summing the load of each of {n} jobs per link")
        self._job_gbits = self._fixed.fixed.group_sums(self._flow_job, self._bits, n).T.tocsr()
        self._job_offered = self._fixed.fixed.group_sums(self._flow_job, self._offered_alone, n).T.tocsr()
        self._storage_rows = Block.of(s_inc, e_all) if s_inc.shape[0] else None  # fixed rows n_f.., on their own
        self._bg_pool = []
        if self.congestion == CREDIT:  # the credit model's paths, in order, and its hops, once per flow set
            report(0.9, f"ordering the paths of {n_f:,} flows for the credit model")
            self._load_credit(jf, fp, (sf, s_fp) if self.storage is not None else None)
        # Rows of job k: _job_rows[k]:_job_rows[k + 1] (expand_jobs stacks the flows job after job).
        ordered = bool(n_f == 0 or (np.diff(self._flow_job) >= 0).all())
        self._job_rows = np.searchsorted(self._flow_job, np.arange(n + 1)) if ordered else None
        self.sharp.prepare(jobs, jf, self._alone_s, self.fabric, self.paths, self.tenants)
        # Time state: phase, what is left of it (compute seconds, or fraction of the collective), counters.
        self._phase = np.zeros(n, dtype=np.int8)
        self._left = self._compute.copy()
        self._running = np.zeros(n, dtype=bool)
        self._iterations = np.zeros(n, dtype=np.int64)
        self._last_comm = self._alone_s.copy()
        for k, name in enumerate(names):
            if name in keep:
                for field, value in zip(_TIME_FIELDS, keep[name], strict=True):
                    getattr(self, field)[k] = value

    def _load_credit(self, jf: JobFlows, fp, storage: tuple[StorageFlows, object] | None) -> None:
        """The credit model's flows: the fixed rows (a storage flow one path per server port, its backend a link:
        :func:`~fabric_engine.credit_tick.storage_links`), then a pool of :data:`CREDIT_BACKGROUND_DRAWS`
        background draws that the ticks take in turn (a tick's rows must be in the hop table, built once per flow
        set). ``fp``: the job flows' policy outcome; ``storage``: the storage flows and theirs."""
        sf, s_fp = storage if storage is not None else (None, None)
        if self.background is not None:
            self._bg_pool = [self._draw_background(seq) for seq in range(1, CREDIT_BACKGROUND_DRAWS + 1)]
        n_f, n_fixed = len(jf.broken), len(self._dem)
        f = self.fabric
        src, dst = f.dl_src, f.dl_dst
        parts, routed, owner = [self._fixed.fixed.csr()[:n_f]], [~jf.broken], [np.arange(n_f)]
        if sf is not None and len(sf):  # its backends are links too, after the fabric's
            model = self.storage.model
            src, dst = storage_links(src, dst, f.num_nodes, model.servers)
            write = sf.flows.kind == KIND_STORAGE_WRITE
            server = np.searchsorted(model.servers, np.where(write, sf.flows.dst, sf.flows.src))
            paths, path_flow, broken = model.transfer_paths(np.where(write, sf.flows.src, sf.flows.dst), server, write)
            parts.append(paths)
            routed.append(~broken)
            owner.append(n_f + path_flow)
        at = n_fixed
        for flows, inc in self._bg_pool:
            parts.append(inc)
            routed.append(flows.demand_gbps > 0)
            owner.append(at + np.arange(len(flows)))
            at += len(flows)
        self._credit = CreditTick(src, dst, sp.vstack(parts, format="csr"), np.concatenate(routed),
                                  owner=np.concatenate(owner), n_flows=at, budget=CREDIT_TICK_HOP_ITERATIONS)
        # Each flow's lane and SL: the policy's outcome for the job flows, the storage flows and each draw.
        outcomes = [(fp, n_f)]
        if sf is not None and len(sf):
            outcomes.append((s_fp, len(sf)))
        outcomes += [(self._policy_inputs(flows)[3], len(flows)) for flows, _ in self._bg_pool]
        self._vl, self._sl = None, None
        if fp is not None:
            lanes = [self._lanes(p, size) for p, size in outcomes]
            self._vl = None if lanes[0] is None else np.concatenate(lanes)
            self._sl = np.concatenate([p.sl.astype(np.int64)[:size] for p, size in outcomes])
        self._credit.hops(self._vl, None if self._vl is None else len(self.policy.qos.weight))  # now, not at a tick

    def _lanes(self, fp, rows: int) -> np.ndarray | None:
        """Every row's virtual lane for the credit model: the QoS policy's SL-to-VL map, else None (one lane)."""
        if fp is None or self.policy is None or self.policy.qos is None:
            return None
        return np.minimum(fp.vl.astype(np.int64), 15)[:rows]

    def _saved(self) -> dict:
        out = {j.name: tuple(getattr(self, f)[k] for f in _TIME_FIELDS) for k, j in enumerate(self.jobs)}
        if self.storage is not None:
            out[_STORAGE_KEY] = self.storage.saved()
        return out

    def start_job(self, job: Job) -> None:
        """Add ``job`` (it starts when its run window opens, counted from the emulation's start)."""
        self._load(self.jobs + [job], self._saved())

    def stop_job(self, name: str) -> None:
        """Remove the job ``name``."""
        if name not in {j.name for j in self.jobs}:
            raise FabricEngineError(f"no job {name!r}")
        self._load([j for j in self.jobs if j.name != name], self._saved())

    def set_congestion_control(self, cc: CongestionControl | None) -> None:
        """Use InfiniBand congestion control ``cc`` in the credit model from the next tick (None or disabled: off)."""
        if cc is not None:
            cc.validate("congestion_control")
            check_congestion(self.congestion, self.routing.fabric.num_hosts, controlled=cc.enabled)
        self.congestion_control = cc

    def set_policy(self, policy) -> None:
        """Apply a new partition and QoS policy (``fabric_engine.policy.Policy`` or None) from the next tick."""
        self.policy = policy
        self._load(self.jobs, self._saved())

    # ------------------------------------------------------------------ tick
    def _background(self, seq: int) -> tuple[Flows, sp.csr_matrix]:
        """The tick ``seq``'s background flows and their rows; with the credit model, its draw of the pool."""
        if self._bg_pool:
            self._bg_slot = (seq - 1) % len(self._bg_pool)
            return self._bg_pool[self._bg_slot]
        return self._draw_background(seq)

    def _draw_background(self, seq: int) -> tuple[Flows, sp.csr_matrix]:
        rng = np.random.default_rng((self.seed, seq))
        src, dst = background_pairs(self._hosts, self.background.fraction, rng)
        flows = Flows(src, dst, np.full(len(src), self.background.gbps), kind=KIND_BACKGROUND)
        inc, broken = self.paths(src, dst, return_broken=True)
        flows.demand_gbps[broken] = 0.0
        inc = sp.csr_matrix(inc, dtype=np.float64)
        return flows, sp.csr_matrix((inc.data, inc.indices, inc.indptr), shape=(len(flows), len(self._cap)))

    def _tick_buffers(self, n_extra: int) -> dict[str, np.ndarray]:
        """Arrays over the fixed rows and ``n_extra`` background rows, made once per job set and size.

        The fixed rows' constant parts are filled here (every job communicating: ``reach``); a tick writes
        the rest in place. The solver's outputs (``rate``, ``bott``) are kept too: at 32,768 GPUs a fresh
        array of the rows' length costs its page faults (16 MB zeroed by the kernel) every tick.
        """
        n = len(self._dem)
        if self._buf is None or len(self._buf["dem"]) != n + n_extra:
            def grown(fixed: np.ndarray, tail) -> np.ndarray:
                return np.concatenate([fixed, np.full(n_extra, tail, dtype=fixed.dtype)])

            rows = n + n_extra
            self._buf = {"dem": grown(self._dem, 0.0), "group": grown(self._group, -1),
                         "weight": grown(self._weight, 1.0), "gbits": grown(self._gbits, 0.0),
                         "offered": grown(self._offered, 0.0), "owner": grown(self._owner, -1),
                         "reach": np.ones(len(self.jobs), dtype=bool), "rate": np.empty(rows),
                         "bott": np.empty(rows, dtype=np.int64)}
            if self._prio is not None:
                self._buf["prio"] = grown(self._prio, 0)
            if self._credit is not None:  # max-min's own, written on its thread while the tick goes on
                self._buf.update(ideal_rate=np.empty(rows), ideal_bott=np.empty(rows, dtype=np.int64))
        return self._buf

    def _switch_rows(self, buf: dict[str, np.ndarray], reach: np.ndarray) -> None:
        """Demand and group of the job rows as ``reach`` says: rows of a job that does not communicate get no demand
        and no group. Only the rows of the jobs whose state changed since the buffers were last written are touched.
        """
        held = buf["reach"]
        changed = np.flatnonzero(held != reach)
        if changed.size == 0:
            return
        dem, group, n_f = buf["dem"], buf["group"], self._n_job_flows
        bounds = self._job_rows
        if bounds is None or changed.size > 64:  # many jobs changed: one pass over the rows
            on = reach[self._flow_job]
            dem[:n_f] = np.where(on, self._dem[:n_f], 0.0)
            group[:n_f] = np.where(on, self._group[:n_f], -1)
        else:
            for k in changed:  # a slice per job whose state changed (a running flow without a route keeps its group)
                lo, hi = bounds[k], bounds[k + 1]
                dem[lo:hi] = self._dem[lo:hi] if reach[k] else 0.0
                group[lo:hi] = self._group[lo:hi] if reach[k] else -1
        held[:] = reach

    def _paced_load(self, reach: np.ndarray, rate: np.ndarray, group: np.ndarray):
        """``paced_load(duration, cols)`` for :func:`~fabric_engine.flows.solve_paced`: the load of the paced rows.

        A job's flows run at ``gbits / T`` of its collective, so their load is the job's gigabits per link over
        ``T``; the storage rows that run (few) are summed from their own rows (``rate`` holds them paced by then).
        """
        n, n_f = len(self.jobs), self._n_job_flows

        def paced_load(duration: np.ndarray, cols: np.ndarray) -> np.ndarray:
            t = duration[:n]
            with np.errstate(divide="ignore"):
                inv = np.where(reach & np.isfinite(t) & (t > 0), 1.0 / t, 0.0)
            out = (self._job_gbits @ inv)[cols]
            if self._storage_rows is not None:
                self._storage_rows.rmatvec_columns(rate, cols, out, offset=n_f, group=group)
            return out

        return paced_load

    def step(self, now: float | None = None, seq: int | None = None) -> FabricState:
        """Advance one tick and return the fabric's state for it, numbered ``seq``.

        ``seq`` is whoever numbers the frames' (the web app's runner, whose numbers continue across
        restarts and leaders); it also keys the background traffic's draw, so that every process
        draws the same tick alike. None: this tick's count (1 for the first), for standalone use.
        """
        if self._ideal is not None:  # a tick that failed part way: its max-min still reads this tick's buffers
            wait_for([self._ideal])
        self.ticks += 1
        seq = self.ticks if seq is None else int(seq)
        now = time.time() if now is None else now
        tick, t0 = self.tick_s, self.elapsed
        n_jobs = len(self.jobs)
        running = run_window(self._start, self._stop, self._repeat, t0)
        fresh = running & ~self._running
        if self.sharp.transitions(self.jobs, fresh, ~running & self._running, t0):
            self._load(self.jobs, self._saved())
        self._phase[fresh], self._left[fresh] = _COMPUTE, self._compute[fresh]
        self._running = running
        st = self.storage
        writing = np.zeros(n_jobs, dtype=bool)
        if st is not None:
            st.restart(fresh, self._iterations)
            writing = st.begin(running, self._iterations)
        reach = running & ~writing & ((self._phase == _COMM) | (self._left < tick))
        inc = self._fixed
        bg, bg_inc, bg_fp = None, None, None
        if self.background is not None:
            bg, bg_inc = self._background(seq)
            bdem, bprio, bweight, bg_fp = self._policy_inputs(bg)
            inc = inc.stack(bg_inc)
        # Arrays over every row of the tick, kept and written in place (at 32,768 GPUs each is 2 million long).
        n_fixed, n_f = len(self._dem), self._n_job_flows
        buf = self._tick_buffers(0 if bg is None else len(bg))
        dem, group, weight, prio = buf["dem"], buf["group"], buf["weight"], buf.get("prio")
        gbits, offered, owner = buf["gbits"], buf["offered"], buf["owner"]
        # The rows that run this tick: the flows of the jobs that communicate, the storage flows that run.
        self._switch_rows(buf, reach)
        s_rows = np.zeros(0, np.int64)
        s_on = np.zeros(n_fixed - n_f, dtype=bool)
        if st is not None:
            s_rows = st.rows(running, writing)
            s_on[s_rows] = True
            dem[n_f:n_fixed] = np.where(s_on, self._dem[n_f:], 0.0)
            group[n_f:n_fixed] = np.where(s_on, self._group[n_f:], -1)
        if bg is not None:
            dem[n_fixed:], weight[n_fixed:], offered[n_fixed:] = bdem, bweight, bdem
            if prio is not None:
                prio[n_fixed:] = bprio
        cap = self._cap
        if self.health is not None:  # link health at the tick's start; a flapping cable down in the flows
            self.health_readings = self.health.readings(t0, now)
            cap = self._capacity_now(t0)
        def max_min() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            # Two passes: greedy (collective durations, limiting links), then flows paced to their collective.
            return solve_paced(inc, cap, dem, weight, gbits, group, 2 * n_jobs, priority=prio,
                               out=(buf["rate"], buf["bott"]), paced_load=self._paced_load(reach, buf["rate"], group))

        def ideal() -> tuple[np.ndarray, np.ndarray]:
            # Max-min's greedy pass alone: the rates with ideal congestion control, the collectives' durations.
            fair, _ = max_min_fair(inc, cap, dem, weight, priority=prio, return_bottleneck=True,
                                   out=(buf["ideal_rate"], buf["ideal_bott"]))
            return fair, group_duration(gbits, fair, group, 2 * n_jobs)

        credit = beside = None
        if self._credit is None:
            rate, bott, dur = max_min()
            comm_ideal = dur[:n_jobs].copy()
        else:  # credit flow control: the model's rates, durations and limiting links; max-min beside it, for spreading
            # The two share no array: max-min runs on another core until the jobs' states need its durations.
            beside = self._ideal = self._beside().submit(ideal)
            credit = self._credit_solve(bg, cap, dem, gbits, group, 2 * n_jobs, lambda: beside.result()[0])
            self.credit_result = credit.result
            rate, bott, dur = buf["rate"], buf["bott"], credit.duration
            rate[:], bott[:] = credit.rate, credit.bottleneck
        comm_now, ck_now = dur[:n_jobs], dur[n_jobs:]
        avail = np.full(n_jobs, tick)
        if st is not None:
            spent = st.advance(writing, ck_now, tick, self._iterations)
            # After a checkpoint the job computes for the rest of the tick (its collective was not solved).
            avail = np.where(writing, np.minimum(tick - spent, self._left), tick)
            ck_frac = spent / tick
        comm_frac = self._advance(running, reach, comm_now, avail)
        self.sharp.account(reach, comm_frac, comm_now, tick)
        # Per-link load, averaged over the tick: a job's flows at gbits / T for the part of the tick it
        # communicated (its gigabits per link times a coefficient), storage and background rows from their rows.
        job_on = np.where(reach, comm_frac, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_s = np.where(reach & np.isfinite(comm_now) & (comm_now > 0), job_on / comm_now, 0.0)
        col_rate = self._job_gbits @ per_s
        col_offered = self._job_offered @ job_on
        s_frac = np.zeros(n_fixed - n_f)
        if st is not None:
            is_ck = self._group[n_f:] >= n_jobs
            s_frac = np.where(s_on, np.where(is_ck, ck_frac[np.maximum(owner[n_f:n_fixed], 0)], 1.0), 0.0)
            s_loads = np.stack([rate[n_f:n_fixed] * s_frac, offered[n_f:n_fixed] * s_frac])
            add_rate, add_offered = self._storage_rows.rmatvec(s_loads)
            col_rate += add_rate
            col_offered += add_offered
        if bg is not None:
            add_rate, add_offered = inc.extra.rmatvec(np.stack([rate[n_fixed:], offered[n_fixed:]]))
            col_rate += add_rate
            col_offered += add_offered

        def carried(rows: np.ndarray) -> np.ndarray:
            """Tick-averaged rate of the rows ``rows`` (those that cross the hotspots)."""
            frac = np.ones(len(rows))
            job_row, s_row = rows < n_f, (rows >= n_f) & (rows < n_fixed)
            frac[job_row] = job_on[self._flow_job[rows[job_row]]]
            frac[s_row] = s_frac[rows[s_row] - n_f]
            return rate[rows] * frac

        e = len(self.capacity)
        link_rate = col_rate[:e]
        link_offered = np.maximum(col_offered[:e], link_rate)
        tree = None
        if credit is None:
            wait = xmit_wait_ticks(link_offered, link_rate, self.capacity, self._width, tick, self.xmit_wait_tick)
        else:  # ports wait for credits on the held branches of the congestion trees
            res = credit.result  # over the links, then the storage backends (not in the frame's links)
            carried_wait = credit_xmit_wait_carried(link_offered, res.link_cap[:e], res.held[:e])
            wait = xmit_wait_ticks(link_offered, carried_wait, self.capacity, self._width, tick, self.xmit_wait_tick)
            tree = {"model": CREDIT, "roots": np.flatnonzero(res.root[:e]).tolist(),
                    "held": np.flatnonzero(res.held[:e]).tolist(), "converged": res.converged,
                    "iterations": res.iterations, "averaged": res.averaged}
            if credit.cc is not None:
                tree["marking"] = np.flatnonzero(credit.cc.marking[:e]).tolist()
        if credit is not None and credit.cc is not None:  # the ports' FECN marks, of the packets they send
            ecn = marked_fraction(credit.cc.fecn_marked[:e], res.link_rate[:e])
        else:
            ecn = ecn_fraction(link_offered, self.capacity, self.ecn_threshold)
        util = link_rate / np.maximum(self.capacity, 1e-12)
        if beside is not None:  # the collectives with ideal congestion control (max-min)
            comm_ideal, self._ideal = beside.result()[1][:n_jobs], None
        jobs = self._job_states(running, reach, comm_now, comm_frac, rate, bott, util, writing,
                                comm_ideal if credit is not None else None)
        names = [j.name for j in self.jobs]
        hotspots = rank_hotspots(link_offered, link_rate, self.capacity, wait, ecn, inc, carried, owner, names,
                                 HOTSPOTS)
        storage = None
        if st is not None:
            s_fixed = n_f + s_rows
            storage = st.frame(s_rows, carried(s_fixed), bott[s_fixed], col_rate[e:], link_rate, self.capacity,
                               ck_now)
        self.elapsed += tick
        return FabricState(seq, now, tick, link_rate.astype(np.float32), util.astype(np.float32),
                           throughput_gbps=float(link_rate[self._into_host].sum()),
                           switch_gbps=float(link_rate[self._between_switches].sum()), jobs=jobs,
                           alerts=self._alerts(running) + self.sharp.alerts(running),
                           offered_gbps=link_offered.astype(np.float32), xmit_wait=wait.astype(np.float32),
                           ecn=ecn.astype(np.float32), hotspots=hotspots, capacity_gbps=self.capacity,
                           sharp=self.sharp.frame(self.fabric, running), storage=storage, congestion_tree=tree)

    def _beside(self) -> ThreadPoolExecutor:
        """The thread the credit model's tick solves max-min in (made at its first use)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="max-min")
        return self._pool

    def _credit_solve(self, bg, cap, dem, gbits, group, n_groups, fair) -> CreditSolve:
        """The credit model's solve of the tick's rows (:meth:`fabric_engine.credit_tick.CreditTick.solve`): the
        fixed rows and the tick's draw of the background pool; the other draws' rows do not run. ``fair()``: the
        rows' max-min rates (ideal congestion control), for congestion control's fair shares."""
        n_fixed = len(self._dem)
        sizes = [len(flows) for flows, _ in self._bg_pool]
        total = n_fixed + sum(sizes)
        at = n_fixed + sum(sizes[:self._bg_slot]) if bg is not None else total

        end = at + len(dem) - n_fixed

        def spread(values: np.ndarray, fill) -> np.ndarray:
            out = np.empty(total, dtype=values.dtype)  # each part written once
            out[:n_fixed], out[n_fixed:at], out[at:end], out[end:] = values[:n_fixed], fill, values[n_fixed:], fill
            return out

        def tick_rows(values: np.ndarray) -> np.ndarray:
            return values[:n_fixed] if at == end else np.concatenate([values[:n_fixed], values[at:end]])

        weight = None if self._vl is None else np.maximum(self.policy.qos.weight, 1e-3)  # an unweighted lane drains
        solved = self._credit.solve(cap, spread(dem, 0.0), spread(gbits, 0.0), spread(group, -1), n_groups,
                                    vl=self._vl, vl_weight=weight, cc=self.congestion_control, sl=self._sl,
                                    fair=lambda: spread(fair(), 0.0))
        return replace(solved, rate=tick_rows(solved.rate), bottleneck=tick_rows(solved.bottleneck))

    def _capacity_now(self, t0: float) -> np.ndarray:
        """The columns' capacity for the tick from ``t0``: flapping cables scaled by the fraction of it they are up."""
        cables, up = self.health.down(t0, self.tick_s)
        if not cables.size:
            return self._cap
        cap = self._cap.copy()
        e = len(self.capacity) // 2
        cap[cables] *= up
        cap[cables + e] *= up
        return cap

    def _advance(self, running: np.ndarray, reach: np.ndarray, comm_now: np.ndarray,
                 avail: np.ndarray | None = None) -> np.ndarray:
        """Move every running job along its timeline by one tick; returns the fraction of the tick it communicated.

        ``avail``: seconds of the tick each job spends on its timeline (default the whole tick).

        Closed form over whole iterations: with ``C`` compute and ``T`` collective
        seconds, the communication time up to position ``x`` in the job's cycle is
        ``floor(x / P) T + clip(x mod P - C, 0, T)`` with ``P = C + T``.
        """
        tick = self.tick_s
        c = self._compute
        t = np.where(reach, comm_now, self._alone_s)
        stalled = ~np.isfinite(t)
        tf = np.where(stalled, 0.0, t)
        p = np.maximum(c + tf, 1e-12)
        pos = np.where(self._phase == _COMPUTE, c - self._left, c + (1 - self._left) * tf)
        end = pos + (tick if avail is None else avail)

        def comm_upto(x):
            return np.floor(x / p) * tf + np.clip(np.mod(x, p) - c, 0.0, tf)

        comm = np.where(stalled, np.maximum(end - np.maximum(pos, c), 0.0), comm_upto(end) - comm_upto(pos))
        cycles = np.where(stalled, 0, np.floor(end / p)).astype(np.int64)
        rest = np.where(stalled, end, np.mod(end, p))
        in_compute = rest < c
        with np.errstate(divide="ignore", invalid="ignore"):
            comm_left = np.where(tf > 0, 1 - (rest - c) / tf, 0.0)
        new_phase = np.where(in_compute, _COMPUTE, _COMM).astype(np.int8)
        new_left = np.where(in_compute, c - rest, np.where(stalled, 1.0, comm_left))
        upd = running
        self._phase[upd], self._left[upd] = new_phase[upd], new_left[upd]
        self._iterations[upd] += cycles[upd]
        self._last_comm[reach] = comm_now[reach]
        return np.where(running, np.clip(comm / tick, 0.0, 1.0), 0.0)

    def _job_states(self, running, reach, comm_now, comm_frac, rate, bott, util, writing,
                    comm_ideal: np.ndarray | None = None) -> list[JobState]:
        """Every job's state; ``comm_ideal``: its collective's duration under max-min in the same tick (the
        credit model's run: its ``spreading`` is ``comm_s / comm_ideal``)."""
        e = len(self.capacity)
        n_jobs = len(self.jobs)
        n = self._n_job_flows
        owner = self._flow_job
        if self._job_rows is not None and n:  # flows stacked job after job: one pass, no weights array
            achieved = np.add.reduceat(rate[:n], np.minimum(self._job_rows[:-1], n - 1))
            achieved[self._job_rows[:-1] == self._job_rows[1:]] = 0.0  # jobs without flows
        else:
            achieved = np.bincount(owner, weights=rate[:n], minlength=n_jobs)
        demand = self._job_demand
        # Limiting links: bottlenecks (pass 1) of each job's slowest flows, most utilized first.
        t_min = np.where(reach, comm_now * (1 - _SLOWEST_TOL), np.nan)  # NaN: jobs that did not communicate
        k_job, k_link = slowest_bottlenecks(self._bits, rate[:n], owner, t_min, bott[:n], e)
        order = np.lexsort((-np.round(util[k_link], 9), k_job))  # equal utilizations: by link index
        k_job, k_link = k_job[order], k_link[order]
        bounds = np.searchsorted(k_job, np.arange(n_jobs + 1))
        active = running & (comm_frac > 0)
        out = []
        for k, job in enumerate(self.jobs):  # one entry per job
            phase = ("comm" if self._phase[k] == _COMM else "compute") if running[k] else (
                "waiting" if self.elapsed < job.start_s else "stopped")
            if writing[k] and self.storage is not None and self.storage.ck["left"][k] > 0:
                phase = "checkpoint"
            now_s = comm_now[k] if reach[k] else self._last_comm[k]
            alone = self._alone_s[k]
            slowdown = (np.inf if not np.isfinite(now_s) else now_s / alone) if alone > 0 else 1.0
            spreading = None
            if comm_ideal is not None and reach[k] and np.isfinite(comm_ideal[k]) and comm_ideal[k] > 0:
                spreading = float(now_s / comm_ideal[k])
            out.append(JobState(
                job.name, job.tenant, job.pattern, len(job.hosts), bool(active[k]),
                float(demand[k]) if active[k] else 0.0, float(achieved[k]) if active[k] else 0.0,
                phase=phase, comm_s=float(now_s), comm_alone_s=float(alone), slowdown=float(slowdown),
                iterations=int(self._iterations[k]), sharp=bool(self.sharp.on[k]),
                limiting_links=tuple(int(x) for x in k_link[bounds[k]:bounds[k + 1]][:3]) if reach[k] else (),
                spreading=spreading))
        return out

    def _alerts(self, running: np.ndarray) -> list[dict]:
        jf = self._jf
        alerts = []
        broken = np.bincount(self._flow_job[jf.broken], minlength=len(self.jobs))
        for k in np.flatnonzero(running & (broken > 0)):
            alerts.append({"kind": "no_route", "job": self.jobs[k].name, "flows": int(broken[k])})
        if self._fp is not None:
            from .policy import violations

            mask = running[self._flow_job] if len(self._flow_job) else np.zeros(0, bool)
            job = np.where(mask, self._flow_job, -1)
            alerts.extend(violations(self._fp, job, [j.name for j in self.jobs], self.policy))
        return alerts
