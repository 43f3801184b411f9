""":class:`Flows`: the parallel arrays every traffic source expands into."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

__all__ = ["Flows", "FLOW_KINDS", "KIND_COLLECTIVE", "KIND_BACKGROUND", "KIND_STORAGE_READ", "KIND_STORAGE_WRITE",
           "KIND_SHARP"]

#: What a flow carries; the code is the index (``Flows.kind``).
FLOW_KINDS = ("collective", "background", "storage_read", "storage_write", "sharp")
KIND_COLLECTIVE, KIND_BACKGROUND, KIND_STORAGE_READ, KIND_STORAGE_WRITE, KIND_SHARP = range(len(FLOW_KINDS))


@dataclass(frozen=True)
class Flows:
    """Parallel arrays describing flows; all of shape ``(F,)``.

    ``src``, ``dst`` int64 node indices; ``demand_gbps`` float64 (``inf`` for greedy
    flows); ``weight`` float64 (share weight, > 0); ``sl`` int8 (service level);
    ``job`` int32 (index into the job list, -1 for none); ``tenant`` int32 (index
    into the tenant list, -1 for none); ``nbytes`` float64 (bytes the flow moves per
    iteration of its job, 0 for rate-driven flows such as background load);
    ``kind`` int8 (index into :data:`FLOW_KINDS`).

    Examples
    --------
    >>> f = Flows(np.array([0, 1]), np.array([1, 0]), np.array([10.0, np.inf]))
    >>> len(f), f.weight.tolist(), FLOW_KINDS[f.kind[0]]
    (2, [1.0, 1.0], 'collective')
    """

    src: np.ndarray
    dst: np.ndarray
    demand_gbps: np.ndarray
    weight: np.ndarray = field(default=None)
    sl: np.ndarray = field(default=None)
    job: np.ndarray = field(default=None)
    tenant: np.ndarray = field(default=None)
    nbytes: np.ndarray = field(default=None)
    kind: np.ndarray = field(default=None)

    def __post_init__(self) -> None:
        n = len(self.src)
        defaults = {"weight": (np.ones, np.float64), "sl": (np.zeros, np.int8),
                    "job": (lambda k, dtype: np.full(k, -1, dtype), np.int32),
                    "tenant": (lambda k, dtype: np.full(k, -1, dtype), np.int32),
                    "nbytes": (np.zeros, np.float64), "kind": (np.zeros, np.int8)}
        for name in ("src", "dst"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        object.__setattr__(self, "demand_gbps", np.asarray(self.demand_gbps, dtype=np.float64))
        for name, (make, dtype) in defaults.items():
            value = getattr(self, name)
            value = make(n, dtype=dtype) if value is None else np.asarray(value, dtype=dtype)
            object.__setattr__(self, name, np.broadcast_to(value, (n,)).copy() if value.ndim == 0 else value)
        for f in fields(self):
            if len(getattr(self, f.name)) != n:
                raise ValueError(f"Flows.{f.name} has length {len(getattr(self, f.name))}, expected {n}")

    def __len__(self) -> int:
        return len(self.src)

    def take(self, rows: np.ndarray) -> Flows:
        """The flows at ``rows`` (index array or mask)."""
        return Flows(*(getattr(self, f.name)[rows] for f in fields(self)))

    @staticmethod
    def concat(parts: list[Flows]) -> Flows:
        """All flows of ``parts`` in order."""
        if not parts:
            z = np.zeros(0)
            return Flows(z.astype(np.int64), z.astype(np.int64), z)
        return Flows(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Flows)))
