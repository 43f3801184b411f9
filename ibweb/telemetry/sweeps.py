"""A sweep in three steps: discover and plan shards, read each shard, merge.

The Celery tasks in :mod:`.tasks` run these steps (shards in parallel on workers);
everything that crosses a task boundary is JSON: switch targets as
``[lid, [ports]]``; a shard's counters as compressed binary text (:mod:`.transport`).
A shard's perfquery outputs are parsed at once by the compiled lexer
(``parse_perfquery_many``); the merge concatenates and merges arrays.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from django.db import transaction
from django.utils import timezone

from fabric_engine.captured import capped
from fabric_engine.errors import FabricEngineError
from fabric_engine.telemetry import (
    CounterSamples,
    LinkInfo,
    diff_topology,
    fabric_from_linkinfo,
    parse_iblinkinfo,
    read_discovery,
)
from fabric_engine.topology import KIND_SWITCH
from ibweb.db.retry import retry_locked

from . import cc_readings, device_sweep, store
from .cc_sweep import cc_outputs, read_rcvcc, store_cc
from .choices import CollectorSource, SweepStatus
from .collector import CollectorError, CommandRunner, SwitchTarget, perfquery_commands, read_drop_dir
from .health_sweep import read_ext_speeds, store_ext_speeds, store_opensm_log
from .models import CollectorConfig, Sweep
from .transport import merge_results, parse_outputs, shard_result

__all__ = ["plan", "read_shard", "merge", "switch_targets", "run_sweep", "discover"]

log = logging.getLogger("ibweb.telemetry")


def runner(config: CollectorConfig) -> CommandRunner:
    return CommandRunner(config.command_prefix, config.environment, config.timeout_s)


def switch_targets(info: LinkInfo) -> list[SwitchTarget]:
    """Every switch of a discovery with its cabled ports, in LID order."""
    up = info.up & (info.node_kind[info.node] == KIND_SWITCH)
    lids = info.lid[up]
    ports = info.port[up]
    order = np.lexsort((ports, lids))
    lids, ports = lids[order], ports[order]
    cut = np.flatnonzero(np.diff(lids)) + 1
    return [SwitchTarget(int(g[0]), tuple(int(p) for p in pp))
            for g, pp in zip(np.split(lids, cut), np.split(ports, cut), strict=True) if len(g)]


def discover(config: CollectorConfig) -> str:
    """A fresh discovery's ``iblinkinfo`` text, stored nowhere: the command run again, or the drop file read again.

    Raises :class:`CollectorError` when it cannot be had (a push collector has nothing to run).
    """
    if config.source == CollectorSource.PUSH:
        raise CollectorError(f"{config.fabric}: a push collector cannot be asked for a fresh discovery")
    if config.source == CollectorSource.DIRECTORY:
        path = Path(config.drop_dir) / "iblinkinfo.txt"
        try:
            return path.read_text(errors="replace")
        except OSError as exc:
            raise CollectorError(f"{path}: {exc.strerror or exc}") from None
    return runner(config).run(["iblinkinfo"]).text


def plan(config: CollectorConfig) -> tuple[str, list[list[list]]]:
    """Discover the fabric (``iblinkinfo``) and split its switches into shards of targets (JSON).

    A discovery the engine could not build a fabric from raises :class:`FabricEngineError` here, so it is never stored.
    """
    text = runner(config).run(["iblinkinfo"]).text
    info = parse_iblinkinfo(text, source="iblinkinfo")
    fabric_from_linkinfo(info)
    targets = [t.as_json() for t in switch_targets(info)]
    size = max(1, config.shard_size)
    return text, [targets[i:i + size] for i in range(0, len(targets), size)]


def read_shard(config: CollectorConfig, shard: int, targets: list[list]) -> dict:
    """Read the counters of one shard's switches; a failing switch is recorded, the rest still read."""
    run = runner(config)
    reads, failures, health, health_warnings, cc = [], [], [], [], []
    for target in map(SwitchTarget.from_json, targets):  # one command pair per switch
        try:
            reads.append((target, [run.run(cmd) for cmd in perfquery_commands(target)]))
        except CollectorError as exc:
            failures.append({"shard": shard, "target": target.lid, "error": str(exc)})
            log.warning("sweep shard %s: %s", shard, exc)
            continue
        if config.health_counters:  # link health (issue 37): a switch that cannot answer is a warning
            text = read_ext_speeds(run, target, health_warnings)
            if text is not None:
                health.append(text)
        if config.cc_counters:  # congestion control (issue 41): likewise a warning, and the switch's other ports
            cc += read_rcvcc(run, target, health_warnings)
    result = parse_shard(shard, reads, failures)
    if config.health_counters or config.cc_counters:
        result["health"] = health
        result["cc"] = cc
        result["warnings"] = [*health_warnings, *result["warnings"]]  # at most two more per switch
    return result


def parse_shard(shard: int, reads: list[tuple[SwitchTarget, list]], failures: list[dict]) -> dict:
    """The task result of a shard from its switches' outputs: all parsed at once, packed as binary.

    An output the parser refuses fails its switch alone: only then are the switches parsed one by one.
    """
    failures = list(failures)
    warnings: list[dict] = []
    try:
        samples = parse_outputs(((o.text, o.t, o.source) for _, outs in reads for o in outs), warnings)
    except FabricEngineError:
        parts, warnings = [], []
        for target, outs in reads:
            try:
                parts.append(parse_outputs(((o.text, o.t, o.source) for o in outs), warnings))
            except FabricEngineError as exc:
                failures.append({"shard": shard, "target": target.lid, "error": str(exc)})
                log.warning("sweep shard %s: %s", shard, exc)
        samples = CounterSamples.concat(parts)
    return shard_result(shard, samples, failures, warnings)


