"""Fabric analyses: effective bisection bandwidth and what-if comparisons (routing, RoCEv2, congestion)."""

from .congestion import congestion_whatif
from .ebb import EbbResult, ebb_report, effective_bisection_bandwidth, pattern_bandwidth
from .patterns import PAIR_PATTERNS, bisection_pairs, permutation_pairs, shift_pairs
from .run import KINDS, AnalysisInputError, congestion_analysis, ebb_analysis, run_analysis, scenario_inputs
from .whatif import Side, WhatIf, cable_label, link_map, what_if, whatif_report, whatif_summary, workload_impact

__all__ = [
    "EbbResult", "effective_bisection_bandwidth", "pattern_bandwidth", "PAIR_PATTERNS", "bisection_pairs",
    "permutation_pairs", "shift_pairs", "Side", "WhatIf", "link_map", "what_if", "workload_impact", "ebb_report",
    "whatif_report", "whatif_summary", "cable_label", "KINDS", "AnalysisInputError", "ebb_analysis", "run_analysis",
    "scenario_inputs", "congestion_whatif", "congestion_analysis",
]
