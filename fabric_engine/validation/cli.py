"""``python -m fabric_engine validate TOPOLOGY [...]``: the fabric validation report of a discovered fabric.

``--sminfo`` (``sminfo`` lines), ``--pkeys`` (``smpquery pkeys`` captures), ``--devices`` (``ibswinfo`` output
or ibdiagnet's ``ibdiagnet2.db_csv``), ``--plan`` (a cabling plan, CSV or a design topology), ``--health`` (link
health outputs, graded as ``health`` does: the ASIC check and ``--advise``). Prints the findings as text, or
``--json`` / ``--csv``; ``--problems-only`` leaves out what passed and the notes. Exit code 1 when a finding is
an error, else 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..cli import command
from ..cli_input import add_input_arguments, read_fabric
from ..errors import FabricEngineError
from .findings import ERROR
from .isolation import advise
from .pkeys import read_pkeys
from .ports import port_grades
from .report import validate
from .sminfo import read_sminfo


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("topology", help="the discovered fabric (ibnetdiscover, ibsim net, JSON, ibdiagnet...)")
    add_input_arguments(p)
    p.add_argument("--sminfo", action="append", default=[], metavar="FILE", help="sminfo output (one line per SM)")
    p.add_argument("--pkeys", nargs="+", default=[], metavar="FILE", help="smpquery pkeys captures")
    p.add_argument("--devices", nargs="+", default=[], metavar="FILE", help="ibswinfo output or ibdiagnet2.db_csv")
    p.add_argument("--plan", metavar="FILE", help="cabling plan (CSV or a design topology)")
    p.add_argument("--health", nargs="+", default=[], metavar="FILE", help="link health outputs (as 'health' reads)")
    p.add_argument("--advise", action="store_true", help="add the isolation advice (never executed)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report as JSON")
    out.add_argument("--csv", action="store_true", help="print the findings as CSV")
    p.add_argument("--problems-only", action="store_true", help="only what failed")


def _text(path: str) -> str:
    from ..formats._input import read_text

    return read_text(Path(path), max_bytes=128 << 20)


def _devices(paths: list[str]) -> list:
    from ..devices import ibdiagnet_db, ibswinfo

    out = []
    for path in paths:  # one per file
        text = _text(path)
        if ibswinfo.looks_like(text):
            out += ibswinfo.read(text, path)
        elif ibdiagnet_db.looks_like(text):
            out += [v for vs in ibdiagnet_db.read(text, path).values() for v in vs if hasattr(v, "fans")]
        else:
            raise FabricEngineError(f"{path}: neither ibswinfo output nor an ibdiagnet2.db_csv")
    return out


def _grades(fabric, paths: list[str]):
    from ..health import read_file
    from ..health.grade import grade_ber
    from ..health.records import merge
    from ..health.thresholds import load

    parts = [read_file(p, [])[1] for p in paths]
    rec = merge(parts)
    return port_grades(fabric, rec.guid, rec.port, grade_ber(rec, load())["grade"])


@command("validate", help="fabric validation report: slow links, duplicate IDs, SM mastership, P_Key mismatches, "
                          "firmware, device vitals, suspected ASICs", arguments=_arguments)
def validate_command(args: argparse.Namespace) -> int:
    fabric = read_fabric(args.topology, args)
    sms = [sm for p in args.sminfo for sm in read_sminfo(_text(p), p).sms]
    tables = [t for p in args.pkeys for t in read_pkeys(_text(p), p).tables]
    devices = _devices(args.devices)
    plan = None
    if args.plan:
        from ..twin.plan import read_plan

        plan = read_plan(_text(args.plan), args.plan)
    grades = _grades(fabric, args.health) if args.health else None
    report = validate(fabric, plan=plan, sminfo=sms, pkeys=tables, devices=devices, port_grade=grades)
    if args.problems_only:
        report = report.problems_only()
    failed = any(f.severity == ERROR for f in report.findings)
    iso = advise(fabric, grades) if (args.advise and grades is not None) else None
    if args.csv:
        sys.stdout.write(report.to_csv())
    elif args.json:
        out = report.as_dict()
        if iso is not None:
            out["isolation"] = iso.as_dict()
        print(json.dumps(out, indent=2))
    else:
        for name, value in report.kpis.items():
            print(f"{name}: {'n/a' if value is None else value.get('share')}")
        for name, c in report.checks.items():
            print(f"check {name}: {c['status']}" + (f" ({c['why']})" if c.get("why") else "")
                  + (f", {c['findings']} finding(s)" if c["findings"] else ""))
        for f in report.findings:
            print(f"{f.severity.upper():7} {f.check}: {f.message}")
        if iso is not None:
            print(f"isolation advice ({len(iso.advised)} of {iso.candidates} candidates, cap {iso.cap}; "
                  "nothing executed):")
            for a in iso.advised:
                print(f"  {a.rank}. {a.link} [{a.grade}] {a.isolate}; {a.note}")
    return 1 if failed else 0
