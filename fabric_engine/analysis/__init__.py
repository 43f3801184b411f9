"""Fabric analyses: effective bisection bandwidth and what-if comparisons."""

from .ebb import EbbResult, effective_bisection_bandwidth, pattern_bandwidth
from .patterns import PAIR_PATTERNS, bisection_pairs, permutation_pairs, shift_pairs
from .whatif import Side, WhatIf, link_map, what_if, workload_impact

__all__ = [
    "EbbResult", "effective_bisection_bandwidth", "pattern_bandwidth", "PAIR_PATTERNS", "bisection_pairs",
    "permutation_pairs", "shift_pairs", "Side", "WhatIf", "link_map", "what_if", "workload_impact",
]
