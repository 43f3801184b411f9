"""The collector's validation reads (issue 38): ``sminfo`` and ``smpquery pkeys``, on a slower interval than the
counter sweep, into the fabric's device readings (:mod:`ibweb.runtime.device_readings`).

Once per ``CollectorConfig.validation_every`` sweep intervals (10 by default; 0: never), claimed at the end of a
sweep's merge (after its counters are stored) and run off the sweep (:func:`start`): the task
:func:`~.tasks.validation_reads` on a worker, or, in the embedded setup (Celery eager), on this process's one
validation thread; the sweep never waits on them, and their warnings join that sweep's record when they end:

* commands: ``sminfo`` (the master SM the collector's port knows), ``saquery -s`` (the SA's PortInfoRecords of
  the ports whose CapabilityMask has IsSM set: every SM, master and standby, :func:`sm_lids`) and ``sminfo <lid>``
  of each SM port it names other than the master's (on ibsim with two OpenSMs, priorities 15 and 1: the master's
  ``state 3 SMINFO_MASTER`` and the standby's ``state 2 SMINFO_STANDBY``); ``smpquery pkeys <lid> <port>`` of both
  ends of every switch-to-CA cable of the sweep's discovery (the links whose P_Key tables OpenSM keeps alike,
  :mod:`fabric_engine.validation.partitions`), each output read on its own (``# smpquery pkeys <lid> <port>``
  heading it, as :func:`~fabric_engine.validation.pkeys.read_pkeys` takes a capture), :data:`PKEY_WORKERS` at a
  time (each waits on its MAD round trip; a 32,768-GPU fabric has 65,536 such ports); after
  :data:`PKEY_FAILURE_LIMIT` consecutive failures (the tool missing, the fabric unreachable) the shard's other
  ports are not asked, with one warning for the round. With Celery workers (:func:`sharded`) the ports are split
  into shards of :data:`PKEY_SHARD_PORTS` (:func:`pkey_shards`), each a task (:func:`read_pkey_shard`) run in
  parallel beside the SM reads' one task (:func:`read_sms`), then one merge writes the readings once
  (:func:`merge_validation`); in the embedded setup (eager) the round is one shard on the validation thread;
* a drop directory: its ``sminfo.txt`` and ``pkeys*.txt`` (captures naming each table's command line), when there;
* the sweep's ``iblinkinfo``: its ports whose physical state is ``Disabled`` (administratively disabled: isolated)
  are recorded as isolated (:func:`isolated_ports`; merged, never replaced: the isolation advice's history), and
  kept in the database until the discovery shows them enabled again (:func:`enabled_ports`,
  :func:`ibweb.runtime.device_readings.record_isolations`).

A command that fails, or an output a reader refuses, is a warning of the sweep naming the command, file and line;
the rest still count. The SMs that answered replace the fabric's SMs (``replace``) when any answered, but an SM of
an earlier round that did not answer this one (only the master answered, a standby's ``sminfo <lid>`` failed) is
kept, marked as not answering with when it last answered (:mod:`ibweb.runtime.device_readings`), and the validation
report names it. The P_Key tables read replace the stored ones as a whole when every
port was read (a port gone from the discovery leaves them with that read); when some port did not answer, the
tables read merge into the stored ones (by LID, GUID and port), so a port that failed this round keeps its last.
When the last read was is kept in the cache, so the interval holds across workers and restarts; a round is claimed
atomically (:func:`claim`: ``cache.add`` of the window's key), so two workers never both start it.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.cache import cache

from fabric_engine.devices.vitals import DeviceReadings, IsolatedPort
from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.telemetry.linkinfo import LinkInfo
from fabric_engine.topology import KIND_SWITCH, Fabric
from fabric_engine.validation.pkeys import PKeyTable, read_pkeys
from fabric_engine.validation.sminfo import SmInfo, read_sminfo
from ibweb.db.background import BackgroundLane
from ibweb.runtime import device_readings

from .choices import CollectorSource
from .collector import CollectorError, CommandRunner

__all__ = ["due", "claim", "pkey_ports", "pkeys_command", "read_validation", "run_validation", "SMINFO_FILE",
           "PKEYS_GLOB", "PKEY_WORKERS", "PKEY_FAILURE_LIMIT", "isolated_ports", "enabled_ports",
           "sm_lids", "SAQUERY_SM", "start", "wait_idle", "PKEY_SHARD_PORTS", "pkey_shards", "read_pkey_shard",
           "merge_pkey_shards", "read_sms", "sharded", "plan_pkey_reads", "merge_validation"]

log = logging.getLogger("ibweb.telemetry")

SMINFO_FILE = "sminfo.txt"
PKEYS_GLOB = "pkeys*.txt"
#: ``smpquery pkeys`` commands run at once.
PKEY_WORKERS = 8
#: Ports per P_Key shard (one Celery task each, with Celery workers): 65,536 ports of 32,768 GPUs make 16.
PKEY_SHARD_PORTS = 4096
#: Consecutive ``smpquery pkeys`` failures after which the rest of the round's ports are not asked (the tool missing
#: or the fabric unreachable: else each of up to 65,536 commands would wait its full timeout).
PKEY_FAILURE_LIMIT = 32
#: The SA query listing the SM-capable ports (CapabilityMask IsSM) and their IsSMdisabled counterparts.
SAQUERY_SM = ["saquery", "-s"]
#: Most SMs asked by LID in one read (no subnet runs more than a few).
MAX_SMS = 64
_END_PORT_LID = re.compile(r"^\s*EndPortLid\.+(\d{1,6})\s*$")
#: Warnings of one read kept in the sweep (the rest counted in one more).
_MAX_WARNINGS = 50


def _last_key(fabric_id: int) -> str:
    return f"ibweb:telemetry:{fabric_id}:validation_at"


def due(config, now: float) -> bool:
    """Whether the validation reads of ``config`` (a :class:`~.models.CollectorConfig`) are due at ``now``: never
    for a push collector or ``validation_every`` 0; else the first time, then once per ``validation_every`` sweep
    intervals (half an interval early is on time: sweeps start on a cadence, not to the millisecond)."""
    return _due_after(config, cache.get(_last_key(config.fabric_id)), now)


def _due_after(config, last, now: float) -> bool:
    if config.source == CollectorSource.PUSH or not config.validation_every:
        return False
    return last is None or now - float(last) >= (config.validation_every - 0.5) * config.interval_s


def pkey_ports(fabric: Fabric) -> np.ndarray:
    """``[n, 2]`` (LID, port) of both ends of every switch-to-CA cable of ``fabric``, unique, in LID order."""
    a_slot = fabric.port_offset[fabric.a_node] + fabric.a_port - 1
    b_slot = fabric.port_offset[fabric.b_node] + fabric.b_port - 1
    mixed = (fabric.kind[fabric.a_node] == KIND_SWITCH) != (fabric.kind[fabric.b_node] == KIND_SWITCH)
    lid = np.r_[fabric.port_lid[a_slot[mixed]], fabric.port_lid[b_slot[mixed]]].astype(np.int64)
    port = np.r_[fabric.a_port[mixed], fabric.b_port[mixed]].astype(np.int64)
    known = lid > 0
    keys = np.unique(lid[known] * 256 + port[known])
    return np.stack([keys // 256, keys % 256], axis=1)


def pkeys_command(lid: int, port: int) -> list[str]:
    """The P_Key table read of one port."""
    return ["smpquery", "pkeys", str(lid), str(port)]


def _warn(warnings: list[dict], text: str, reason: str) -> None:
    warnings.append({"line": None, "text": text[:200], "reason": reason[:300]})


def sm_lids(text: str, source: str = "saquery -s") -> list[int]:
    """The LIDs of the SM ports ``saquery -s`` lists under ``IsSM ports`` (not those under ``IsSMdisabled
    ports``), unique, in order; raises :class:`~fabric_engine.errors.FormatError` naming ``source:line`` when
    it is not that output."""
    lids: list[int] = []
    section = None
    for no, line in enumerate(text.splitlines(), 1):  # a few lines per SM port
        head = line.strip()
        if head in ("IsSM ports", "IsSMdisabled ports"):
            section = head
        elif (m := _END_PORT_LID.match(line)) is not None:
            if section is None:
                raise FormatError(source, no, "a PortInfoRecord before 'IsSM ports'")
            if section == "IsSM ports" and int(m[1]) not in lids:
                lids.append(int(m[1]))
    if section is None:
        raise FormatError(source, None, "no 'IsSM ports' line: not the output of 'saquery -s'")
    return lids


def _sms(run: CommandRunner, warnings: list[dict]) -> tuple[list, bool]:
    """The master (``sminfo``) and every other SM ``saquery -s`` names (``sminfo <lid>``); whether any was read."""
    sms: list = []
    try:
        sms.extend(read_sminfo(run.run(["sminfo"]).text, "sminfo").sms)
    except (CollectorError, FabricEngineError) as exc:
        _warn(warnings, "sminfo", f"not read: {exc}")
    try:
        lids = sm_lids(run.run(SAQUERY_SM).text)
    except (CollectorError, FabricEngineError) as exc:
        _warn(warnings, " ".join(SAQUERY_SM), f"standby SMs not read: {exc}")
        lids = []
    known = {sm.lid for sm in sms}
    for lid in [x for x in lids if x not in known][:MAX_SMS]:  # the other SM ports (a few)
        cmd = ["sminfo", str(lid)]
        try:
            sms.extend(read_sminfo(run.run(cmd).text, " ".join(cmd)).sms)
        except (CollectorError, FabricEngineError) as exc:
            _warn(warnings, " ".join(cmd), f"not read: {exc}")
    return sms, bool(sms)


def pkey_shards(ports: np.ndarray, size: int | None = None) -> list[list[list[int]]]:
    """``ports`` (``[n, 2]`` LID, port: :func:`pkey_ports`) split into shards of ``size`` ports (default
    :data:`PKEY_SHARD_PORTS`), in order, as JSON (``[[lid, port], ...]`` each): one Celery task each."""
    size = max(1, int(PKEY_SHARD_PORTS if size is None else size))
    rows = np.asarray(ports, np.int64).reshape(-1, 2).tolist()
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def _table_json(t: PKeyTable) -> list:
    return [t.lid, t.guid, t.port, list(t.keys), t.capacity, t.line]


def _table(row: list) -> PKeyTable:
    lid, guid, port, keys, capacity, line = row
    return PKeyTable(lid, guid, port, tuple(keys), capacity, line)


def read_pkey_shard(run: CommandRunner, ports: list[list[int]], shard: int = 0) -> dict:
    """``smpquery pkeys`` of each port of ``ports`` (``[[lid, port], ...]``), :data:`PKEY_WORKERS` at a time; after
    :data:`PKEY_FAILURE_LIMIT` consecutive failures the shard's other ports are not asked. The result (JSON, a
    Celery task's): ``tables`` (``[lid, guid, port, [keys], capacity]``), ``read`` (ports read), ``ports``,
    ``skipped`` (not asked), ``limit``, ``warnings`` (one per failed port, at most ``_MAX_WARNINGS``) and
    ``more_warnings`` (those left off)."""
    limit = PKEY_FAILURE_LIMIT
    lock, failed_in_a_row, stopped = threading.Lock(), [0], threading.Event()

    def one(lid_port: list[int]):
        cmd = pkeys_command(*lid_port)
        shown = " ".join(cmd)
        if stopped.is_set():
            return shown, (), None, False
        try:
            got = run.run(cmd)
            tables = read_pkeys(f"# {shown}\n{got.text}", shown).tables
        except (CollectorError, FabricEngineError) as exc:
            with lock:
                failed_in_a_row[0] += 1
                if failed_in_a_row[0] >= limit:
                    stopped.set()
            return shown, (), str(exc), True
        with lock:
            failed_in_a_row[0] = 0
        return shown, tables, None, True

    out: list[list] = []
    warnings: list[dict] = []
    read = skipped = more = 0
    with ThreadPoolExecutor(max_workers=max(1, min(PKEY_WORKERS, len(ports)))) as pool:
        for shown, got, error, asked in pool.map(one, ports):  # one command per port, in port order
            if not asked:
                skipped += 1
            elif error is not None:
                if len(warnings) < _MAX_WARNINGS:
                    _warn(warnings, shown, f"not read: {error}")
                else:
                    more += 1
            else:
                out.extend(_table_json(t) for t in got)
                read += 1
    return {"shard": shard, "tables": out, "read": read, "ports": len(ports), "skipped": skipped, "limit": limit,
            "warnings": warnings, "more_warnings": more}


def merge_pkey_shards(results: list[dict], total: int, out: DeviceReadings, warnings: list[dict]) -> bool:
    """Add the shards' tables (:func:`read_pkey_shard` results) to ``out`` and their warnings to ``warnings``: one
    warning first when any shard stopped on consecutive failures (how many shards, how many of the ``total``
    ports not asked), then each shard's in shard order. Whether every one of the ``total`` ports was read (the
    tables then replace the stored ones; else they merge, a port not read keeping its last table)."""
    results = sorted(results, key=lambda r: r["shard"])
    read = sum(r["read"] for r in results)
    stops = [r for r in results if r["skipped"]]
    if stops:  # first among the P_Key warnings: never cut off by the sweep's cap on warnings
        limit = stops[0]["limit"]
        where = f" in {len(stops)} of {len(results)} shard(s)" if len(results) > 1 else ""
        _warn(warnings, " ".join(pkeys_command(0, 0)[:2]),
              f"stopped after {limit} consecutive failures of 'smpquery pkeys <lid> <port>' (PKEY_FAILURE_LIMIT)"
              f"{where}: {sum(r['skipped'] for r in stops)} of {total} port(s) not asked this round; their last "
              "tables are kept")
    more = 0
    for r in results:  # a few dozen shards
        warnings.extend(r["warnings"])
        out.pkeys.extend(map(_table, r["tables"]))
        more += r["more_warnings"]
    if more:
        warnings.append({"line": None, "text": "smpquery pkeys", "reason": f"{more} more failed port(s) not listed"})
    out.files.append({"file": "smpquery pkeys", "kind": "smpquery pkeys", "records": read})
    return read == total


def _from_commands(run: CommandRunner, fabric: Fabric, out: DeviceReadings, warnings: list[dict]) -> set[str]:
    read: set[str] = set()
    sms, any_sm = _sms(run, warnings)
    out.sms.extend(sms)
    if any_sm:
        read.add("sms")
    ports = pkey_ports(fabric)
    if merge_pkey_shards([read_pkey_shard(run, ports.tolist())], len(ports), out, warnings):
        read.add("pkeys")  # every port read: the tables replace the stored ones (ports gone drop out)
    # else the tables read merge (by LID, GUID and port): a port that did not answer keeps its last table
    return read


def read_sms(run: CommandRunner) -> dict:
    """The SM reads (:func:`_sms`) as a Celery task's JSON: ``sms`` (``SmInfo`` fields) and ``warnings``."""
    warnings: list[dict] = []
    sms, _ = _sms(run, warnings)
    return {"kind": "sms", "sms": [dataclasses.astuple(sm) for sm in sms], "warnings": warnings}


