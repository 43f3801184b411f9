"""Telemetry: real fabrics seen through infiniband-diags counters and discoveries.

``perfquery`` and ``iblinkinfo`` text -> arrays (:mod:`.perfquery`, :mod:`.linkinfo`);
two sweeps -> counter increases and rates (:mod:`.rates`) -> a :class:`FabricState`
with alerts (:mod:`.observe`, :mod:`.alerts`); two discoveries -> topology events
(:mod:`.diff`); a discovery against its reference cabling -> conditions
(:mod:`.conditions`); counters -> Prometheus text (:mod:`.prometheus`).
"""

from .alerts import DEFAULT_THRESHOLDS, Thresholds, error_alerts
from .conditions import CONDITION_KINDS, cabling_conditions, is_good
from .counters import COLUMN, COLUMNS, ERROR_COUNTERS, CounterSamples, port_key
from .diff import EVENT_KINDS, diff_topology
from .linkinfo import LinkInfo, fabric_from_linkinfo, parse_iblinkinfo, read_discovery
from .observe import Observation, link_port_keys, observe
from .perfquery import parse_perfquery, parse_perfquery_many
from .prometheus import METRICS, CounterIntegrator, render_metrics, totals_from_samples
from .rates import (
    CAPACITY_MARGIN,
    FUTURE,
    FUTURE_MARGIN_S,
    LATCHED,
    MIN_INTERVAL_S,
    OUT_OF_ORDER,
    OVER_CAPACITY,
    RESET,
    STALE,
    SUSPECT,
    TOO_CLOSE,
    WRAPPED,
    CounterDeltas,
    counter_deltas,
)

__all__ = [
    "COLUMN", "COLUMNS", "ERROR_COUNTERS", "CounterSamples", "port_key", "parse_perfquery", "parse_perfquery_many",
    "LinkInfo", "parse_iblinkinfo", "fabric_from_linkinfo", "read_discovery", "CounterDeltas", "counter_deltas",
    "STALE", "RESET",
    "LATCHED", "WRAPPED", "OUT_OF_ORDER", "FUTURE", "TOO_CLOSE", "OVER_CAPACITY", "SUSPECT", "FUTURE_MARGIN_S",
    "MIN_INTERVAL_S", "CAPACITY_MARGIN", "DEFAULT_THRESHOLDS", "Thresholds", "error_alerts", "Observation", "observe",
    "link_port_keys", "EVENT_KINDS", "diff_topology", "CONDITION_KINDS", "cabling_conditions", "is_good",
    "METRICS", "CounterIntegrator", "render_metrics",
    "totals_from_samples",
]
