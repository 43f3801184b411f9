"""A fabric row graded into the shared cache as its leader would, without running its engine: its runtime record
published, then emulated link health readings (:class:`fabric_engine.health.emulated.HealthModel` with the
given faults) graded once per emulated second as :class:`ibweb.live.engine.health_publisher.HealthPublisher` grades
them (its keeper, the report and series stored, the trend and the cable inventory kept)."""

from __future__ import annotations

import time

from fabric_engine.health.emulated import HealthModel
from fabric_engine.health.emulated_faults import faults_from_spec
from fabric_engine.health.thresholds import load
from fabric_engine.scenario import build_fabric
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.health_publisher import HealthKeeper
from ibweb.live.health.keep import forget, keep
from ibweb.runtime import health as store
from ibweb.runtime import record
from ibweb.runtime.cache import shared_cache

__all__ = ["publish_and_grade", "clear"]


def clear(row: Fabric) -> None:
    """Forget every health entry of ``row`` (the cache outlives a test's database rows, whose ids repeat)."""
    forget(row.pk)
    shared_cache().delete_many([f"ibweb:{p}:{row.pk}" for p in ("health", "health-ports", "health-trend",
                                                                  "health-cables")])


def publish_and_grade(row: Fabric, topology: dict, faults: list[dict], seconds: int) -> object:
    """Publish ``row``'s record with the fabric ``topology`` describes, then grade ``seconds`` readings of it with
    ``faults``; the engine fabric."""
    clear(row)
    f = build_fabric(topology)
    record.publish(row.pk, record.row_identity(row), f, None)
    version = record.fabric_version(record.head_of(row))
    model = HealthModel(f, faults_from_spec(f, faults), seed=1)
    keeper, th = HealthKeeper(), load()
    t0 = time.time() - seconds
    for s in range(seconds):
        t = t0 + s
        rec = model.readings(float(s), t)
        keeper.observe(rec, t, f)
        report, ports, _ = keeper.report(rec, f, th, t)
        store.write(row.pk, version, report)
        store.write_ports(row.pk, version, t, ports)
        keep(row.pk, version, t, rec, f, ports)
    return f