def isolated_ports(info: LinkInfo, t: float) -> list[IsolatedPort]:
    """The port lines of ``info`` whose physical state is ``Disabled``, as isolated ports seen at ``t`` (node GUID,
    port; ``source``: the line)."""
    rows = np.flatnonzero(info.phys == "Disabled")
    node = info.node[rows]
    return [IsolatedPort(g, p, t, n, f"{info.source}:{ln}") for g, p, n, ln in
            zip(info.node_guid[node].tolist(), info.port[rows].tolist(), info.node_name[node].tolist(),
                info.line[rows].tolist(), strict=True)]  # the disabled ports only


def enabled_ports(info: LinkInfo) -> tuple[np.ndarray, np.ndarray]:
    """The node GUIDs and port numbers of the port lines of ``info`` whose physical state is not ``Disabled`` (an
    isolation of theirs has ended)."""
    rows = np.flatnonzero(info.phys != "Disabled")
    return info.node_guid[info.node[rows]].astype(np.uint64), info.port[rows].astype(np.int64)


def _from_directory(root: Path, out: DeviceReadings, warnings: list[dict]) -> set[str]:
    read: set[str] = set()
    path = root / SMINFO_FILE
    if path.is_file():
        try:
            out.sms.extend(read_sminfo(path.read_bytes(), str(path)).sms)
            read.add("sms")
        except (OSError, FabricEngineError) as exc:
            _warn(warnings, str(path), f"not read: {exc}")
    files = sorted(root.glob(PKEYS_GLOB))
    for p in files:  # one per capture file
        try:
            out.pkeys.extend(read_pkeys(p.read_bytes(), str(p)).tables)
            read.add("pkeys")
        except (OSError, FabricEngineError) as exc:
            _warn(warnings, str(p), f"not read: {exc}")
    return read


