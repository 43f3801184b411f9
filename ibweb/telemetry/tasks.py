"""Celery tasks of telemetry sweeps: beat starts the due sweeps; shards run in parallel; one merge.

Tasks take primary keys and JSON only. A sweep is a chord: ``sweep_shard`` for
each shard of switches, then ``merge_sweep`` with their results; once per ``validation_every`` sweeps the merge
also starts ``validation_reads`` (``sminfo``, ``smpquery pkeys``), itself a chord: ``validation_sms`` and a
``pkey_shard`` per :data:`~.device_sweep.PKEY_SHARD_PORTS` ports, then one ``merge_validation``. Under
``CELERY_TASK_ALWAYS_EAGER`` (the embedded default) it all runs in the caller, but for the validation reads (a
thread of their own, in one task: :func:`.device_sweep.start`).
"""

from __future__ import annotations

import logging
import time

from celery import chord, shared_task
from django.core.cache import cache

from fabric_engine.errors import FabricEngineError
from ibweb.fabrics.choices import FabricMode

from . import device_sweep, store, sweeps
from .cadence import Cadence
from .choices import CollectorSource, SweepStatus
from .collector import CollectorError
from .models import CollectorConfig, Sweep

__all__ = ["schedule_sweeps", "sweep_fabric", "sweep_shard", "merge_sweep", "validation_reads", "validation_sms",
           "pkey_shard", "merge_validation"]

log = logging.getLogger("ibweb.telemetry")


@shared_task
def schedule_sweeps() -> list[int]:
    """Start a sweep of every enabled telemetry-fed fabric whose slot has come (:class:`~.cadence.Cadence`: the
    previous slot plus the interval, kept in the cache; the first after the newest sweep recorded)."""
    started = []
    now = time.time()
    configs = CollectorConfig.objects.filter(enabled=True, fabric__mode=FabricMode.TELEMETRY).exclude(
        source=CollectorSource.PUSH)
    for config in configs:  # one row per fabric
        slot = f"ibweb:telemetry:{config.fabric_id}:next_sweep"
        cadence = Cadence(cache.get(slot))
        if cadence.next_at is None:
            last = config.sweeps.order_by("-started").first()
            cadence.next_at = None if last is None else last.started.timestamp() + config.interval_s
        if not cadence.due(now):
            continue
        # one sweep at a time per fabric, across beat ticks and workers
        if not cache.add(f"ibweb:telemetry:{config.fabric_id}:sweeping", 1, timeout=max(config.interval_s, 5.0)):
            continue
        skipped = cadence.begin(now, config.interval_s)
        if skipped:
            log.warning("fabric %s: %d sweep slot(s) of %g s skipped: the previous sweep overran", config.fabric_id,
                        skipped, config.interval_s)
        cache.set(slot, cadence.next_at, timeout=None)
        sweep_fabric.delay(config.pk)
        started.append(config.pk)
    return started


@shared_task
def sweep_fabric(config_pk: int) -> int:
    """Discover the fabric and fan out its shards; returns the sweep's primary key."""
    config = CollectorConfig.objects.select_related("fabric").get(pk=config_pk)
    if config.source == CollectorSource.DIRECTORY:
        sweep = sweeps.run_sweep(config)
        cache.delete(f"ibweb:telemetry:{config.fabric_id}:sweeping")
        return sweep.pk
    sweep = Sweep.objects.create(config=config, source=config.source)
    try:
        linkinfo, shards = sweeps.plan(config)
    except (CollectorError, FabricEngineError) as exc:
        sweeps.fail(sweep, str(exc))
        cache.delete(f"ibweb:telemetry:{config.fabric_id}:sweeping")
        return sweep.pk
    sweep.shards = len(shards)
    sweep.save(update_fields=["shards"])
    cache.set(f"ibweb:telemetry:sweep:{sweep.pk}:linkinfo", linkinfo, 3600)
    header = [sweep_shard.s(config.pk, sweep.pk, i, targets) for i, targets in enumerate(shards)]
    if header:
        chord(header)(merge_sweep.s(sweep.pk))
    else:
        merge_sweep([], sweep.pk)
    return sweep.pk


