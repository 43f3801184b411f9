"""Jobs and background load, and their expansion into flows.

A :class:`Job` runs iterations: a compute phase without network traffic, then a
collective that moves ``bytes_per_rank`` from every rank. Expansion into flows is
vectorised and returns parallel arrays (see :class:`Flows`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import FabricEngineError
from .topology import Fabric

__all__ = ["Job", "Flows", "PATTERNS", "ring_pairs", "background_pairs", "place_packed", "place_scattered"]

PATTERNS = ("ring_allreduce",)


@dataclass(frozen=True)
class Job:
    """A distributed training job.

    Attributes
    ----------
    name, tenant : str
    hosts : ndarray of int
        Node indices of the job's hosts, in rank order.
    pattern : str
        Communication pattern (one of ``PATTERNS``).
    buffer_bytes : float
        Size of the reduced buffer per iteration (e.g. the gradients).
    compute_s : float
        Duration of the compute phase of one iteration, seconds.
    sl : int
        Service level of its traffic.
    start_s : float
        Offset of the first iteration, seconds after the emulation starts.
    """

    name: str
    tenant: str
    hosts: np.ndarray
    pattern: str = "ring_allreduce"
    buffer_bytes: float = 8e9
    compute_s: float = 1.0
    sl: int = 0
    start_s: float = 0.0

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise FabricEngineError(f"job {self.name}: unknown pattern {self.pattern!r}; known: {', '.join(PATTERNS)}")
        if len(self.hosts) < 2:
            raise FabricEngineError(f"job {self.name}: needs at least two hosts")
        if not 0 <= self.sl <= 15:
            raise FabricEngineError(f"job {self.name}: SL {self.sl} outside 0..15")

    @property
    def bytes_per_rank(self) -> float:
        """Bytes each rank sends per iteration: ``2 (n - 1) / n`` of the buffer for ring all-reduce."""
        n = len(self.hosts)
        return 2.0 * (n - 1) / n * self.buffer_bytes


@dataclass(frozen=True)
class Flows:
    """Parallel arrays describing flows; all of shape ``(F,)``.

    ``src``, ``dst`` int64 node indices; ``demand_gbps`` float64 (``inf`` for greedy);
    ``weight`` float64; ``sl`` int8; ``job`` int32 (index into the job list, -1 for
    background); ``tenant`` int32 (index into the tenant list, -1 for none).
    """

    src: np.ndarray
    dst: np.ndarray
    demand_gbps: np.ndarray
    weight: np.ndarray = field(default=None)
    sl: np.ndarray = field(default=None)
    job: np.ndarray = field(default=None)
    tenant: np.ndarray = field(default=None)

    def __post_init__(self) -> None:
        n = len(self.src)
        defaults = {"weight": np.ones(n), "sl": np.zeros(n, np.int8), "job": np.full(n, -1, np.int32),
                    "tenant": np.full(n, -1, np.int32)}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return len(self.src)

    @staticmethod
    def concat(parts: list[Flows]) -> Flows:
        """All flows of ``parts`` in order."""
        if not parts:
            z = np.zeros(0)
            return Flows(z.astype(np.int64), z.astype(np.int64), z)
        return Flows(*(np.concatenate([getattr(p, k) for p in parts]) for k in
                       ("src", "dst", "demand_gbps", "weight", "sl", "job", "tenant")))


def ring_pairs(hosts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Source and destination of every ring step: rank ``i`` sends to rank ``i + 1 mod n``."""
    h = np.asarray(hosts, dtype=np.int64)
    return h, np.roll(h, -1)


def background_pairs(hosts: np.ndarray, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform random pairs: a ``fraction`` of hosts each send to a random other host."""
    h = np.asarray(hosts, dtype=np.int64)
    senders = rng.choice(h, size=int(round(fraction * len(h))), replace=False)
    offset = rng.integers(1, len(h), size=len(senders))
    pos = np.searchsorted(h, senders)
    return senders, h[(pos + offset) % len(h)]


def place_packed(fabric: Fabric, count: int, taken: np.ndarray) -> np.ndarray:
    """The first ``count`` free hosts in leaf order (fills whole leaves)."""
    free = fabric.hosts[~np.isin(fabric.hosts, taken)]
    order = np.argsort(fabric.host_leaf[free], kind="stable")
    if count > len(free):
        raise FabricEngineError(f"{count} hosts asked, {len(free)} free")
    return free[order][:count]


def place_scattered(fabric: Fabric, count: int, taken: np.ndarray) -> np.ndarray:
    """``count`` free hosts dealt round-robin over the leaves (one per leaf in turn)."""
    free = fabric.hosts[~np.isin(fabric.hosts, taken)]
    if count > len(free):
        raise FabricEngineError(f"{count} hosts asked, {len(free)} free")
    leaf = fabric.host_leaf[free]
    order = np.argsort(leaf, kind="stable")
    leaf_sorted = leaf[order]
    first = np.searchsorted(leaf_sorted, leaf_sorted, side="left")
    rank_in_leaf = np.arange(len(free)) - first
    deal = np.lexsort((leaf_sorted, rank_in_leaf))
    return free[order][deal][:count]
