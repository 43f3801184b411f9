"""The fabric validation report at 32,768 GPUs (issue 38): every check, the KPIs, JSON, and the isolation advice.

The rail-optimized 3-level NDR fabric of ``bench_scale`` (4,096 nodes x 8 rails: 32,768 HCAs), 0.2 % of its
cables trained down (1x or HDR), its own design as the cabling plan; a P_Key table for every CA port and the switch
port it is cabled to (default partition plus one tenant partition a node, 40 switch ports missing their CA's key),
two SMs, vitals of every switch (fans, PSUs, ASIC and module temperatures, four firmware versions) and a link-health
grade per port (1 % warning, 0.2 % error, one switch with most ports bad). Times :func:`validate` with the JSON
rendering and :func:`advise` together (median of ``--repeat``) against 2 s, and reads the P_Key captures' text
once (reported, not a target).

The web's path is timed too, against the same 2 s: :func:`ibweb.live.validation.build.build_report` (the checks,
each finding placed on the map, the advice) on the same inputs as the web hands it (a ``DeviceReadings``), then
what a viewer below ``ALL`` reads (:func:`ibweb.live.validation.shown.shown_report`: every host hidden, only the
default P_Key shown) and its JSON. Run: ``.venv/bin/python tests/bench/bench_validation.py [--nodes 4096]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from fabric_engine.devices.vitals import DeviceReadings, DeviceVitals, Fan, Psu, Temperature  # noqa: E402
from fabric_engine.scenario import build_fabric, loaded_rail_spec  # noqa: E402
from fabric_engine.topology import KIND_HOST, SPEEDS, Fabric  # noqa: E402
from fabric_engine.twin.plan import plan_from_fabric  # noqa: E402
from fabric_engine.validation import advise, read_pkeys, validate  # noqa: E402
from fabric_engine.validation.pkeys import PKeyTable  # noqa: E402
from fabric_engine.validation.sminfo import SmInfo  # noqa: E402
from ibweb.access import Redaction  # noqa: E402
from ibweb.live.validation.build import build_report  # noqa: E402
from ibweb.live.validation.shown import shown_report  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def degraded(f: Fabric, rng: np.random.Generator) -> Fabric:
    """``f`` with 0.2 % of its cables at 1x or at HDR."""
    width, speed = f.width.copy(), f.speed.copy()
    bad = rng.choice(f.num_links, max(1, f.num_links // 500), replace=False)
    width[bad[::2]] = 1
    speed[bad[1::2]] = SPEEDS.index("HDR")
    return Fabric.build(f.name, kind=f.kind, node_name=f.node_name, guid=f.guid, lid=f.lid, nports=f.nports,
                        role=f.role, tier=f.tier, group=f.group, port_lid=f.port_lid, port_guid=f.port_guid,
                        a_node=f.a_node, a_port=f.a_port, b_node=f.b_node, b_port=f.b_port, width=width,
                        speed=speed, length_m=f.length_m)


def pkey_tables(f: Fabric, rng: np.random.Generator) -> list[PKeyTable]:
    """Both ends of every switch-CA cable: the default partition and a partition per node; 40 switch ends lack it."""
    ca_end = np.where(f.kind[f.a_node] == KIND_HOST, 0, np.where(f.kind[f.b_node] == KIND_HOST, 1, -1))
    cables = np.flatnonzero(ca_end >= 0)
    lacking = set(rng.choice(cables, 40, replace=False).tolist())
    out = []
    for c in cables.tolist():  # building the input, not the measured code
        ends = [(int(f.a_node[c]), int(f.a_port[c])), (int(f.b_node[c]), int(f.b_port[c]))]
        ca, sw = ends[ca_end[c]], ends[1 - ca_end[c]]
        key = 0x8000 | (1 + ca[0] % 4000)
        ca_lid = int(f.port_lid[f.port_offset[ca[0]] + ca[1] - 1])
        out.append(PKeyTable(ca_lid, None, ca[1], (0x7FFF, key), 128))
        out.append(PKeyTable(int(f.lid[sw[0]]), None, sw[1], (0xFFFF,) if c in lacking else (0xFFFF, key), 32))
    return out


def vitals(f: Fabric, rng: np.random.Generator) -> list[DeviceVitals]:
    fw = ["31.2012.1068", "31.2012.1068", "31.2012.1068", "31.2010.4100"]
    out = []
    for i, s in enumerate(f.switches.tolist()):  # one device per switch
        fans = tuple(Fan(str(k), 0 if (i == 7 and k == 2) else int(rng.integers(6000, 9000)), True) for k in range(6))
        psus = (Psu("PSU1", True, True, 380.0), Psu("PSU2", i != 11, i != 11 or None, 0.0 if i == 11 else 370.0))
        temps = (Temperature("ASIC", float(rng.normal(60, 8)), 80.0, 105.0, 120.0),) + tuple(
            Temperature(f"module {m}", float(rng.normal(50, 8)), None, 70.0, 80.0) for m in range(1, 5))
        firmware = fw[(i // 50) % 4] if i % 50 == 0 else fw[0]
        out.append(DeviceVitals(int(f.guid[s]), str(f.node_name[s]), f"ibswinfo-{i}.txt", "MQM9700-NS2F",
                                f"MT{i:06d}", "MT_0000000838", firmware, None, 86400, fans, psus, temps, ()))
    return out


def grades(f: Fabric, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    P = int(f.nports.sum())
    g = rng.choice(np.array([0, 1, 2], np.int8), P, p=[0.988, 0.01, 0.002])
    score = 10.0 ** rng.uniform(-15, -8, P)
    s = int(f.switches[3])
    g[f.port_offset[s]:f.port_offset[s] + f.nports[s]] = 2
    return g, score


def capture(t: PKeyTable) -> str:
    """The text ``smpquery pkeys`` prints for ``t`` (``smpquery.c``'s rows of eight), after its command line."""
    entries = list(t.keys) + [0] * (t.capacity - len(t.keys))
    rows = "".join(f"{r:4d}: " + " ".join(f"0x{k:04x}" for k in entries[r:r + 8]) + "\n"
                   for r in range(0, t.capacity, 8))
    return f"$ smpquery pkeys {t.lid} {t.port}\n{rows}{t.capacity} pkeys capacity for this port\n"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=4096, help="GPU nodes of 8 rails (default 4096: 32,768 GPUs)")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    print(machine())
    print(deployed_allocator())
    rng = np.random.default_rng(38)
    t0 = time.perf_counter()
    design = build_fabric(loaded_rail_spec(a.nodes * 8)["topology"])
    f = degraded(design, rng)
    plan = plan_from_fabric(design, "<design>")
    tables = pkey_tables(f, rng)
    devices = vitals(f, rng)
    port_grade, score = grades(f, rng)
    sms = [SmInfo(int(f.lid[f.switches[0]]), int(f.guid[f.switches[0]]), 1000, 14, 3),
           SmInfo(int(f.lid[f.switches[1]]), int(f.guid[f.switches[1]]), 10, 15, 2)]
    print(f"fabric: {f.num_hosts:,} HCAs, {f.num_switches:,} switches, {f.num_links:,} cables; "
          f"{len(tables):,} P_Key tables, {len(devices):,} devices; inputs built in {time.perf_counter() - t0:.1f} s")
    spent = []
    for _ in range(a.repeat):
        start = time.perf_counter()
        report = validate(f, plan=plan, sminfo=sms, pkeys=tables, devices=devices, port_grade=port_grade)
        text = report.to_json()
        iso = advise(f, port_grade, score=score)
        spent.append(time.perf_counter() - start)
    took = float(np.median(spent))
    counts = {}
    for x in report.findings:
        counts[x.check] = counts.get(x.check, 0) + 1
    k = report.kpis
    print(f"report: {len(report.findings):,} findings {counts}; JSON {len(text) / 1e6:.1f} MB; KPIs connected "
          f"{k['connected_endpoints']['share']}, topology {k['topology_correctness']['share']}, healthy links "
          f"{k['healthy_links']['share']}; advice {len(iso.advised)} of {iso.candidates} (cap {iso.cap})")
    print(f"validate + JSON + advice: {took:.2f} s (median of {a.repeat}: {', '.join(f'{s:.2f}' for s in spent)})")
    sample = "".join(capture(t) for t in tables)
    start = time.perf_counter()
    read = read_pkeys(sample, "bench")
    took_read = time.perf_counter() - start
    print(f"read_pkeys of {len(read.tables):,} tables ({len(sample) / 1e6:.0f} MB): {took_read:.2f} s")
    ok = target(f"validation report at {a.nodes * 8:,} GPUs (all checks, JSON, advice)", took, 2.0, "s")
    readings = DeviceReadings(vitals=devices, sms=sms, pkeys=tables)
    nobody = Redaction(frozenset(), frozenset())  # a viewer of no tenant: every host hidden
    web = []
    for _ in range(a.repeat):
        start = time.perf_counter()
        stored = build_report(f, plan=plan, devices=readings, port_grade=port_grade, score=score, t=time.time())
        shown = shown_report(stored, "bench", f, nobody, set(), problems_only=False)
        body = json.dumps(shown)
        web.append(time.perf_counter() - start)
    took_web = float(np.median(web))
    print(f"web path: {len(stored['report']['findings']):,} findings, {len(stored['isolation']['advised'])} advised; "
          f"the viewer's JSON {len(body) / 1e6:.1f} MB")
    print(f"build_report + shown_report (viewer) + JSON: {took_web:.2f} s (median of {a.repeat}: "
          f"{', '.join(f'{s:.2f}' for s in web)})")
    ok &= target(f"validation report through the web at {a.nodes * 8:,} GPUs (report, map links, advice, a "
                 "viewer's relabelling, JSON)", took_web, 2.0, "s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
