"""SHARP in-network aggregation: resources per switch generation, reduction trees, the aggregation
manager, and the ``sharp_allreduce`` traffic pattern (registered on import).

See ``docs/sharp-and-storage.md`` for the model and its sources.
"""

from .manager import EVENTS_KEPT, AggregationManager, Allocation
from .resources import (
    DEFAULT_EFFICIENCY,
    GENERATIONS,
    NCCL_SAT_FLOWS_PER_SWITCH,
    SharpConfig,
    SharpGeneration,
    generation_for,
)
from .traffic import TREE_PARAM, aggregated_bytes, link_bytes, sharp_allreduce, sharp_job_params
from .tree import SharpTree, build_tree, candidate_roots

__all__ = ["AggregationManager", "Allocation", "EVENTS_KEPT", "SharpConfig", "SharpGeneration", "GENERATIONS",
           "NCCL_SAT_FLOWS_PER_SWITCH", "DEFAULT_EFFICIENCY", "generation_for", "SharpTree", "build_tree",
           "candidate_roots", "sharp_allreduce", "sharp_job_params", "link_bytes", "aggregated_bytes", "TREE_PARAM"]