def merge(config: CollectorConfig, sweep: Sweep, linkinfo: str, results: list[dict],
          extra_failures: list[dict] | None = None) -> Sweep:
    """Combine shard results into the fabric's newest sweep; update the record; diff the topology."""
    warnings: list[dict] = []
    samples, failures = merge_results(results, warnings)
    failures += list(extra_failures or [])
    fabric_id = config.fabric_id
    health = [t for r in results for t in r.get("health") or () if isinstance(t, str)]
    if config.health_counters:  # perfquery -T, and the symbol errors of the ports it does not count
        store_ext_speeds(fabric_id, linkinfo, health, warnings, samples)
    store_opensm_log(config, warnings)  # link downs in OpenSM's log, where the collector has one
    cc = [o for r in results for o in r.get("cc") or () if isinstance(o, list) and len(o) == 3]
    if config.cc_counters or cc:  # FECN/BECN per port (issue 41); a drop directory's are read whatever the option
        store_cc(fabric_id, cc, warnings)
    else:
        cc_readings.forget(fabric_id)
    _, newest = store.sweeps(fabric_id)
    events: list[dict] = []
    if newest is not None and newest["linkinfo"] != linkinfo:
        try:
            events = diff_topology(fabric_from_linkinfo(parse_iblinkinfo(newest["linkinfo"])),
                                   fabric_from_linkinfo(parse_iblinkinfo(linkinfo)))
        except FabricEngineError as exc:
            failures.append({"shard": "discovery", "target": None, "error": str(exc)})
    finished = timezone.now()
    sweep.finished = finished
    sweep.duration_s = (finished - sweep.started).total_seconds()
    sweep.ports = len(samples)
    sweep.shards = len(results)
    sweep.failures = failures
    sweep.warnings = capped(warnings)
    sweep.events = events
    sweep.status = SweepStatus.OK if not failures else (SweepStatus.PARTIAL if len(samples) else SweepStatus.FAILED)
    retry_locked(sweep.save, what=f"sweep of {config.fabric}")
    store.put_sweep(fabric_id, sweep.pk, finished.timestamp(), linkinfo, samples, events, failures)
    if device_sweep.claim(config, time.time()):  # sminfo, smpquery pkeys: on their slower interval, off the sweep
        device_sweep.start(config, sweep.pk)
    return sweep


def add_warnings(sweep_pk: int, found: list[dict]) -> None:
    """Put ``found`` (a later read's warnings) first among the sweep's warnings."""
    def add() -> None:
        with transaction.atomic():
            sweep = Sweep.objects.select_for_update().get(pk=sweep_pk)
            sweep.warnings = capped([*found, *sweep.warnings])
            sweep.save(update_fields=["warnings"])

    retry_locked(add, what=f"warnings of sweep {sweep_pk}")


def fail(sweep: Sweep, error: str) -> Sweep:
    """Record a sweep that produced nothing (discovery failed)."""
    sweep.finished = timezone.now()
    sweep.duration_s = (sweep.finished - sweep.started).total_seconds()
    sweep.status = SweepStatus.FAILED
    sweep.failures = [{"shard": "discovery", "target": None, "error": error}]
    retry_locked(sweep.save, what="a failed sweep")
    return sweep


def unchanged_drop(config: CollectorConfig, written: float) -> list[dict]:
    """A failure when no counter file of the drop directory was written since the newest sweep read them (every
    link would go stale with no reason given); none otherwise."""
    _, newest = store.sweeps(config.fabric_id)
    if newest is None or not len(newest["samples"]) or written > float(newest["samples"].t.max()):
        return []
    at = timezone.localtime(datetime.fromtimestamp(written, tz=UTC)).strftime("%H:%M:%S")
    return [{"shard": "directory", "target": None,
             "error": f"{config.drop_dir}: no perfquery*.txt written since the last sweep (newest {at}); the drop "
                      f"script must write more often than every {config.interval_s:g} s"}]


def run_sweep(config: CollectorConfig) -> Sweep:
    """One whole sweep in this process (drop directory, or commands without Celery)."""
    sweep = retry_locked(Sweep.objects.create, config=config, source=config.source, what=f"sweep of {config.fabric}")
    t0 = time.monotonic()
    try:
        if config.source == CollectorSource.DIRECTORY:
            linkinfo, outputs = read_drop_dir(config.drop_dir)
            warnings: list[dict] = []
            read_discovery(linkinfo.text, source=linkinfo.source, warnings=warnings)
            samples = parse_outputs(((o.text, o.t, o.source) for o in outputs), warnings, cc=[])
            result = {**shard_result(0, samples, [], warnings), "cc": cc_outputs(outputs)}  # read at the merge
            return merge(config, sweep, linkinfo.text, [result],
                         extra_failures=unchanged_drop(config, max(o.t for o in outputs)))
        text, shards = plan(config)
    except (CollectorError, FabricEngineError) as exc:
        return fail(sweep, str(exc))
    results = [read_shard(config, i, targets) for i, targets in enumerate(shards)]
    log.info("sweep of %s: %d shards in %.2f s", config.fabric, len(shards), time.monotonic() - t0)
    return merge(config, sweep, text, results)
