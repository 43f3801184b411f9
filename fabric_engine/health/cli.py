"""``python -m fabric_engine health FILE... [--json]``: read link health outputs, print the graded summary.

Files may be any mix of the readers' outputs (:func:`fabric_engine.health.detect`); rows of one port from
several files are merged. With ``--interval SECONDS`` the files are two counter captures (``perfquery -T``
before and after) and BER is computed from their deltas; ``--speed``/``--width``/``--fec`` give what
counters-only outputs do not say.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..captured import capped
from ..cli import command
from ..errors import FabricEngineError
from . import read_file
from .grade import ber_from_deltas, summary
from .records import CATEGORIES, LANE_GBPS, HealthRecords, code, merge
from .thresholds import load


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="perfquery -T, mlxlink [--json], mlxcables, "
                                                            "ibdiagnet2.cables or .db_csv, or UFM telemetry "
                                                            "CSV/JSON output (gzip allowed)")
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


@command("health", help="grade link health (BER, optical modules) from perfquery -T, mlxlink, mlxcables, "
                        "ibdiagnet2.cables or .db_csv, or UFM telemetry output", arguments=_arguments)
def health_command(args: argparse.Namespace) -> int:
    th = load(args.thresholds)
    warnings: list[dict] = []
    parts, kinds = [], []
    for path in args.files:
        file_warnings: list[dict] = []
        kind, rec = read_file(path, file_warnings)
        warnings.extend({**w, "source": path} for w in file_warnings)
        parts.append(rec)
        kinds.append(kind)
    if args.interval is not None:
        if len(parts) != 2 or args.interval <= 0:
            raise FabricEngineError("--interval needs two captures (before, after) and a positive number of seconds")
        before, after = parts
        _defaults(before, args)
        _defaults(after, args)
        rec = ber_from_deltas(before, after, args.interval)
    else:
        rec = merge(parts)
        _defaults(rec, args)
    s = summary(rec, th, capped(warnings))
    s["files"] = [{"file": f, "kind": k, "ports": len(p)} for f, k, p in zip(args.files, kinds, parts, strict=True)]
    if args.json:
        print(json.dumps(s, indent=2))
        return 0
    for f in s["files"]:
        print(f"{f['file']}: {f['kind']}, {f['ports']} ports")
    b = s["ber"]
    print(f"ports:            {s['ports']}")
    print(f"BER:              {b['normal']} normal, {b['warning']} warning, {b['error']} error, "
          f"{b['unknown']} unknown (not measured, or measured over less than the table's minimum window)")
    if s["window_s"]:
        print(f"window:           {s['window_s']['min']:,.0f} s to {s['window_s']['max']:,.0f} s")
    print(f"modules:          {s['modules']} ({s['module_alarms']} in alarm, {s['module_warnings']} in warning)")
    print(f"links down:       {s['links_down']}")
    for w in s["worst"]:
        print(f"  {w['grade']:<8} {w['node']} port {w['port']}: raw {w['raw_ber']}, effective {w['effective_ber']}, "
              f"symbol {w['symbol_ber']} over {w['window_s']} s")
    for w in s["warnings"]:
        print(f"warning: {w.get('source', '')}:{w['line']}: {w['reason']}" + (f" ({w['text']})" if w["text"] else ""))
    return 0
