"""Topology model (:class:`Fabric`), link speeds and generators."""

from .fabric import KIND_HOST, KIND_SWITCH, ROLE_AGGREGATION, ROLES, TIER_NAMES, Fabric
from .speeds import SPEEDS, WIDTHS, capacity_gbps, speed_code

__all__ = ["Fabric", "KIND_HOST", "KIND_SWITCH", "ROLES", "ROLE_AGGREGATION", "TIER_NAMES", "SPEEDS", "WIDTHS",
           "capacity_gbps", "speed_code"]