def read_validation(config, linkinfo: str, warnings: list[dict]
                    ) -> tuple[DeviceReadings, set[str], tuple[np.ndarray, np.ndarray] | None]:
    """Read ``sminfo`` and the P_Key tables as ``config`` reaches the tools (``linkinfo``: the sweep's discovery,
    whose switch-to-CA cables are asked for); what was read, the lists it fills (``sms``, ``pkeys``) and the ports
    the discovery shows enabled (:func:`enabled_ports`; None: no discovery read)."""
    out = DeviceReadings()
    now = time.time()
    enabled = None
    try:
        info = parse_iblinkinfo(linkinfo)
    except FabricEngineError as exc:
        info = None
        if config.source != CollectorSource.DIRECTORY:
            _warn(warnings, "iblinkinfo", f"validation reads skipped: {exc}")
            return out, set(), None
    if info is not None:
        out.isolated.extend(isolated_ports(info, now))
        enabled = enabled_ports(info)
    if config.source == CollectorSource.DIRECTORY:
        read = _from_directory(Path(config.drop_dir), out, warnings)
    else:
        try:
            fabric = fabric_from_linkinfo(info)
        except FabricEngineError as exc:
            _warn(warnings, "iblinkinfo", f"validation reads skipped: {exc}")
            return out, set(), enabled
        run = CommandRunner(config.command_prefix, config.environment, config.timeout_s)
        read = _from_commands(run, fabric, out, warnings)
    out.read_at.update({name: now for name in read})
    return out, read, enabled