@shared_task
def sweep_shard(config_pk: int, sweep_pk: int, shard: int, targets: list[list]) -> dict:
    """Read the counters of one shard's switches (``targets``: ``[[lid, [ports]], ...]``)."""
    config = CollectorConfig.objects.get(pk=config_pk)
    return sweeps.read_shard(config, shard, targets)


@shared_task
def merge_sweep(results: list[dict], sweep_pk: int) -> int:
    """Merge the shards of a sweep into the fabric's newest counters."""
    sweep = Sweep.objects.select_related("config__fabric").get(pk=sweep_pk)
    linkinfo = cache.get(f"ibweb:telemetry:sweep:{sweep.pk}:linkinfo")
    try:
        if linkinfo is None:
            sweeps.fail(sweep, "discovery output expired before the shards finished")
        elif sweep.status == SweepStatus.RUNNING:
            sweeps.merge(sweep.config, sweep, linkinfo, list(results))
    finally:
        cache.delete_many([f"ibweb:telemetry:sweep:{sweep.pk}:linkinfo",
                           f"ibweb:telemetry:{sweep.config.fabric_id}:sweeping"])
    return sweep.pk


@shared_task
def validation_reads(config_pk: int, sweep_pk: int) -> int:
    """The validation reads a sweep's merge claimed (:mod:`.device_sweep`: ``sminfo``, ``smpquery pkeys``), on the
    fabric's newest discovery; their warnings go to that sweep. With Celery workers (:func:`.device_sweep.sharded`)
    a chord: the SM reads (``validation_sms``) and the P_Key shards (``pkey_shard``) in parallel, then one
    ``merge_validation``; else all here. Returns how many warnings (0 when the chord was started)."""
    config = CollectorConfig.objects.select_related("fabric").get(pk=config_pk)
    _, newest = store.sweeps(config.fabric_id)
    if newest is None:
        return 0
    shards = device_sweep.plan_pkey_reads(newest["linkinfo"]) if device_sweep.sharded(config) else None
    if shards is None:  # eager (the embedded default's validation thread), a drop directory, or no fabric
        found = device_sweep.run_validation(config, newest["linkinfo"])
        if found:
            sweeps.add_warnings(sweep_pk, found)
        return len(found)
    cache.set(_validation_key(sweep_pk), newest["linkinfo"], 3600)
    header = [validation_sms.s(config.pk), *(pkey_shard.s(config.pk, i, ports) for i, ports in enumerate(shards))]
    chord(header)(merge_validation.s(config.pk, sweep_pk, sum(map(len, shards)), time.time()))
    return 0


def _validation_key(sweep_pk: int) -> str:
    return f"ibweb:telemetry:sweep:{sweep_pk}:validation_linkinfo"


@shared_task
def validation_sms(config_pk: int) -> dict:
    """The SM reads of a sharded validation round (``sminfo``, ``saquery -s``, ``sminfo <lid>``), in one task."""
    config = CollectorConfig.objects.get(pk=config_pk)
    return device_sweep.read_sms(sweeps.runner(config))


@shared_task
def pkey_shard(config_pk: int, shard: int, ports: list[list[int]]) -> dict:
    """``smpquery pkeys`` of one shard's ports (``[[lid, port], ...]``; :func:`.device_sweep.read_pkey_shard`)."""
    config = CollectorConfig.objects.get(pk=config_pk)
    return device_sweep.read_pkey_shard(sweeps.runner(config), ports, shard)


@shared_task
def merge_validation(results: list[dict], config_pk: int, sweep_pk: int, total: int, started: float) -> int:
    """Write a sharded round's readings once (:func:`.device_sweep.merge_validation`); its warnings go to the
    sweep. Returns how many warnings."""
    config = CollectorConfig.objects.select_related("fabric").get(pk=config_pk)
    linkinfo = cache.get(_validation_key(sweep_pk))
    if linkinfo is None:
        found = [{"line": None, "text": "validation reads",
                  "reason": "the discovery expired before the P_Key shards finished: nothing kept this round"}]
    else:
        found = device_sweep.merge_validation(config, linkinfo, list(results), total, started)
        cache.delete(_validation_key(sweep_pk))
    if found:
        sweeps.add_warnings(sweep_pk, found)
    return len(found)
