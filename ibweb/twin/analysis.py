"""The ``whatif_live`` analysis of a telemetry-fed fabric: today's jobs under a failure or another engine.

Run by the analyses task (:mod:`ibweb.fabrics.tasks`, which finds it in the twin's ``AppConfig.live_analyses``)
like the other what-ifs, on what the fabric's engine published (the runtime record: the discovered fabric and
the LFTs in force) and the jobs its twin runs now (placed with the job source's host patterns). The engine work is
:func:`fabric_engine.twin.live_what_if`; each job's predicted slowdown sits beside what it is
observed to send now (the twin's newest report).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from fabric_engine.errors import FabricEngineError
from fabric_engine.twin import HostMap, live_what_if, place_jobs

from . import jobs as jobsvc
from . import report_cache
from .models import JobSource

__all__ = ["run_live"]


def _cable(f, c: int) -> dict:
    a, b = int(f.a_node[c]), int(f.b_node[c])
    return {"cable": c, "a": f"{f.node_name[a]}/{int(f.a_port[c])}", "b": f"{f.node_name[b]}/{int(f.b_port[c])}"}


def run_live(fabric, params: dict, progress: Callable[[float, str], None]) -> dict:
    """The what-if of ``params`` (``failed_cables``, ``failed_switches``, ``engine``) on the live fabric."""
    from fabric_engine.analysis import whatif_summary
    from ibweb.runtime import record

    progress(0.0, "reading what the engine runs on")
    h = record.head_of(fabric)  # never the record of another row with this key
    routing = record.full_routing(fabric.pk, h) if h is not None else None
    if routing is None:
        raise FabricEngineError(f"fabric {fabric.slug} has no routing yet: its engine has not discovered it")
    source = JobSource.objects.filter(fabric=fabric).first()
    index = (source.hostmap() if source is not None else HostMap()).index(routing.fabric)
    now = time.time()
    running = [j for j in jobsvc.engine_jobs(fabric.pk) if (j.start is None or j.start <= now)
               and (j.end is None or now < j.end)]
    known, _ = place_jobs(running, index, patterns=source.patterns if source else None,
                          default_pattern=source.default_pattern if source else "ring_allreduce")
    if not known:
        raise FabricEngineError(f"fabric {fabric.slug} runs no known job to compare (see its job source)")
    report = report_cache.report(fabric.pk) or {}
    other = params.get("engine")
    failed = params.get("failed_cables", [])
    switches = params.get("failed_switches", [])
    progress(0.1, f"rerouting with {other or fabric.routing_engine}" +
             (f" without {len(failed)} cable(s)" if failed else "") +
             (f" and switch(es) {', '.join(switches)}" if switches else ""))
    out = live_what_if(routing, known, engine=fabric.routing_engine, failed_cables=failed, failed_switches=switches,
                       other_engine=other, observed={j["id"]: j for j in report.get("jobs", [])})
    progress(0.9, "comparing the jobs")
    out["rails_delta"] = out["delta"]
    out["delta"] = [{"id": j["id"], "comm_ratio": j["slowdown"]} for j in out["jobs"]]
    out["failed"] = [_cable(routing.fabric, c) for c in out["failed_cables"]]
    out["summary"] = whatif_summary(out)
    return out