def claim(config, now: float) -> bool:
    """Whether the validation reads are due (:func:`due`) and this caller won them; if so they count as started at
    ``now``. Atomic across workers: the window opened by the last claim has one claim key, taken with
    ``cache.add`` (set only when absent), so of the workers that found the reads due only one starts them."""
    last = cache.get(_last_key(config.fabric_id))
    if not _due_after(config, last, now):
        return False
    window = "first" if last is None else repr(float(last))
    hold = max(3600.0, 2 * config.validation_every * config.interval_s)  # outlives the window
    if not cache.add(f"{_last_key(config.fabric_id)}:claimed:{window}", now, timeout=hold):
        return False  # another worker claimed this window
    cache.set(_last_key(config.fabric_id), now, timeout=None)
    return True


def _keep(config, got: DeviceReadings, read: set[str], enabled, warnings: list[dict]) -> list[dict]:
    """Write what a round read into the fabric's device readings (once); its warnings, capped."""
    if read or got.isolated or got.pkeys or got.sms or enabled is not None:
        device_readings.write(config.fabric_id, got, replace=tuple(sorted(read)), enabled=enabled)
    if len(warnings) > _MAX_WARNINGS:
        rest = len(warnings) - _MAX_WARNINGS
        warnings = [*warnings[:_MAX_WARNINGS], {"line": None, "text": "validation reads",
                                                "reason": f"{rest} more warning(s) not listed"}]
    return warnings


