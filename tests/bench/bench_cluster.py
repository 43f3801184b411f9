"""A 131,072-GPU cluster live: 8 planes of 16,384 hosts, its engines in 2 and then 4 processes (issue 25).

For each process count: a web server (no embedded engine) on a fresh database holding the loaded cluster of
:func:`fabric_engine.cluster.generate.loaded_cluster_spec` (512 jobs of 32 servers, every server busy), and
that many ``run_engine`` processes on the real Redis sharing its fabrics. Once every plane sends frames, the
cluster API is read once a second for ``BENCH_SECONDS``: each plane's engine step (``totals.step_ms`` of its
frames), the cluster view's latency (the API's answer, composed from the eight planes' records whichever
process leads each) and how old the oldest plane's newest frame is when the view is read (the planes tick
independently, once a second each: a frame at most two ticks old is fresh); the CPU the engine processes use over
that time (cores: on this 2-core machine the engines may take all of it, and the web server waits); then the
cluster view's own cost, read while the engines are paused (SIGSTOP: the view reads what they left in the
cache); then the resident memory of each engine process (the median, and the largest: a process that led
more fabrics while the others were starting, and handed them over, keeps some of their memory). Figures of
both runs side by side, with the ratios 4 / 2.

Run: ``.venv/bin/python tests/bench/bench_cluster.py`` (``make bench`` runs it); ``BENCH_PLANES``,
``BENCH_NODES`` make it smaller.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.bench.bench_engine_share import rss_mib  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402
from tests.ibweb.live.engine.test_engine_leader import engines  # noqa: E402

PLANES = int(os.environ.get("BENCH_PLANES", "8"))
NODES = int(os.environ.get("BENCH_NODES", "16384"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "20"))
SLUG = "big"
SETUP = ("from fabric_engine.cluster.generate import loaded_cluster_spec; from ibweb.fabrics.clusters import "
         f"create_cluster; create_cluster(loaded_cluster_spec({PLANES}, {NODES}), {SLUG!r}, 'Bench cluster')")


def cluster(server) -> tuple[dict, float]:
    """The cluster API's answer and how long it took (ms)."""
    request = urllib.request.Request(f"{server.url}/api/clusters/{SLUG}/", headers={"Cookie": server.cookie})
    started = time.perf_counter()
    body = urllib.request.urlopen(request, timeout=30).read()
    return json.loads(body), (time.perf_counter() - started) * 1000


def cpu_s(pid: int) -> float:
    """CPU time (user + system) of a process so far, seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def paused_view_ms(server, pids: list[int], reads: int = 10) -> float:
    """The cluster view's median latency with the engine processes stopped: what composing it costs alone."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(0.5)
        return statistics.median(cluster(server)[1] for _ in range(reads))
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def run(processes: int) -> dict:
    """Start ``processes`` engines on the cluster; the figures once every plane is live."""
    with tempfile.TemporaryDirectory() as tmp, engines(Path(tmp), setup=SETUP) as group:
        server = group.server
        started = time.monotonic()
        names = [chr(ord("a") + i) for i in range(processes)]
        for name in names:
            group.start(name, slugs=[])
        while True:
            data, _ = cluster(server)
            if all(p["live"] for p in data["planes"]) and all(f["state"] == "live" for f in data["fabrics"]):
                break
            assert time.monotonic() - started < 600, f"planes not live: {[f['state'] for f in data['fabrics']]}"
            time.sleep(1)
        live_s = time.monotonic() - started
        steps: dict[str, list[float]] = {}
        latency, oldest = [], []
        pids = [group.procs[n].pid for n in names]
        cpu_before, window = sum(cpu_s(p) for p in pids), time.monotonic()
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            data, ms = cluster(server)
            latency.append(ms)
            times = [p["t"] for p in data["planes"] if p["t"] is not None]
            oldest.append((time.time() - min(times)) * 1000)
            for p in data["planes"]:
                if p["step_ms"] is not None:
                    steps.setdefault(p["key"], []).append(p["step_ms"])
            time.sleep(1)
        cores = (sum(cpu_s(p) for p in pids) - cpu_before) / (time.monotonic() - window)
        alone_ms = paused_view_ms(server, pids)
        memory = [rss_mib(p) for p in pids]
    per_plane = [statistics.median(v) for v in steps.values()]
    out = {"live_s": live_s, "step_ms": statistics.median(per_plane), "step_ms_worst": max(per_plane),
           "latency_ms": statistics.median(latency), "latency_p95_ms": p95(latency), "oldest_ms": p95(oldest),
           "memory_mib": statistics.median(memory), "memory_max_mib": max(memory),
           "memory_total_mib": sum(memory), "cores": cores, "alone_ms": alone_ms}
    print(f"{processes} engine processes: every plane live {live_s:.0f} s after start; per-plane step median "
          f"{out['step_ms']:.0f} ms (worst plane {out['step_ms_worst']:.0f} ms); "
          f"cluster view {out['latency_ms']:.0f} ms median, {out['latency_p95_ms']:.0f} ms p95; "
          f"oldest plane's frame {out['oldest_ms']:.0f} ms old (p95); engines used {cores:.2f} cores; "
          f"cluster view alone (engines paused) {alone_ms:.0f} ms; "
          f"memory per process {', '.join(f'{m:.0f}' for m in memory)} MiB", flush=True)
    return out


def main() -> int:
    print(machine())
    print(f"cluster: {PLANES} planes of {NODES:,} hosts ({PLANES * NODES:,} GPUs), {NODES // 32} jobs", flush=True)
    two, four = run(2), run(4)
    print(f"4 / 2 processes: per-plane step {four['step_ms'] / two['step_ms']:.2f}, cluster view "
          f"{four['latency_ms'] / two['latency_ms']:.2f}, "
          f"memory per process {four['memory_mib'] / two['memory_mib']:.2f} (median; the largest process "
          f"{four['memory_max_mib'] / two['memory_max_mib']:.2f})")
    ok = True
    for n, fig in ((2, two), (4, four)):
        ok &= target(f"per-plane engine step, median, {n} processes", fig["step_ms"], 1000, "ms")
        ok &= target(f"cluster view latency, p95, {n} processes", fig["latency_p95_ms"], 500, "ms")
        ok &= target(f"cluster view alone (engines paused), median, {n} processes", fig["alone_ms"], 200, "ms")
        ok &= target(f"age of the oldest plane's newest frame, p95, {n} processes", fig["oldest_ms"], 2000, "ms")
    ok &= target("memory per engine process (median), 4 processes / 2", four["memory_mib"] / two["memory_mib"], 0.75)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
