"""The ``storage`` key of a scenario spec."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

from ..errors import FabricEngineError
from ..routing import Routing
from ..workload import Job
from .model import StorageConfig, StorageModel

__all__ = ["model_from_spec"]


def model_from_spec(routing: Routing, data: dict | None, jobs: Sequence[Job]) -> StorageModel | None:
    """A storage model for ``{"read_gbps", "write_gbps", "stripe_count", "stripe_size", "background_read_gbps",
    "background_fraction"}`` (see :class:`StorageConfig`).

    Built when the spec has a ``storage`` key or a job reads or checkpoints; the fabric
    must then have storage servers (role ``storage``).
    """
    if data is None and not any(j.read_gbps > 0 or j.checkpoint is not None for j in jobs):
        return None
    data = dict(data or {})
    known = {f.name for f in fields(StorageConfig)}
    unknown = set(data) - known
    if unknown:
        raise FabricEngineError(f"storage: unknown key(s) {', '.join(sorted(unknown))}; "
                                f"known: {', '.join(sorted(known))}")
    model = StorageModel(routing, StorageConfig(**data))
    if model.num_servers == 0:
        raise FabricEngineError("storage: the fabric has no storage servers (topology key storage_servers)")
    return model
