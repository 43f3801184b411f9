"""The digital twin at 32,768 GPUs (issue 17): a new job set, and one tick of expected against observed.

The rail-optimized 3-level NDR fabric of ``bench_scale`` (4,096 nodes x 8 rails, 32,768 HCAs), routed with
minhop; 64 jobs of 64 nodes (512 HCAs each, 64 per rail), as a scheduler lists them. Measured in one run:

* **new job set**: hostlists expanded, jobs placed on HCAs per rail, the links each job can use
  (``job_links``) and the emulation of all jobs (``emulate``), what happens when the scheduler's list changes;
* **tick**: observed per-job bandwidth, expected against observed on every link, the persistence rule
  (``Twin.evaluate`` with the model cached), what every telemetry tick adds.

Targets: a new job set within 10 s, a tick within 0.25 s (a quarter of a 1 s tick), on this machine.
Run: ``python tests/bench/bench_twin.py [NODES]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fabric_engine.routing import route  # noqa: E402
from fabric_engine.scenario import build_fabric, loaded_rail_spec  # noqa: E402
from fabric_engine.twin import HostMap, SchedulerJob, Twin  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402


def main(nodes: int = 4096) -> int:
    print(machine())
    print(deployed_allocator())
    t0 = time.perf_counter()
    f = build_fabric(loaded_rail_spec(nodes * 8)["topology"])  # bench_scale's 3-level NDR fabric
    r = route(f, "minhop")
    print(f"fabric: {f.num_hosts} HCAs, {f.num_switches} switches, {f.num_links} cables; built and routed "
          f"({r.engine}) in {time.perf_counter() - t0:.1f} s")
    per_job = max(2, nodes // 64)
    jobs = [SchedulerJob(str(1000 + k), f"tenant{k % 8}",
                         tuple(f"dgx{n:04d}" for n in range(k * per_job + 1, (k + 1) * per_job + 1)))
            for k in range(nodes // per_job)]
    twin = Twin(HostMap("{host}-hca{rail}"))
    twin.set_jobs(jobs)
    zero = np.zeros(2 * f.num_links)
    t0 = time.perf_counter()
    report = twin.evaluate(r, zero, 1.0, compared=False)
    model_s = time.perf_counter() - t0
    ports = sum(j["ports"] for j in report.jobs)
    links = report.incidence.nnz
    print(f"new job set: {len(report.jobs)} jobs on {ports} HCAs, {links:,} (job, link) pairs, "
          f"emulated and placed in {model_s:.2f} s")
    rng = np.random.default_rng(1)
    observed = report.traffic.link_rate * rng.uniform(0.3, 0.9) * rng.uniform(0.9, 1.1, size=2 * f.num_links)
    ticks = []
    for t in range(5):  # the model is cached: what every tick costs
        t0 = time.perf_counter()
        rep = twin.evaluate(r, observed, 2.0 + t)
        ticks.append(time.perf_counter() - t0)
    tick_s = float(np.median(ticks))
    print(f"tick: median of 5 {tick_s * 1000:.0f} ms ({len(rep.deviations)} deviations ranked)")
    ok = target(f"twin new job set, {f.num_hosts:,} HCAs", model_s, 10.0, "s")
    ok &= target(f"twin tick, {f.num_hosts:,} HCAs", tick_s, 0.25, "s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 4096))