def run_validation(config, linkinfo: str) -> list[dict]:
    """Run the validation reads now and keep what they read in the fabric's device readings; the warnings."""
    warnings: list[dict] = []
    got, read, enabled = read_validation(config, linkinfo, warnings)
    return _keep(config, got, read, enabled, warnings)


# ------------------------------------------------------------------ sharded over Celery workers
def sharded(config) -> bool:
    """Whether the P_Key reads of ``config`` are split into shards run by Celery workers (:func:`plan_pkey_reads`,
    :func:`read_pkey_shard`, :func:`merge_validation`): workers (not eager) and a collector that runs the tools."""
    return not getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False) and config.source != CollectorSource.DIRECTORY


def plan_pkey_reads(linkinfo: str) -> list[list[list[int]]] | None:
    """The P_Key shards (:func:`pkey_shards`) of the discovery ``linkinfo``; None when no fabric can be built from
    it (:func:`run_validation` then says why, in one task)."""
    try:
        return pkey_shards(pkey_ports(fabric_from_linkinfo(parse_iblinkinfo(linkinfo))))
    except FabricEngineError:
        return None


def merge_validation(config, linkinfo: str, results: list[dict], total: int, started: float) -> list[dict]:
    """The one write of a sharded round: ``results`` (the SM reads' :func:`read_sms` and each shard's
    :func:`read_pkey_shard`, any order) over ``total`` ports, the isolated and enabled ports of ``linkinfo``, kept
    as :func:`run_validation` keeps one task's (same ``replace`` and ``enabled``); the warnings, capped."""
    warnings: list[dict] = []
    out = DeviceReadings()
    read: set[str] = set()
    info = parse_iblinkinfo(linkinfo)  # the discovery the shards were planned from
    out.isolated.extend(isolated_ports(info, started))
    enabled = enabled_ports(info)
    for r in results:  # the SM reads: one result
        if r.get("kind") == "sms":
            warnings.extend(r["warnings"])
            out.sms.extend(SmInfo(*row) for row in r["sms"])
            if r["sms"]:
                read.add("sms")
    if merge_pkey_shards([r for r in results if r.get("kind") != "sms"], total, out, warnings):
        read.add("pkeys")
    out.read_at.update({name: started for name in read})
    return _keep(config, out, read, enabled, warnings)


# ------------------------------------------------------------------ off the sweep
#: The embedded default's validation-reads thread (Celery eager): one round at a time, off the sweep.
_LANE = BackgroundLane("ibweb-validation-reads", log)


def _run_reads(config_pk: int, sweep_pk: int) -> None:
    from .tasks import validation_reads

    try:
        validation_reads(config_pk, sweep_pk)
    except Exception:  # a thread's failure is logged, never the sweep's
        log.exception("validation reads of collector %s (sweep %s) failed", config_pk, sweep_pk)


def start(config, sweep_pk: int) -> None:
    """Start the validation reads a sweep claimed (:func:`claim`) without waiting on them: the Celery task on a
    worker, or (Celery eager, the embedded default) on this process's validation thread (one at a time)."""
    if not getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        from .tasks import validation_reads

        validation_reads.delay(config.pk, sweep_pk)
        return
    _LANE.submit(_run_reads, config.pk, sweep_pk)


def wait_idle(timeout_s: float = 60.0) -> bool:
    """Wait until the validation thread has nothing left to run (tests, shutdown); whether it got there."""
    return _LANE.wait_idle(timeout_s)
