"""How long the analyses of issue 5 take on the demo fabric (and a 2048-host tree), as the task runs them.

Times :func:`ibweb.fabrics.analyses.run` (scenario build, routing, the analysis, the
result as JSON) for an eBB of 1,000 and 20,000 patterns, for both what-if kinds and for the
RoCEv2 what-if (three sides: LFTs, adaptive, ECMP) on a 2,048-host tree,
plus the number of progress reports the task would throttle to at most four a second.
Target (issue 5): eBB with 1,000 patterns on 2048 hosts under 10 s.
Run: ``python tests/bench/bench_analyses.py``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

import django  # noqa: E402

django.setup()

from fabric_engine.scenario import DEMO_SPEC, build_fabric  # noqa: E402
from ibweb.fabrics.analyses import ProgressThrottle, run  # noqa: E402
from ibweb.fabrics.api.params import clean_params  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402

BIG = {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64, "levels": 2, "speed": "NDR"},
       "jobs": [{"name": "llm", "tenant": "acme", "hosts": 1024, "placement": "scattered"}], "routing": "minhop"}
#: RoCEv2 what-if on a realistic Clos: four 512-host jobs spread over every leaf, ftree's LFTs on the IB side.
ROCE = {"topology": {"generator": "fat_tree", "hosts": 2048, "radix": 64, "levels": 2, "speed": "NDR"},
        "jobs": [{"name": f"llm{i}", "tenant": "acme", "hosts": 512, "placement": "scattered"} for i in range(4)],
        "routing": "ftree"}
CASES = [
    ("demo", DEMO_SPEC, "ebb", {"patterns": 1000}),
    ("demo", DEMO_SPEC, "ebb", {"patterns": 20000}),
    ("demo", DEMO_SPEC, "whatif_links", {"failed_cables": [600, 601, 602, 603]}),
    ("demo", DEMO_SPEC, "whatif_engine", {"engine": "ftree"}),
    ("2048 hosts", BIG, "ebb", {"patterns": 1000}),
    ("2048 hosts", ROCE, "whatif_roce", {"qps": 1}),
    ("2048 hosts", ROCE, "whatif_roce", {"qps": 8}),
]


def main() -> int:
    print(machine())
    print(f"{'fabric':<11} {'kind':<14} {'params':<38} {'seconds':>8} {'reports':>8} {'sent':>5} {'JSON kB':>8}")
    for name, spec, kind, raw in CASES:
        params = clean_params(kind, raw, build_fabric(spec["topology"]).num_links)
        throttle = ProgressThrottle(0.25)
        counts = [0, 0]

        def progress(fraction: float, message: str, counts=counts, throttle=throttle) -> None:
            counts[0] += 1
            counts[1] += throttle(fraction)

        t = time.perf_counter()
        result = run(kind, params, spec, progress)
        dt = time.perf_counter() - t
        size = len(json.dumps(result)) / 1e3
        print(f"{name:<11} {kind:<14} {json.dumps(raw):<38} {dt:8.3f} {counts[0]:8d} {counts[1]:5d} {size:8.1f}")
        if (name, kind, raw) == ("2048 hosts", "ebb", {"patterns": 1000}):
            target("eBB, 1,000 patterns on 2048 hosts (task: build, route, analyse, JSON)", dt, 10, "s")
        if kind == "whatif_roce":
            for side in result["sides"]:
                slowest = max((j["vs_lft"][["lft", "adaptive", "ecmp"].index(side["kind"])] or 0)
                              for j in result["summary"])
                print(f"{'':<11} {side['label']:<40} imbalance {side['imbalance']:5.2f}  collisions "
                      f"{side['collisions'] if side['collisions'] is not None else '-':>6}  slowest job x{slowest:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
