"""The emulator's tick with the credit flow control model beside max-min, at a few fabric sizes (issue 41).

Run: ``python tests/bench/bench_credit_tick.py [--gpus 512 4096 32768] [--ticks 5]`` (default: 512, 4,096, the
limits and 32,768 GPUs). The fabric and jobs are ``bench_scale.py``'s, the live tick's scale targets'
(``loaded_rail_spec``: every GPU in a job of 256, 10% background); each size is built three times, with
``congestion: maxmin``, ``congestion: credit`` and ``credit`` with InfiniBand congestion control on
(``CongestionControl.typical()``, every packet of a root marked), and stepped ``--ticks`` times after a first tick.

A tick's credit solve spends at most :data:`fabric_engine.credit_tick.CREDIT_TICK_HOP_ITERATIONS` hop-iterations
and carries the iteration on to the next tick; the model runs on fabrics of at most
:data:`~fabric_engine.credit_tick.CREDIT_MAX_HOSTS` hosts, with congestion control on at most
:data:`~fabric_engine.credit_tick.CREDIT_CC_MAX_HOSTS` (a configuration error above). This bench lifts the limits
to measure past them, and checks the targets: the credit tick at its limit and at 32,768 GPUs, and with congestion
control at its limit, within the live tick's budget (250 ms median).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

JOB_GPUS = 256  # loaded_rail_spec's default: bench_scale.py's fabric




def measure(gpus: int, model: str, ticks: int, cc: dict | None = None) -> dict:
    """Median tick (ms) of ``model`` (with congestion control ``cc``) on ``loaded_rail_spec(gpus)``, and the
    fabric's hosts."""
    from fabric_engine.scenario import build_emulator, loaded_rail_spec

    spec = {**loaded_rail_spec(gpus, job_gpus=JOB_GPUS), "congestion": model}
    if cc is not None:
        spec["congestion_control"] = cc
    t = time.perf_counter()
    emu = build_emulator(spec)
    build_ms = (time.perf_counter() - t) * 1e3
    emu.step(now=0.0)
    times = []
    for k in range(ticks):
        t = time.perf_counter()
        emu.step(now=1.0 + k)
        times.append(time.perf_counter() - t)
    res = emu.credit_result
    return {"hosts": emu.fabric.num_hosts, "build_ms": build_ms, "tick_ms": statistics.median(times) * 1e3,
            "iterations": res.iterations if res is not None else 0, "converged": res is None or res.converged}


def main(argv: list[str] | None = None) -> int:
    import fabric_engine.credit_tick as credit_tick
    from fabric_engine.backpressure.cc_params import CongestionControl

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, nargs="+", default=None)
    ap.add_argument("--ticks", type=int, default=5)
    args = ap.parse_args(argv)
    print(machine())
    print(deployed_allocator())
    limit, cc_limit = credit_tick.CREDIT_MAX_HOSTS, credit_tick.CREDIT_CC_MAX_HOSTS
    sizes = args.gpus or sorted({512, 4096, cc_limit, limit, 32768})  # loaded_rail_spec: one host per GPU
    credit_tick.CREDIT_MAX_HOSTS = credit_tick.CREDIT_CC_MAX_HOSTS = 10**9  # measure past the limits
    ticks, hosts = {}, {}
    for gpus in sizes:
        mm = measure(gpus, "maxmin", args.ticks)
        cr = measure(gpus, "credit", args.ticks)
        cc = measure(gpus, "credit", args.ticks, CongestionControl.typical().as_dict())
        print(f"{gpus:6d} GPUs ({cr['hosts']} hosts): max-min {mm['tick_ms']:8.1f} ms per tick; credit model "
              f"{cr['tick_ms']:8.1f} ms per tick, {cr['iterations']} iterations (converged {cr['converged']}; build "
              f"{cr['build_ms']:.0f} ms, max-min's {mm['build_ms']:.0f} ms); with congestion control "
              f"{cc['tick_ms']:8.1f} ms per tick, {cc['iterations']} iterations of its last solve")
        ticks[cr["hosts"]], hosts[gpus] = (cr["tick_ms"], cc["tick_ms"]), cr["hosts"]
    print(f"limits: credit flow control on fabrics of at most {limit} hosts (credit_tick.CREDIT_MAX_HOSTS), with "
          f"congestion control {cc_limit} (credit_tick.CREDIT_CC_MAX_HOSTS)")
    if limit in ticks:
        target(f"credit model tick at its size limit, {limit} hosts (median)", ticks[limit][0], 250, "ms")
    if 32768 in hosts and hosts[32768] != limit:
        target("credit model tick at 32,768 GPUs (median)", ticks[hosts[32768]][0], 250, "ms")
    if cc_limit in ticks:
        target(f"credit model tick with congestion control at its size limit, {cc_limit} hosts (median)",
               ticks[cc_limit][1], 250, "ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
