"""``python -m fabric_engine health FILE... [--json]``: read link and device health outputs, print the summary.

Files may be any mix of the link health readers' outputs (:func:`fabric_engine.health.detect`; rows of one port
from several files are merged), the device readers' (:func:`fabric_engine.devices.detect`: ibswinfo, ibstat,
ibv_devinfo, ibdiagnet's device sections and ``ibdiagnet2.nodes_info``) and OpenSM logs, whose unlinked ports
count as links down (:mod:`fabric_engine.health.opensm_log`) and whose ``ERR`` entries are counted. An ibdiagnet
folder or archive gives both its link health and its database's device sections. With ``--interval SECONDS``
the link files are two counter captures (``perfquery -T`` before and after) and BER is computed from their
deltas; ``--speed``/``--width``/``--fec`` give what counters-only outputs do not say.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from .. import devices
from ..captured import capped
from ..cli import command
from ..errors import FabricEngineError, FormatError
from ..formats._input import read_bytes, to_text
from ..formats.ibdiagnet import is_ibdiagnet
from ..formats.ibdiagnet_archive import archive_bundle, folder_bundle, is_archive
from . import KINDS, MAX_HEALTH_BYTES, detect, ibdiagnet_bundle, opensm_log, read_text_as
from .grade import ber_from_deltas, summary
from .records import CATEGORIES, LANE_GBPS, HealthRecords, code, empty, merge
from .thresholds import load

# A link health section of a db_csv (a newline first: a literal, scanned fast; ibdiagnet_phy.ROW_SECTIONS).
_LINK_ROWS = re.compile(r"\nSTART_(?:PHY_DB16|CABLE_INFO|PM_INFO)[ \t]*\r?(?=\n|$)")


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="perfquery -T, mlxlink [--json], mlxcables, "
                                                            "ibdiagnet2.cables or .db_csv (or its folder or "
                                                            "archive), UFM telemetry CSV/JSON, ibswinfo, ibstat, "
                                                            "ibv_devinfo -v, ibdiagnet2.nodes_info or OpenSM log "
                                                            "output (gzip allowed)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--thresholds", help="site thresholds file (TOML, rows tried before the repository's)")
    p.add_argument("--interval", type=float, help="seconds between two counter captures (FILE before, FILE after): "
                                                   "BER from their deltas")
    p.add_argument("--speed", choices=tuple(LANE_GBPS), help="lane speed of ports whose output does not say it")
    p.add_argument("--width", type=int, choices=(1, 2, 4, 8, 12), help="lanes of ports whose output does not say")
    p.add_argument("--fec", choices=CATEGORIES["fec"][1:], help="active FEC of ports whose output does not say")


def _defaults(rec: HealthRecords, args: argparse.Namespace) -> None:
    if args.speed:
        unset = rec["speed"] == 0
        rec["speed"][unset] = code("speed", args.speed)
        rec["lane_gbps"][unset & np.isnan(rec["lane_gbps"])] = LANE_GBPS[args.speed]
    if args.width:
        rec["lanes"][rec["lanes"] <= 0] = args.width
    if args.fec:
        rec["fec"][rec["fec"] == 0] = code("fec", args.fec)


class _Memo:
    """A bundle whose members are read once (its db_csv serves the link and the device readers)."""

    def __init__(self, bundle) -> None:
        self.bundle, self.members, self._texts = bundle, bundle.members, {}

    def member_source(self, kind: str) -> str:
        return self.bundle.member_source(kind)

    def read(self, kind: str) -> str:
        if kind not in self._texts:
            self._texts[kind] = self.bundle.read(kind)
        return self._texts[kind]


def _read_bundle(path: str, data: bytes | None, warnings: list, readings: devices.DeviceReadings
                 ) -> tuple[str, HealthRecords | None]:
    """An ibdiagnet folder (``data`` None) or archive: its link health rows, its device sections into ``readings``."""
    kind = "ibdiagnet folder" if data is None else "ibdiagnet archive"
    bundle = _Memo(folder_bundle(Path(path), MAX_HEALTH_BYTES) if data is None
                   else archive_bundle(data, path, MAX_HEALTH_BYTES, is_ibdiagnet))
    rec, _ = ibdiagnet_bundle.read_bundle(bundle, warnings)
    found = False
    if "db_csv" in bundle.members:
        text = bundle.read("db_csv")
        if devices.ibdiagnet_db.looks_like(text):
            devices.read_text(text, bundle.member_source("db_csv"), readings)
            found = True
    if rec is None and not found:
        raise FormatError(path, None, "no link or device health in this ibdiagnet run: no ibdiagnet2.cables, and "
                                      "no PHY_DB16, CABLE_INFO, PM_INFO or device section in its ibdiagnet2.db_csv")
    return kind, rec


def _read_one(path: str, warnings: list, readings: devices.DeviceReadings,
              logs: list[opensm_log.LogEvidence]) -> tuple[str, HealthRecords | None]:
    """One FILE: (its kind, its link health rows or ``None``); device records go to ``readings``, log evidence to
    ``logs``."""
    if Path(path).is_dir():
        return _read_bundle(path, None, warnings, readings)
    data = read_bytes(path, path)
    if is_archive(data):
        return _read_bundle(path, data, warnings, readings)
    text = to_text(data, path, MAX_HEALTH_BYTES)
    del data
    link_kind = detect(text)
    device_kind = devices.detect(text)
    if device_kind == "OpenSM log" and opensm_log.looks_like(text):
        found: list[dict] = []
        logs.append(opensm_log.read(text, path, found))
        warnings.extend({**w, "source": path} for w in found)
        devices.read_text(text, path, readings)
        return "OpenSM log", None
    rec = None
    link_rows = link_kind == "ibdiagnet2.db_csv" and (_LINK_ROWS.search(text) or _LINK_ROWS.match("\n" + text[:64]))
    if link_kind is not None and (link_kind != "ibdiagnet2.db_csv" or link_rows or device_kind is None):
        found = []
        link_kind, rec = read_text_as(text, path, found)
        warnings.extend({**w, "source": path} for w in found)
    if device_kind is not None:
        kind = devices.read_text(text, path, readings)
        return (link_kind if rec is not None else kind), rec
    if rec is None:
        raise FormatError(path, None, "not a health output this command knows (" + ", ".join(
            (*KINDS, *devices.KINDS)) + ")")
    return link_kind, rec


def _log_links_down(logs: list[opensm_log.LogEvidence], rec: HealthRecords) -> tuple[int, int]:
    """(port ends down at the end of the logs and not already down in ``rec``, down events in the logs)."""
    if not logs:
        return 0, 0
    t = np.concatenate([e.t for e in logs])
    guid = np.concatenate([e.guid for e in logs]).astype(np.uint64)
    port = np.concatenate([e.port for e in logs]).astype(np.int64)
    up = np.concatenate([e.up for e in logs])
    if not t.size:
        return 0, 0
    order = np.lexsort((t, port, guid))
    g, p, u = guid[order], port[order], up[order]
    last = np.r_[(g[1:] != g[:-1]) | (p[1:] != p[:-1]), True]  # the newest event of each port
    down = last & (u == 0)
    pair = np.dtype([("guid", np.uint64), ("port", np.int64)])
    log_down = np.empty(int(down.sum()), pair)
    log_down["guid"], log_down["port"] = g[down], p[down]
    seen = (rec.guid != 0) & (rec["up"] == 0)  # down in a link health file already: counted there
    rec_down = np.empty(int(seen.sum()), pair)
    rec_down["guid"], rec_down["port"] = rec.guid[seen], rec.port[seen]
    return int((~np.isin(log_down, rec_down)).sum()), int((up == 0).sum())


@command("health", help="grade link health (BER, optical modules) and device health (fans, PSUs, firmware) from "
                        "perfquery -T, mlxlink, mlxcables, ibdiagnet, UFM telemetry, ibswinfo, ibstat, ibv_devinfo "
                        "or OpenSM log output", arguments=_arguments)
def health_command(args: argparse.Namespace) -> int:
    th = load(args.thresholds)
    warnings: list[dict] = []
    readings = devices.DeviceReadings()
    logs: list[opensm_log.LogEvidence] = []
    parts, kinds, counts = [], [], []
    for path in args.files:
        before = devices.readings.records(readings)
        kind, rec = _read_one(path, warnings, readings, logs)
        kinds.append(kind)
        parts.append(rec)
        counts.append(devices.readings.records(readings) - before)
    link = [p for p in parts if p is not None]
    if args.interval is not None:
        if len(link) != 2 or args.interval <= 0:
            raise FabricEngineError("--interval needs two captures (before, after) and a positive number of seconds")
        before, after = link
        _defaults(before, args)
        _defaults(after, args)
        rec = ber_from_deltas(before, after, args.interval)
    else:
        rec = merge(link) if link else empty(0)
        _defaults(rec, args)
    log_down, log_events = _log_links_down(logs, rec)
    seen: set[tuple] = set()  # an OpenSM log's prompt is skipped by both of its readers: said once
    said = [w for w in warnings + readings.skipped
            if (key := (w.get("source"), w["line"], w["reason"])) not in seen and not seen.add(key)]
    s = summary(rec, th, capped(said))
    s["links_down"] += log_down
    s["log_link_downs"] = log_events
    s.update(devices.summary(readings))
    s["devices"] = {"switches": len(readings.vitals), "hca_ports": len(readings.hca_ports),
                    "nodes_info": len(readings.nodes_info), "fec_modes": sum(map(len, readings.fec_modes)),
                    "ibdiagnet_warnings": sum(w.severity == "warning" for w in readings.warnings),
                    "ibdiagnet_errors": sum(w.severity == "error" for w in readings.warnings),
                    "opensm_errors": len(readings.opensm_errors),
                    "errors": [{"device": v.name, "error": e, "source": v.source} for v in readings.vitals
                               for e in v.errors][:200]}
    s["files"] = [{"file": f, "kind": k, "ports": len(p) if p is not None else 0, "records": n}
                  for f, k, p, n in zip(args.files, kinds, parts, counts, strict=True)]
    if args.json:
        print(json.dumps(s, indent=2))
        return 0
    _print(s)
    return 0


def _print(s: dict) -> None:
    for f in s["files"]:
        print(f"{f['file']}: {f['kind']}, {f['ports']} ports" + (f", {f['records']} device records"
                                                                 if f["records"] else ""))
    b = s["ber"]
    print(f"ports:            {s['ports']}")
    print(f"BER:              {b['normal']} normal, {b['warning']} warning, {b['error']} error, "
          f"{b['unknown']} unknown (not measured, or measured over less than the table's minimum window)")
    if s["window_s"]:
        print(f"window:           {s['window_s']['min']:,.0f} s to {s['window_s']['max']:,.0f} s")
    print(f"modules:          {s['modules']} ({s['module_alarms']} in alarm, {s['module_warnings']} in warning)")
    print(f"links down:       {s['links_down']}" + (f" ({s['log_link_downs']} port downs in OpenSM logs)"
                                                    if s["log_link_downs"] else ""))
    print(f"switch fans:      {s['switch_fans']} ({s['fan_failures']} failed)")
    print(f"PSUs:             {s['psus']} ({s['psu_failures']} failed)")
    for kind, versions in s["firmware"].items():
        print(f"firmware {kind}: " + ", ".join(f"{v} x{n}" for v, n in versions.items()))
    d = s["devices"]
    if d["ibdiagnet_warnings"] or d["ibdiagnet_errors"] or d["opensm_errors"]:
        print(f"findings:         {d['ibdiagnet_errors']} ibdiagnet errors, {d['ibdiagnet_warnings']} ibdiagnet "
              f"warnings, {d['opensm_errors']} OpenSM ERR entries")
    for e in d["errors"]:
        print(f"  device error: {e['device']}: {e['error']}")
    for w in s["worst"]:
        print(f"  {w['grade']:<8} {w['node']} port {w['port']}: raw {w['raw_ber']}, effective {w['effective_ber']}, "
              f"symbol {w['symbol_ber']} over {w['window_s']} s")
    for w in s["warnings"]:
        print(f"warning: {w.get('source', '')}:{w['line']}: {w['reason']}" + (f" ({w['text']})" if w["text"] else ""))
