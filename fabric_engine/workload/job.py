""":class:`Job`: a distributed training job and its expansion into flows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import FabricEngineError
from ..topology import Fabric
from .patterns import PATTERNS, PatternFlows
from .traffic import KIND_COLLECTIVE, Flows

if TYPE_CHECKING:
    from ..storage.checkpoint import Checkpoint

__all__ = ["Job", "run_window", "ALLREDUCE_PATTERNS"]

#: Patterns that are all-reduces (SHARP can replace them).
ALLREDUCE_PATTERNS = ("ring_allreduce", "tree_allreduce", "hierarchical_allreduce")


@dataclass(frozen=True)
class Job:
    """A distributed training job.

    It runs iterations: a compute phase of ``compute_s`` without network traffic,
    then a collective of its ``pattern`` on a buffer of ``buffer_bytes``. It runs
    from ``start_s`` until ``stop_s`` (emulation seconds; ``None``: forever); with
    ``repeat_s`` that window comes back every ``repeat_s`` seconds.

    Attributes
    ----------
    name, tenant : str
    hosts : ndarray of int
        Node indices of the job's hosts, in rank order.
    pattern : str
        Communication pattern (a key of :data:`~fabric_engine.workload.patterns.PATTERNS`).
    buffer_bytes : float
        Bytes the collective works on per iteration (gradients, activations, tokens).
    compute_s : float
        Duration of the compute phase of one iteration, seconds.
    sl : int
        Service level of its traffic.
    start_s, stop_s, repeat_s : float
        Run window (see above).
    params : dict
        Pattern options (``stages`` for ``pipeline``, ``seed`` for ``uniform_random``).
    sharp : bool
        The job asks for SHARP in-network aggregation (all-reduce patterns only; see
        :mod:`fabric_engine.sharp`); it keeps ``pattern`` as its fallback.
    read_gbps : float
        Data loading: Gb/s the job reads from storage while it runs, over all its hosts.
    checkpoint : fabric_engine.storage.Checkpoint, optional
        Synchronous checkpoints (size and period).

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> f = fat_tree(hosts=8, radix=4)
    >>> job = Job("j", "t", f.hosts[:4], buffer_bytes=4e9)
    >>> flows, inc = job.expand(f)
    >>> len(flows), float(flows.nbytes[0]), inc is None
    (4, 6000000000.0, True)
    """

    name: str
    tenant: str
    hosts: np.ndarray
    pattern: str = "ring_allreduce"
    buffer_bytes: float = 8e9
    compute_s: float = 1.0
    sl: int = 0
    start_s: float = 0.0
    stop_s: float | None = None
    repeat_s: float | None = None
    params: dict = field(default_factory=dict)
    sharp: bool = False
    read_gbps: float = 0.0
    checkpoint: Checkpoint | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "hosts", np.asarray(self.hosts, dtype=np.int64))
        where = f"job {self.name}"
        if self.pattern not in PATTERNS:
            raise FabricEngineError(f"{where}: unknown pattern {self.pattern!r}; known: {', '.join(PATTERNS)}")
        if len(self.hosts) < 2:
            raise FabricEngineError(f"{where}: needs at least two hosts")
        if len(np.unique(self.hosts)) != len(self.hosts):
            raise FabricEngineError(f"{where}: a host appears twice")
        if not 0 <= self.sl <= 15:
            raise FabricEngineError(f"{where}: SL {self.sl} outside 0..15")
        if self.buffer_bytes < 0 or self.compute_s < 0 or self.start_s < 0:
            raise FabricEngineError(f"{where}: buffer, compute_s and start_s must not be negative")
        if self.buffer_bytes == 0 and self.compute_s == 0:
            raise FabricEngineError(f"{where}: an iteration needs compute time or bytes")
        if self.stop_s is not None and self.stop_s <= self.start_s:
            raise FabricEngineError(f"{where}: stop_s {self.stop_s} is not after start_s {self.start_s}")
        if self.read_gbps < 0:
            raise FabricEngineError(f"{where}: read_gbps must not be negative")
        if self.repeat_s is not None and (self.stop_s is None or self.repeat_s < self.stop_s - self.start_s):
            raise FabricEngineError(f"{where}: repeat_s needs stop_s and must cover the run window")

    def expand(self, fabric: Fabric, index: int = -1, tenant_index: int = -1) -> tuple[Flows, object]:
        """This job's flows for one iteration and, if its pattern builds them, their incidence rows.

        Flows are greedy (``demand_gbps = inf``) unless the pattern caps them, and carry ``nbytes`` per iteration;
        ``job`` and ``tenant`` are set to ``index`` and ``tenant_index``.
        """
        pf: PatternFlows = PATTERNS[self.pattern](self, fabric)
        n = len(pf.src)
        demand = np.full(n, np.inf) if pf.demand_gbps is None else pf.demand_gbps
        flows = Flows(pf.src, pf.dst, demand, sl=self.sl, job=index, tenant=tenant_index,
                      nbytes=pf.nbytes, kind=KIND_COLLECTIVE if pf.kind is None else pf.kind)
        return flows, pf.incidence


def run_window(start: np.ndarray, stop: np.ndarray, repeat: np.ndarray, t: float) -> np.ndarray:
    """Which jobs run at emulation time ``t``; arrays of shape ``(J,)`` with ``nan`` for "none".

    >>> run_window(np.array([0., 5.]), np.array([np.nan, 10.]), np.array([np.nan, 20.]), 26.0).tolist()
    [True, True]
    """
    since = t - start
    length = stop - start
    phase = np.where(np.isnan(repeat), since, np.mod(since, np.where(np.isnan(repeat), 1.0, repeat)))
    return (since >= 0) & (np.isnan(length) | (phase < np.nan_to_num(length, nan=np.inf)))
