"""A trial sweep: what a collector that is not saved yet would find, with nothing stored.

:func:`trial_sweep` takes an unsaved :class:`~.models.CollectorConfig` and runs what a
sweep runs, bounded: one discovery (``iblinkinfo`` through the command prefix and
environment, or the drop directory's ``iblinkinfo.txt``), then one counter read of at
most :data:`MAX_TRIAL_SWITCHES` switches (``perfquery`` per switch, each command with the
configured timeout, all of them within :data:`TRIAL_BUDGET_S`; a drop directory's
``perfquery*.txt`` files are all read), then the LFT dump, if there is one, mapped onto
the discovery. It writes no row and no cache entry; the report is JSON.

Running a collector's commands from a request runs any program the prefix names on
the web server, with any environment (``LD_PRELOAD``): only who may configure a
collector in the admin may do it (:func:`may_try`).
"""

from __future__ import annotations

import time

import numpy as np

from fabric_engine.captured import capped
from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.routing import NO_PATH
from fabric_engine.telemetry import CounterSamples, LinkInfo, fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.topology import KIND_HOST, KIND_SWITCH, Fabric
from ibweb.access import view_of

from .choices import CollectorSource
from .collector import CollectorError, Output, perfquery_commands, read_drop_dir
from .lft_tracker import DumpNotReady, dead_entries, read_dump
from .models import CollectorConfig
from .sweeps import parse_shard, runner, switch_targets
from .transport import merge_results, parse_outputs

__all__ = ["trial_sweep", "may_try", "PERMISSIONS", "MAX_TRIAL_SWITCHES", "TRIAL_BUDGET_S", "MAX_TRIAL_DUMP_BYTES"]

#: Most switches whose counters a trial reads (through commands).
MAX_TRIAL_SWITCHES = 16
#: Seconds a trial's counter reads may take in all; switches not reached by then are reported as not read.
TRIAL_BUDGET_S = 60.0
#: Largest LFT dump a trial reads (a 662-switch subnet's is 303 MB; the engine reads any size).
MAX_TRIAL_DUMP_BYTES = 64 << 20
#: What configuring a collector needs besides the ``ALL`` level (the admin asks the same of collectors).
PERMISSIONS = ("fabrics.add_fabric", "telemetry.add_collectorconfig")
#: Most names listed of ports without counters and of switches without an LFT.
MAX_LISTED = 10


def may_try(user) -> bool:
    """Whether ``user`` may configure a collector, and so run its commands: every tenant seen, and
    :data:`PERMISSIONS` (the operator who may add a collector in the admin; superusers)."""
    return bool(user and user.is_authenticated and view_of(user).sees_all and user.has_perms(PERMISSIONS))


def trial_sweep(config: CollectorConfig, *, max_switches: int = MAX_TRIAL_SWITCHES, budget_s: float = TRIAL_BUDGET_S,
                routing_engine: str = "minhop") -> dict:
    """One bounded discovery, counter read and LFT dump read of ``config`` (not saved); nothing is stored.

    Returns ``{"ok", "source", "saved": false, "duration_s", "discovery", "counters", "lft", "errors",
    "warnings"}``: ``discovery`` counts switches, CAs and links (None when it failed); ``counters`` the
    switches and ports read (``switches_limit`` says how many switches a trial reads at most);
    ``lft`` whether the dump was found and, when read, its switches and entries; ``errors`` are
    ``{"stage", "message", "line", "target"}``; ``warnings`` the lines the readers skipped
    (``{"line", "text", "reason", "source"}``). ``routing_engine`` names what routes the fabric when
    there is no dump.

    >>> from ibweb.telemetry.models import CollectorConfig                      # doctest: +SKIP
    >>> trial_sweep(CollectorConfig(source="directory", drop_dir="/srv/ib"))["discovery"]["links"]  # doctest: +SKIP
    16
    """
    t0 = time.monotonic()
    errors: list[dict] = []
    warnings: list[dict] = []
    report = {"ok": False, "source": config.source, "saved": False, "discovery": None, "counters": None,
              "lft": None}
    if config.source == CollectorSource.PUSH:
        errors.append(_error("discovery", "a push collector reads nothing itself: its samples and iblinkinfo output "
                                          "arrive through the push API once the fabric is saved"))
        return _finish(report, errors, warnings, t0)
    info, fabric, outputs = _discover(config, errors, warnings)
    if info is not None:
        report["discovery"] = _discovery(info, fabric)
    if fabric is not None:
        if config.source == CollectorSource.DIRECTORY:
            report["counters"] = _read_files(info, outputs, errors, warnings)
        else:
            report["counters"] = _read_switches(config, info, max_switches, t0 + budget_s, errors, warnings)
    report["lft"] = _lft(config, fabric, routing_engine, errors)
    report["ok"] = fabric is not None and not errors
    return _finish(report, errors, warnings, t0)


