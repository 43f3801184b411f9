"""The collector's P_Key round at 32,768 GPUs (issue 38): ``smpquery pkeys`` of both ends of every switch-to-host
cable, one worker against shards over N workers.

The rail-optimized 3-level NDR fabric of ``bench_scale`` (4,096 nodes x 8 rails: 32,768 HCAs, 65,536 ports to
ask). The command runner is a stub: each ``smpquery pkeys <lid> <port>`` sleeps a fixed latency (``--latency-ms``,
20 ms by default: one MAD round trip and the tool's start-up, an assumption, not a measure) and answers the port's
table from the generated fabric (the default P_Key and one partition a node; CA ports 128 entries, switch ports 32),
as text built before timing; no process is spawned per call (the real runner's fork and exec are not counted).
Each answer goes through the collector's own code (:func:`ibweb.telemetry.device_sweep.read_pkey_shard`:
:data:`PKEY_WORKERS` threads, the reader, the failure count) and the shards' results through
:func:`merge_pkey_shards`, as the Celery tasks run them.

* one worker: the whole round in one task (as before the shards);
* N workers: the round's :data:`PKEY_SHARD_PORTS`-port shards on a pool of N processes (``fork``: as Celery's
  prefork workers), then the one merge in this process.

Prints each round's wall time and our CPU per call (the processes' CPU time over the calls: the stub's sleep costs
none), with targets: the sharded round within the default validation interval (``validation_every`` 10 x
``interval_s`` 10 s) and at most 1 ms of CPU a call. Run: ``.venv/bin/python tests/bench/bench_pkey_reads.py
[--nodes 4096] [--workers 16] [--latency-ms 20] [--skip-one]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from fabric_engine.devices.vitals import DeviceReadings  # noqa: E402
from fabric_engine.scenario import build_fabric, loaded_rail_spec  # noqa: E402
from fabric_engine.topology import KIND_SWITCH, Fabric  # noqa: E402
from ibweb.telemetry import device_sweep  # noqa: E402
from ibweb.telemetry.collector import Output  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

#: The stub's answers, ``(lid, port)`` -> the text ``smpquery pkeys`` prints; built before the pool forks.
ANSWERS: dict[tuple[int, int], str] = {}
LATENCY_S = 0.020
#: The default validation interval: ``validation_every`` 10 sweeps of ``interval_s`` 10 s.
INTERVAL_S = 100.0


def table_text(keys: list[int], capacity: int) -> str:
    """What ``smpquery pkeys`` prints for a table (``smpquery.c``'s rows of eight), without its command line."""
    entries = keys + [0] * (capacity - len(keys))
    rows = "".join(f"{r:4d}: " + " ".join(f"0x{k:04x}" for k in entries[r:r + 8]) + "\n"
                   for r in range(0, capacity, 8))
    return f"{rows}{capacity} pkeys capacity for this port\n"


def answers(f: Fabric, ports: np.ndarray) -> dict[tuple[int, int], str]:
    """Each port's answer: switch ports 0xffff and their node's partition (32 entries), CA ports 0x7fff and it (128)."""
    slot_lid = f.port_lid
    owner = np.repeat(np.arange(f.num_nodes), f.nports)
    by_lid = {}  # LID -> node (a switch's LID names all its ports; a CA port's LID its own)
    for s in f.switches.tolist():  # building the input, not the measured code
        by_lid[int(f.lid[s])] = s
    for i in np.flatnonzero(slot_lid > 0).tolist():
        by_lid.setdefault(int(slot_lid[i]), int(owner[i]))
    out = {}
    for lid, port in ports.tolist():  # building the input
        node = by_lid[lid]
        key = 0x8000 | (1 + node % 4000)
        out[(lid, port)] = (table_text([0xFFFF, key], 32) if f.kind[node] == KIND_SWITCH
                            else table_text([0x7FFF, key], 128))
    return out


class StubRunner:
    """Answers ``smpquery pkeys <lid> <port>`` from :data:`ANSWERS` after :data:`LATENCY_S` (a ``CommandRunner``)."""

    def run(self, args) -> Output:
        time.sleep(LATENCY_S)
        return Output(ANSWERS[(int(args[2]), int(args[3]))], time.time(), " ".join(args))


def shard_task(job: tuple[int, list[list[int]]]) -> tuple[dict, float]:
    """One worker's shard (the ``pkey_shard`` task's work): its result and the CPU it took."""
    cpu = time.process_time()
    result = device_sweep.read_pkey_shard(StubRunner(), job[1], job[0])
    return result, time.process_time() - cpu


def main() -> int:
    global LATENCY_S
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=4096, help="GPU nodes of 8 rails (default 4096: 32,768 GPUs)")
    p.add_argument("--workers", type=int, default=16, help="worker processes for the shards (default 16)")
    p.add_argument("--latency-ms", type=float, default=20.0, help="each smpquery's fixed latency (default 20 ms)")
    p.add_argument("--skip-one", action="store_true", help="skip the one-worker round (about 65,536 x latency / 8)")
    a = p.parse_args()
    LATENCY_S = a.latency_ms / 1000
    print(machine())
    print(deployed_allocator())
    t0 = time.perf_counter()
    f = build_fabric(loaded_rail_spec(a.nodes * 8)["topology"])
    ports = device_sweep.pkey_ports(f)
    ANSWERS.update(answers(f, ports))
    shards = device_sweep.pkey_shards(ports)
    total = len(ports)
    print(f"fabric: {f.num_hosts:,} HCAs, {f.num_switches:,} switches; {total:,} ports to ask, {len(shards)} shards "
          f"of {device_sweep.PKEY_SHARD_PORTS:,}; {device_sweep.PKEY_WORKERS} commands at once a worker; stub "
          f"latency {a.latency_ms:g} ms a call; inputs built in {time.perf_counter() - t0:.1f} s")
    gpus = f"{a.nodes * 8:,} GPUs"

    if not a.skip_one:
        start, cpu = time.perf_counter(), time.process_time()
        result = device_sweep.read_pkey_shard(StubRunner(), ports.tolist(), 0)
        out = DeviceReadings()
        assert device_sweep.merge_pkey_shards([result], total, out, []) and len(out.pkeys) == total
        took, spent = time.perf_counter() - start, time.process_time() - cpu
        print(f"one worker: round {took:.1f} s (floor {total * LATENCY_S / device_sweep.PKEY_WORKERS:.1f} s), our CPU "
              f"{spent:.1f} s = {spent / total * 1e3:.3f} ms a call")

    with multiprocessing.get_context("fork").Pool(a.workers) as pool:
        pool.map(time.sleep, [0.0] * a.workers)  # the workers up before timing, as Celery's are
        start = time.perf_counter()
        done = pool.map(shard_task, list(enumerate(shards)), chunksize=1)
        merge_cpu = time.process_time()
        out, warnings = DeviceReadings(), []
        complete = device_sweep.merge_pkey_shards([r for r, _ in done], total, out, warnings)
        merge_cpu = time.process_time() - merge_cpu
        took = time.perf_counter() - start
    assert complete and len(out.pkeys) == total and not warnings
    spent = sum(c for _, c in done) + merge_cpu
    floor = max(1, -(-len(shards) // a.workers)) * device_sweep.PKEY_SHARD_PORTS * LATENCY_S / device_sweep.PKEY_WORKERS
    print(f"{a.workers} workers: round {took:.1f} s (floor {floor:.1f} s), our CPU {spent:.1f} s = "
          f"{spent / total * 1e3:.3f} ms a call (merge {merge_cpu:.2f} s)")
    ok = target(f"P_Key round at {gpus} ({total:,} smpquery, {a.latency_ms:g} ms each) over {a.workers} workers",
                took, INTERVAL_S, "s")
    ok &= target(f"P_Key round at {gpus}: our CPU per smpquery", spent / total * 1e3, 1.0, "ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
