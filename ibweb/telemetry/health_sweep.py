"""The collector's link health read (issue 37): ``perfquery -T`` of every switch each sweep, when the collector's
``health_counters`` is on, into the fabric's health readings (:mod:`.health_store`).

A switch that cannot answer (ibsim: ``cannot query PortExtendedSpeedsCounters``) or an output the reader refuses is
a warning of the sweep, never a failure: the counters of the sweep stand. The outputs cross the shard task's
boundary as text (a few KB per switch) and are read at the merge, where the discovery maps their LIDs to nodes.
``perfquery -T`` gives error counts, not rates: the readings carry FEC blocks and per-lane errors, and their BER
stays unknown until computed from two sweeps (not done yet).
"""

from __future__ import annotations

import time

from fabric_engine.errors import FabricEngineError
from fabric_engine.health import perfquery_ext_speeds
from fabric_engine.health.records import merge
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo

from . import health_store
from .collector import CollectorError, CommandRunner, SwitchTarget, ext_speeds_command
from .health_ports import match_ports

__all__ = ["read_ext_speeds", "store_ext_speeds"]


def read_ext_speeds(run: CommandRunner, target: SwitchTarget, warnings: list[dict]) -> str | None:
    """The ``perfquery -T`` output of ``target``; None (and a warning) when the switch cannot answer."""
    try:
        return run.run(ext_speeds_command(target)).text
    except CollectorError as exc:
        warnings.append({"line": None, "text": f"perfquery -T lid {target.lid}", "reason": str(exc)[:300]})
        return None


def store_ext_speeds(fabric_id: int, linkinfo: str, texts: list[str], warnings: list[dict]) -> int:
    """Read the sweep's ``perfquery -T`` outputs, match their LIDs to the discovery ``linkinfo`` and keep them; the
    number of ports kept (0 when none could be read)."""
    parts = []
    for i, text in enumerate(texts):
        try:
            parts.append(perfquery_ext_speeds.read(text, f"perfquery -T #{i + 1}", warnings))
        except FabricEngineError as exc:
            warnings.append({"line": None, "text": f"perfquery -T #{i + 1}", "reason": str(exc)[:300]})
    if not parts:
        return 0
    try:
        fabric = fabric_from_linkinfo(parse_iblinkinfo(linkinfo))
        rows, dropped = match_ports(fabric, merge(parts))
    except FabricEngineError as exc:
        warnings.append({"line": None, "text": "perfquery -T", "reason": str(exc)[:300]})
        return 0
    if dropped.size:
        warnings.append({"line": None, "text": ", ".join(dropped[:20].tolist()),
                         "reason": f"perfquery -T: {dropped.size} port(s) of no node of the discovery"})
    rows.data["t"][:] = time.time()
    return health_store.put(fabric_id, rows) if len(rows) else 0
