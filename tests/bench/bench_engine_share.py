"""Engine processes sharing fabrics on the real Redis: balance, takeover, memory (issue 25).

Starts a web server (no embedded engine) and ``BENCH_ENGINES`` (default 4) ``run_engine`` processes on
one Redis for ``BENCH_FABRICS`` (default 16) fabrics (the demo and small generated fat trees), waits until
every fabric is led, and reports the leads per process (max/min), then kills one process and reports the
time until every fabric it led is led again by the others, and the resident memory of each process.

Run: ``.venv/bin/python tests/bench/bench_engine_share.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.bench.targets import machine, target  # noqa: E402
from tests.ibweb.live.engine.test_engine_leader import engines  # noqa: E402
from tests.support.engine_share import leads_now, wait_for_shares  # noqa: E402

ENGINES = int(os.environ.get("BENCH_ENGINES", "4"))
FABRICS = int(os.environ.get("BENCH_FABRICS", "16"))
SMALL = [{"name": f"Small {i}", "slug": f"small{i}", "tick_s": 0.5,
          "spec": {"topology": {"generator": "fat_tree", "hosts": 32, "radix": 8}, "jobs": []}}
         for i in range(FABRICS - 1)]
SLUGS = ["demo"] + [f["slug"] for f in SMALL]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    print(machine())
    names = [chr(ord("a") + i) for i in range(ENGINES)]
    with tempfile.TemporaryDirectory() as tmp, engines(Path(tmp), fabrics=SMALL) as group:
        started = time.monotonic()
        for name in names:
            group.start(name, slugs=[])
        shares = wait_for_shares(group, names, SLUGS, timeout_s=180)
        base, extra = divmod(FABRICS, ENGINES)
        balanced = sorted([base] * (ENGINES - extra) + [base + 1] * extra)
        shares = wait_for_shares(group, names, SLUGS, balanced, timeout_s=60)
        settled_s = time.monotonic() - started
        sizes = [len(shares[n]) for n in names]
        memory = [rss_mib(group.procs[n].pid) for n in names]
        victim = max(names, key=lambda n: len(shares[n]))
        orphans = shares[victim]
        group.procs[victim].kill()
        killed = time.monotonic()
        rest = [n for n in names if n != victim]
        while True:
            led = set().union(*(leads_now(group.logs[n].read_text()) for n in rest))
            if orphans <= led:
                break
            if time.monotonic() - killed > 120:
                break
            time.sleep(0.1)
        takeover_s = time.monotonic() - killed
        after = {n: len(leads_now(group.logs[n].read_text())) for n in rest}
    print(f"{ENGINES} engine processes, {FABRICS} fabrics: every fabric led and shared {sizes} "
          f"{settled_s:.1f} s after start")
    print(f"killed {victim} (led {len(orphans)}): the others led its fabrics {takeover_s:.1f} s later, now {after}")
    print("resident memory per engine process (MiB): " + ", ".join(f"{n} {m:.0f}" for n, m in zip(names, memory,
                                                                                                  strict=True)))
    ok = target("leads per engine process, max / min", max(sizes) / max(min(sizes), 1), (base + (extra > 0)) / base)
    ok &= target("takeover of a killed engine process's fabrics", takeover_s, 10, "s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