def _error(stage: str, message: str, line: int | None = None, target: int | None = None) -> dict:
    return {"stage": stage, "message": message, "line": line, "target": target}


def _finish(report: dict, errors: list[dict], warnings: list[dict], t0: float) -> dict:
    return {**report, "errors": errors, "warnings": capped(warnings), "duration_s": round(time.monotonic() - t0, 3)}


def _discover(config: CollectorConfig, errors: list[dict],
              warnings: list[dict]) -> tuple[LinkInfo | None, Fabric | None, list[Output]]:
    """The discovery's port lines and fabric (either None when it failed), and a drop directory's counter files."""
    outputs: list[Output] = []
    try:
        if config.source == CollectorSource.DIRECTORY:
            linkinfo, outputs = read_drop_dir(config.drop_dir)
        else:
            linkinfo = runner(config).run(["iblinkinfo"])
        info = parse_iblinkinfo(linkinfo.text, linkinfo.source, warnings)
    except CollectorError as exc:
        errors.append(_error("discovery", str(exc)))
        return None, None, outputs
    except FormatError as exc:
        errors.append(_error("discovery", str(exc), exc.line))
        return None, None, outputs
    try:
        return info, fabric_from_linkinfo(info), outputs
    except FormatError as exc:
        errors.append(_error("discovery", str(exc), exc.line))
        return info, None, outputs


def _discovery(info: LinkInfo, fabric: Fabric | None) -> dict:
    """Counts of a discovery: nodes by kind, cables, port lines and those not up (down, polling or not cabled)."""
    kind = info.node_kind
    out = {"source": info.source, "switches": int((kind == KIND_SWITCH).sum()), "cas": int((kind == KIND_HOST).sum()),
           "ports_listed": len(info.node), "ports_not_up": int((~info.up).sum()), "links": None, "hosts": None}
    if fabric is not None:
        out.update(links=fabric.num_links, hosts=fabric.num_hosts)
    return out


def _switch_ports(info: LinkInfo, lids: np.ndarray | None = None) -> np.ndarray:
    """Port lines of cabled switch ports (of the switches with ``lids``, if given), int64 ``[P]``."""
    keep = info.up & (info.node_kind[info.node] == KIND_SWITCH)
    if lids is not None:
        keep &= np.isin(info.lid, lids)
    return np.flatnonzero(keep)


def _coverage(info: LinkInfo, rows: np.ndarray, samples: CounterSamples) -> dict:
    """Which of the discovery's port lines ``rows`` have counters in ``samples``, and how many samples are of
    ports the discovery does not list. Missing ports are named in LID and port order."""
    rows = rows[np.lexsort((info.port[rows], info.lid[rows]))]
    want = info.lid[rows].astype(np.int64) * 256 + info.port[rows]
    got = np.asarray(samples.lid, np.int64) * 256 + np.asarray(samples.port, np.int64)
    have = np.isin(want, got)
    missing = rows[~have][:MAX_LISTED]
    listed = info.lid.astype(np.int64) * 256 + info.port
    return {"ports_expected": len(rows), "ports_read": int(have.sum()),
            "ports_unknown": int((~np.isin(got, listed)).sum()),
            "ports_missing": [f"{info.node_name[info.node[i]]} port {int(info.port[i])}" for i in missing]}


