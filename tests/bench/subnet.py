"""The largest 3-level fat tree of one subnet, shared by the benches that quote it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fabric_engine.topology.generate import fat_tree  # noqa: E402
from fabric_engine.topology.limits import MAX_UNICAST_LID  # noqa: E402


def largest_subnet_fat_tree(radix: int = 64) -> int:
    """Most hosts, in whole pods of ``(radix / 2)**2`` hosts, of a 3-level radix fat tree whose LIDs fit one subnet.

    Whole pods, as OpenSM's ftree needs (every pod alike); ``bench_topology`` (building it) and
    ``bench_routing`` (routing it with ftree) quote this one figure.
    """
    per_pod = (radix // 2) ** 2
    pods = radix
    while pods > 1 and fat_tree(hosts=pods * per_pod, radix=radix, levels=3, lids="none").lids_needed > MAX_UNICAST_LID:
        pods -= 1
    return pods * per_pod
