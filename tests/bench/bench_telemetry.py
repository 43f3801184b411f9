"""One telemetry sweep of 40,960 switch ports, end to end through the code the Celery tasks run.

The bar (issue 7, raised by issue 15 to the 40,960 ports of an 8,192-host 3-level
radix-64 fat tree): under 1 s on this machine, as OSU INAM states sub-second counter
sweeps on clusters of more than 20,000 nodes. The stages are those of production:

* ``read_shard`` (what the ``sweep_shard`` task calls) for every shard of 64 switches (the
  collector's default ``shard_size``), its command runner answering with the text
  ``perfquery -l`` and ``perfquery -x -l`` print (the real format, fresh counter values):
  the outputs are lexed and parsed at once, merged, and packed as compressed binary;
* the Celery JSON round trip of the shard results (the result backend serializes them);
* ``merge_results`` (what ``merge`` calls): decode every shard, concatenate and merge;
* the cache round trip of the merged samples (pickled, as the cache stores the sweep entry);
* rates and state against the previous sweep (``observe``), then the v2 binary frame.

Shards run one after another here: the sum is the CPU time of all workers together.
For comparison, the JSON lists the shards used to travel as are timed once on the same
samples, and the v1 JSON frame beside the v2 one. Run: ``python tests/bench/bench_telemetry.py``.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

import django  # noqa: E402

django.setup()

from fabric_engine.telemetry import observe  # noqa: E402
from fabric_engine.telemetry.counters import BASIC_BITS  # noqa: E402
from fabric_engine.topology import KIND_SWITCH  # noqa: E402
from fabric_engine.topology.generate import fat_tree  # noqa: E402
from ibweb.live.feed.encodings import ENCODINGS  # noqa: E402
from ibweb.telemetry import sweeps  # noqa: E402
from ibweb.telemetry.collector import Output, SwitchTarget, perfquery_commands  # noqa: E402
from ibweb.telemetry.models import CollectorConfig  # noqa: E402
from ibweb.telemetry.transport import merge_results  # noqa: E402
from tests.bench.targets import machine, target  # noqa: E402

BASIC = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
         "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
         "PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "QP1Dropped",
         "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait")
EXT = ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortUnicastXmitPkts", "PortUnicastRcvPkts",
       "PortMulticastXmitPkts", "PortMulticastRcvPkts")


def frame(state, encoding: str, totals: dict) -> str | bytes:
    """The frame of ``state`` as the runner encodes it in ``encoding`` for a view that sees all."""
    enc = ENCODINGS[encoding]
    return enc.frame(state.frame_header(totals), enc.shared(state))


def _field(name: str, value: int) -> str:
    return f"{name}:{'.' * max(1, 33 - len(name))}{value}"


def sweep_outputs(fabric, rng: np.random.Generator, base: int, t: float) -> dict[str, Output]:
    """``perfquery -l`` and ``perfquery -x -l`` output of every switch, by command line, as the collector gets them."""
    out = {}
    for s in np.flatnonzero(fabric.kind == KIND_SWITCH):  # one command per switch, like the collector
        lid = int(fabric.lid[s])
        ports = range(1, int(fabric.nports[s]) + 1)
        vals = rng.integers(0, 1000, size=(len(ports), len(BASIC))) + base
        basic, ext = [], []
        for i, p in enumerate(ports):
            basic.append(f"# Port counters: Lid {lid} port {p} (CapMask: 0x1300)\nPortSelect:......................{p}"
                         f"\nCounterSelect:...................0x0000")
            basic += [_field(n, int(v) % (1 << BASIC_BITS[n])) for n, v in zip(BASIC, vals[i], strict=True)]
            ext.append(f"# Port extended counters: Lid {lid} port {p} (CapMask: 0x1300 CapMask2: 0x0000000)\n"
                       f"PortSelect:......................{p}\nCounterSelect:...................0x0000")
            ext += [_field(n, int(v) * 1000) for n, v in zip(EXT, vals[i], strict=False)]
        cmd_basic, cmd_ext = (" ".join(c) for c in perfquery_commands(SwitchTarget(lid, tuple(ports))))
        out[cmd_basic] = Output("\n".join(basic) + "\n", t, cmd_basic)
        out[cmd_ext] = Output("\n".join(ext) + "\n", t, cmd_ext)
    return out


class Replay:
    """A command runner answering each perfquery command with the output it printed (no subprocess)."""

    def __init__(self, outputs: dict[str, Output]) -> None:
        self.outputs = outputs

    def run(self, args) -> Output:
        return self.outputs[" ".join(map(str, args))]


def shards_of(fabric, size: int) -> list[list[list]]:
    """The switch targets (JSON, as ``plan`` makes them) in shards of ``size`` switches."""
    sw = np.flatnonzero(fabric.kind == KIND_SWITCH)
    targets = [SwitchTarget(int(fabric.lid[s]), tuple(range(1, int(fabric.nports[s]) + 1))).as_json() for s in sw]
    return [targets[i:i + size] for i in range(0, len(targets), size)]


def sweep(config: CollectorConfig, shards: list[list[list]], outputs: dict[str, Output]):
    """One sweep through the production functions; ``(merged samples, stage seconds, JSON bytes)``."""
    sweeps.runner = lambda _config: Replay(outputs)
    t0 = time.perf_counter()
    results = [sweeps.read_shard(config, i, targets) for i, targets in enumerate(shards)]  # the sweep_shard task
    t1 = time.perf_counter()
    wire = json.dumps(results)  # Celery's JSON result serializer, there and back
    results = json.loads(wire)
    t2 = time.perf_counter()
    samples, failures = merge_results(results)
    assert not failures, failures
    t3 = time.perf_counter()
    samples = pickle.loads(pickle.dumps(samples, pickle.HIGHEST_PROTOCOL))  # the cache's sweep entry
    t4 = time.perf_counter()
    return samples, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), len(wire)


def json_lists(samples) -> float:
    """Seconds the JSON lists shards used to travel as take for ``samples`` (tolist, dumps, loads, arrays)."""
    t0 = time.perf_counter()
    d = json.loads(json.dumps({"lid": samples.lid.tolist(), "port": samples.port.tolist(),
                               "values": samples.values.tolist(), "bits": samples.bits.tolist(),
                               "t": samples.t.tolist()}))
    np.array(d["lid"], np.int32), np.array(d["port"], np.int16), np.array(d["values"], np.uint64)
    np.array(d["bits"], np.uint8), np.array(d["t"], np.float64)
    return time.perf_counter() - t0


def main() -> None:
    print(machine())
    fabric = fat_tree(hosts=8192, radix=64, levels=3, speed="NDR")
    ports = int(fabric.nports[fabric.kind == KIND_SWITCH].sum())
    config = CollectorConfig()  # unsaved: its defaults (shard_size 64) are what a new collector gets
    shards = shards_of(fabric, config.shard_size)
    rng = np.random.default_rng(7)
    now = time.time()
    first = sweep_outputs(fabric, rng, 10_000, now)
    second = sweep_outputs(fabric, rng, 2_000_000, now + 1.0)
    mb = sum(len(o.text) for o in second.values()) / 1e6
    prev, _, _ = sweep(config, shards, first)
    runs = []
    for _ in range(3):
        c0 = time.process_time()
        cur, (read, wire, merge, cache), nbytes = sweep(config, shards, second)
        t0 = time.perf_counter()
        obs = observe(fabric, prev, cur, seq=2, tick_s=1.0)
        t1 = time.perf_counter()
        v2 = frame(obs.state, "v2", {"links": fabric.num_links})
        t2 = time.perf_counter()
        cpu = time.process_time() - c0
        runs.append((read + wire + merge + cache + (t1 - t0) + (t2 - t1), read, wire, merge, cache, t1 - t0, t2 - t1,
                     cpu))
    total, read, wire, merge, cache, rates, enc, cpu = min(runs)
    t0 = time.perf_counter()
    v1 = frame(obs.state, "v1", {"links": fabric.num_links})
    enc_v1 = time.perf_counter() - t0
    before = json_lists(cur)  # one row per port: less than the two (basic, extended) the old shards carried
    print(f"telemetry sweep: {ports} switch ports, {2 * fabric.num_links} directed links, "
          f"{len(shards)} shards of {config.shard_size} switches, {mb:.1f} MB of perfquery text")
    print(f"  read_shard (parse, merge, pack; all shards) {read * 1e3:7.1f} ms")
    print(f"  shard results through JSON                  {wire * 1e3:7.1f} ms ({nbytes / 1e6:.2f} MB; "
          f"as JSON lists, one row per port: {before * 1e3:.0f} ms)")
    print(f"  merge (decode, concatenate, merge)          {merge * 1e3:7.1f} ms ({len(cur)} ports)")
    print(f"  cache entry round trip (pickle)             {cache * 1e3:7.1f} ms")
    print(f"  rates + state                               {rates * 1e3:7.1f} ms")
    print(f"  frame v2                                    {enc * 1e3:7.1f} ms ({len(v2) / 1e6:.2f} MB; "
          f"v1 JSON {enc_v1 * 1e3:.0f} ms, {len(v1) / 1e6:.1f} MB)")
    print(f"  total {total * 1e3:7.1f} ms (CPU {cpu * 1e3:.0f} ms)  ->  {ports / total:,.0f} ports/s   "
          f"(bar: 1000 ms, ratio {total / 1.0:.2f})")
    target(f"telemetry sweep of {ports:,} switch ports: read_shard, JSON transport, merge, rates, state, v2 frame",
           total * 1e3, 1000, "ms")
    stale = int(obs.stale.sum())
    print(f"  stale links: {stale} (host-side ports are covered by the switch port's receive counter)")


if __name__ == "__main__":
    main()