def _read_switches(config: CollectorConfig, info: LinkInfo, most: int, deadline: float, errors: list[dict],
                   warnings: list[dict]) -> dict:
    """``perfquery`` of the discovery's first ``most`` switches (LID order), as a sweep's shard reads them."""
    targets = switch_targets(info)
    chosen = targets[:max(0, most)]
    run = runner(config)
    reads, failures = [], []
    for target in chosen:  # at most `most` switches, one command pair each
        if time.monotonic() > deadline:
            failures.append({"shard": 0, "target": target.lid,
                             "error": f"not read: the trial's {TRIAL_BUDGET_S:g} s were spent"})
            continue
        try:
            reads.append((target, [run.run(cmd) for cmd in perfquery_commands(target)]))
        except CollectorError as exc:
            failures.append({"shard": 0, "target": target.lid, "error": str(exc)})
    samples, failures = merge_results([parse_shard(0, reads, failures)], warnings)
    errors += [_error("counters", f["error"], target=f.get("target")) for f in failures]
    rows = _switch_ports(info, np.array([t.lid for t in chosen], dtype=np.int64))
    return {"switches_total": len(targets), "switches_limit": most, "switches_tried": len(chosen),
            "switches_read": len({int(t.lid) for t, _ in reads} - {f.get("target") for f in failures}),
            "commands": 2 * len(chosen), **_coverage(info, rows, samples)}


def _read_files(info: LinkInfo, outputs: list[Output], errors: list[dict], warnings: list[dict]) -> dict:
    """A drop directory's ``perfquery*.txt`` files, parsed as a sweep parses them."""
    out = {"files": len(outputs), "switches_total": len(switch_targets(info)), "switches_limit": None}
    try:
        samples = parse_outputs(((o.text, o.t, o.source) for o in outputs), warnings)
    except FabricEngineError as exc:
        errors.append(_error("counters", str(exc), getattr(exc, "line", None)))
        return {**out, "switches_read": 0, **_coverage(info, _switch_ports(info), CounterSamples.empty())}
    rows = _switch_ports(info)
    read = np.unique(np.asarray(samples.lid, np.int64))
    return {**out, "switches_read": int(np.isin(read, info.lid[rows]).sum()), **_coverage(info, rows, samples)}


def _lft(config: CollectorConfig, fabric: Fabric | None, engine: str, errors: list[dict]) -> dict:
    """Where the LFT dump is, whether it exists, and (when it maps onto the discovery) its tables and entries."""
    path = config.lfts_file()
    out = {"path": str(path) if path else None, "found": False, "read": False, "bytes": None}
    if path is None:
        return {**out, "note": f"none configured: the routing will be computed with {engine}"}
    try:
        size = path.stat().st_size
    except OSError as exc:
        return {**out, "note": f"not found ({exc.strerror or exc}): the routing will be computed with {engine} "
                               f"until it appears"}
    out.update(found=True, bytes=size)
    if fabric is None:
        return {**out, "note": "not read: there is no discovery to map it onto"}
    if size > MAX_TRIAL_DUMP_BYTES:
        return {**out, "note": f"not read in a trial (more than {MAX_TRIAL_DUMP_BYTES >> 20} MiB); the engine reads it"}
    try:
        routing, _ = read_dump(fabric, path)
    except DumpNotReady as exc:
        return {**out, "note": f"not read: {exc}"}
    except FormatError as exc:
        errors.append(_error("lft", str(exc), exc.line))
        return {**out, "note": "not a dump of the discovered fabric"}
    missing = list(routing.info.get("switches_missing", []))
    return {**out, "read": True, "switches": fabric.num_switches - len(missing), "switches_total": fabric.num_switches,
            "switches_missing": missing[:MAX_LISTED], "entries": int((routing.lft != NO_PATH).sum()),
            "unmapped_entries": int(routing.info.get("unmapped_entries", 0)), "dead_entries": dead_entries(routing)}
