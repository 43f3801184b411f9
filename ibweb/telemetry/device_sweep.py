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
  :data:`PKEY_FAILURE_LIMIT` consecutive failures (the tool missing, the fabric unreachable) the round's other
  ports are not asked, with one warning;
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
from fabric_engine.validation.pkeys import read_pkeys
from fabric_engine.validation.sminfo import read_sminfo
from ibweb.db.background import BackgroundLane
from ibweb.runtime import device_readings

from .choices import CollectorSource
from .collector import CollectorError, CommandRunner

__all__ = ["due", "claim", "pkey_ports", "pkeys_command", "read_validation", "run_validation", "SMINFO_FILE",
           "PKEYS_GLOB", "PKEY_WORKERS", "PKEY_FAILURE_LIMIT", "isolated_ports", "enabled_ports",
           "sm_lids", "SAQUERY_SM", "start", "wait_idle"]

log = logging.getLogger("ibweb.telemetry")

SMINFO_FILE = "sminfo.txt"
PKEYS_GLOB = "pkeys*.txt"
#: ``smpquery pkeys`` commands run at once.
PKEY_WORKERS = 8
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


def _from_commands(run: CommandRunner, fabric: Fabric, out: DeviceReadings, warnings: list[dict]) -> set[str]:
    read: set[str] = set()
    sms, any_sm = _sms(run, warnings)
    out.sms.extend(sms)
    if any_sm:
        read.add("sms")
    ports = pkey_ports(fabric)
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

    tables = skipped = 0
    first = len(warnings)
    with ThreadPoolExecutor(max_workers=max(1, min(PKEY_WORKERS, len(ports)))) as pool:
        for shown, got, error, asked in pool.map(one, ports.tolist()):  # one command per port, in port order
            if not asked:
                skipped += 1
            elif error is not None:
                _warn(warnings, shown, f"not read: {error}")
            else:
                out.pkeys.extend(got)
                tables += 1
    if skipped:  # first among the P_Key warnings: never cut off by the sweep's cap on warnings
        _warn(stop := [], " ".join(pkeys_command(0, 0)[:2]),
              f"stopped after {limit} consecutive failures of 'smpquery pkeys <lid> <port>' (PKEY_FAILURE_LIMIT): "
              f"{skipped} of {len(ports)} port(s) not asked this round; their last tables are kept")
        warnings[first:first] = stop
    if tables == len(ports):  # every port read: the tables replace the stored ones (ports gone drop out)
        read.add("pkeys")
    # else the tables read merge (by LID, GUID and port): a port that did not answer keeps its last table
    out.files.append({"file": "smpquery pkeys", "kind": "smpquery pkeys", "records": tables})
    return read


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


def run_validation(config, linkinfo: str) -> list[dict]:
    """Run the validation reads now and keep what they read in the fabric's device readings; the warnings."""
    warnings: list[dict] = []
    got, read, enabled = read_validation(config, linkinfo, warnings)
    if read or got.isolated or got.pkeys or got.sms or enabled is not None:
        device_readings.write(config.fabric_id, got, replace=tuple(sorted(read)), enabled=enabled)
    if len(warnings) > _MAX_WARNINGS:
        rest = len(warnings) - _MAX_WARNINGS
        warnings = [*warnings[:_MAX_WARNINGS], {"line": None, "text": "validation reads",
                                                "reason": f"{rest} more warning(s) not listed"}]
    return warnings


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
