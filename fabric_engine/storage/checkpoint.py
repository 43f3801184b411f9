"""Checkpoints of a training job: how big and how often (plain data; no imports from the rest of the engine)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FabricEngineError

__all__ = ["Checkpoint", "BYTES_PER_PARAM"]

#: Bytes of training state per parameter under mixed-precision Adam: bf16 weights (2) + fp32 master
#: weights (4) + two fp32 Adam moments (4 + 4); gradients are not saved. The ZeRO paper's accounting
#: (Rajbhandari et al., SC 2020, section 3.1) counts 16 with the fp16 gradients.
BYTES_PER_PARAM = 14.0


@dataclass(frozen=True)
class Checkpoint:
    """A job writes ``params x bytes_per_param`` bytes every ``every`` iterations, each rank its shard.

    The job is synchronous: it stops iterating while it writes (its GPUs idle for
    the checkpoint's duration). ``stripe_count`` overrides the storage default.

    >>> Checkpoint(70e9, every=200).size_bytes
    980000000000.0
    """

    params: float
    every: int
    bytes_per_param: float = BYTES_PER_PARAM
    stripe_count: int | None = None

    def __post_init__(self) -> None:
        if self.params <= 0 or self.bytes_per_param <= 0:
            raise FabricEngineError("checkpoint: params and bytes_per_param must be positive")
        if int(self.every) < 1:
            raise FabricEngineError(f"checkpoint: every {self.every} must be at least 1 iteration")
        if self.stripe_count is not None and self.stripe_count < 1:
            raise FabricEngineError("checkpoint: stripe_count must be at least 1")

    @property
    def size_bytes(self) -> float:
        """Bytes of one checkpoint."""
        return float(self.params) * float(self.bytes_per_param)

    @classmethod
    def from_dict(cls, data: dict) -> Checkpoint:
        """From a spec dict ``{"params", "every", "bytes_per_param", "stripe_count"}``."""
        try:
            return cls(**data)
        except TypeError as exc:
            raise FabricEngineError(f"checkpoint: {exc}") from None
