"""The collector's link health read (issue 37): ``perfquery -T`` of every switch each sweep, when the collector's
``health_counters`` is on, into the fabric's health readings (:mod:`ibweb.runtime.health_readings`).

A switch that cannot answer (ibsim: ``cannot query PortExtendedSpeedsCounters``) or an output the reader refuses is
a warning of the sweep, never a failure: the counters of the sweep stand. The outputs cross the shard task's
boundary as text (a few KB per switch) and are read at the merge, where the discovery maps their LIDs to nodes.
``perfquery -T`` gives error counts, not rates: the readings carry FEC blocks and per-lane errors, timed at the
sweep's merge, and the lanes and speed of each port's cable from the discovery; their BER is computed from the
deltas to the port's counters of the sweep before (:mod:`ibweb.runtime.health_readings`), over the interval between
the two. The ports ``perfquery -T`` does not count (a switch that cannot answer it) are kept with the
``SymbolErrorCounter`` the sweep read of them, for their symbol BER from the same deltas
(:mod:`fabric_engine.health.port_counters`: a counter saturated at 65535 gives none).

OpenSM's log, where the collector has one (``CollectorConfig.opensm_log_file``), is read each sweep from where the
last read stopped (:func:`fabric_engine.health.opensm_log.tail`; the position in the cache): the ports OpenSM
unlinked or linked, timed by the link state change traps, are kept as the fabric's log evidence
(:func:`.health_readings.put_log_downs`) for the health keeper's down tracker. The log's times are the SM host's
local time, read as the collector's (the two share a zone). A log that cannot be read is a warning.
"""

from __future__ import annotations

import time

import numpy as np
from django.core.cache import cache

from fabric_engine.errors import FabricEngineError
from fabric_engine.health import opensm_log, perfquery_ext_speeds, port_counters
from fabric_engine.health.records import merge
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.telemetry.counters import CounterSamples
from ibweb.runtime import health_readings
from ibweb.runtime.health_ports import match_ports

from .collector import CollectorError, CommandRunner, SwitchTarget, ext_speeds_command

__all__ = ["read_ext_speeds", "store_ext_speeds", "store_opensm_log"]

#: How long the position in OpenSM's log is kept without a sweep (then the log is read from its start again).
_TAIL_TTL_S = 7 * 24 * 3600


def read_ext_speeds(run: CommandRunner, target: SwitchTarget, warnings: list[dict]) -> str | None:
    """The ``perfquery -T`` output of ``target``; None (and a warning) when the switch cannot answer."""
    try:
        return run.run(ext_speeds_command(target)).text
    except CollectorError as exc:
        warnings.append({"line": None, "text": f"perfquery -T lid {target.lid}", "reason": str(exc)[:300]})
        return None


def store_ext_speeds(fabric_id: int, linkinfo: str, texts: list[str], warnings: list[dict],
                     samples: CounterSamples | None = None) -> int:
    """Read the sweep's ``perfquery -T`` outputs, and the ``SymbolErrorCounter`` of the ports of the sweep's
    ``samples`` that have none (:func:`~fabric_engine.health.port_counters.symbol_rows`: their symbol BER), match
    their LIDs to the discovery ``linkinfo`` and keep them; the number of ports kept (0 when none could be read)."""
    parts = []
    for i, text in enumerate(texts):
        try:
            parts.append(perfquery_ext_speeds.read(text, f"perfquery -T #{i + 1}", warnings))
        except FabricEngineError as exc:
            warnings.append({"line": None, "text": f"perfquery -T #{i + 1}", "reason": str(exc)[:300]})
    if not parts and (samples is None or not len(samples)):
        return 0
    try:
        recs = [merge(parts)] if parts else []
        if recs:
            recs[0].data["t"][:] = time.time()  # perfquery -T prints no time: that of the merge
        if samples is not None and len(samples):  # the sweep's own reads are timed; one row per port, no merge
            skip = port_counters.lid_port_keys(recs[0]) if recs else np.zeros(0, np.int64)
            recs.append(port_counters.symbol_rows(samples, skip))
        recs = [r for r in recs if len(r)]
        if not recs:
            return 0
        fabric = fabric_from_linkinfo(parse_iblinkinfo(linkinfo))
        rows, dropped = match_ports(fabric, recs[0] if len(recs) == 1 else merge(recs))  # disjoint ports
    except FabricEngineError as exc:
        warnings.append({"line": None, "text": "perfquery -T", "reason": str(exc)[:300]})
        return 0
    if dropped.size:
        warnings.append({"line": None, "text": ", ".join(dropped[:20].tolist()),
                         "reason": f"perfquery: {dropped.size} port(s) of no node of the discovery"})
    return health_readings.put(fabric_id, rows) if len(rows) else 0


def store_opensm_log(config, warnings: list[dict]) -> int:
    """Read what OpenSM logged since the last sweep (``config``: a :class:`~.models.CollectorConfig`) and keep its
    port changes as the fabric's log evidence; the changes read (0: none, or no log configured)."""
    path = config.opensm_log_file()
    if path is None or (not config.opensm_log_path and not path.exists()):  # a drop directory without one
        return 0
    key = f"ibweb:telemetry:{config.fabric_id}:opensm_log_tail"
    state = opensm_log.TailState.from_json(cache.get(key))
    found: list[dict] = []
    try:
        ev, state = opensm_log.tail(path, state, found)
    except (OSError, FabricEngineError) as exc:
        warnings.append({"line": None, "text": str(path), "reason": f"OpenSM log not read: {str(exc)[:300]}"})
        return 0
    warnings.extend({**w, "source": str(path)} for w in found[:20])
    cache.set(key, state.as_json(), _TAIL_TTL_S)
    if len(ev):
        health_readings.put_log_downs(config.fabric_id, ev)
    return len(ev)
