"""Workloads: jobs, their communication patterns and placement, and the flows they expand into.

Every traffic source (training jobs here; storage and SHARP elsewhere) expands into
:class:`Flows` arrays ``(src, dst, demand_gbps, weight, sl, job, tenant, nbytes, kind)``,
optionally with its own incidence rows; :func:`expand_jobs` stacks them for the solver.
"""

from .expand import JobFlows, expand_jobs
from .job import ALLREDUCE_PATTERNS, Job, run_window
from .patterns import (
    PATTERNS,
    PatternFlows,
    background_pairs,
    btree_parents,
    register_pattern,
    ring_pairs,
    rings_within,
)
from .placement import PLACEMENTS, compute_hosts, place_packed, place_scattered
from .traffic import (
    FLOW_KINDS,
    KIND_BACKGROUND,
    KIND_COLLECTIVE,
    KIND_SHARP,
    KIND_STORAGE_READ,
    KIND_STORAGE_WRITE,
    Flows,
)

__all__ = [
    "Job", "Flows", "JobFlows", "PATTERNS", "PLACEMENTS", "FLOW_KINDS", "KIND_COLLECTIVE", "KIND_BACKGROUND",
    "KIND_STORAGE_READ", "KIND_STORAGE_WRITE", "KIND_SHARP", "PatternFlows", "register_pattern", "expand_jobs",
    "run_window", "ring_pairs", "rings_within", "btree_parents", "background_pairs", "place_packed",
    "place_scattered", "ALLREDUCE_PATTERNS", "compute_hosts",
]
