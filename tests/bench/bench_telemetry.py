"""Processing one telemetry sweep of ~20,000 switch ports: parse, rates, state, frame.

The bar (issue 7): under 1 s on this machine, as OSU INAM states sub-second
counter sweeps on clusters of more than 20,000 nodes. The sweep is the text
``perfquery -l`` and ``perfquery -x -l`` print for every switch (the real
format, generated here with fresh counter values), parsed, merged, turned into
rates against the previous sweep, into a :class:`FabricState` and into the JSON
feed frame. Run: ``python tests/bench/bench_telemetry.py``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fabric_engine.telemetry import observe, parse_perfquery_many  # noqa: E402
from fabric_engine.telemetry.counters import BASIC_BITS  # noqa: E402
from fabric_engine.topology import KIND_SWITCH  # noqa: E402
from fabric_engine.topology.generate import fat_tree  # noqa: E402

BASIC = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
         "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
         "PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "QP1Dropped",
         "VL15Dropped", "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait")
EXT = ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortUnicastXmitPkts", "PortUnicastRcvPkts",
       "PortMulticastXmitPkts", "PortMulticastRcvPkts")


def _field(name: str, value: int) -> str:
    return f"{name}:{'.' * max(1, 33 - len(name))}{value}"


def sweep_texts(fabric, rng: np.random.Generator, base: int) -> list[tuple[str, float, str]]:
    """``perfquery -l`` and ``perfquery -x -l`` output of every switch, as the collector gets them."""
    out = []
    t = time.time()
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
        out.append(("\n".join(basic) + "\n", t, f"perfquery -l {lid}"))
        out.append(("\n".join(ext) + "\n", t, f"perfquery -x -l {lid}"))
    return out


def main() -> None:
    fabric = fat_tree(hosts=4096, radix=64, levels=3, speed="NDR")
    ports = int(fabric.nports[fabric.kind == KIND_SWITCH].sum())
    rng = np.random.default_rng(7)
    first = sweep_texts(fabric, rng, 10_000)
    second = [(text, t + 1.0, src) for text, t, src in sweep_texts(fabric, rng, 2_000_000)]
    mb = sum(len(x[0]) for x in second) / 1e6
    prev = parse_perfquery_many(first)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        cur = parse_perfquery_many(second)
        t1 = time.perf_counter()
        obs = observe(fabric, prev, cur, seq=2, tick_s=1.0)
        t2 = time.perf_counter()
        frame = json.dumps(obs.state.to_frame({"links": fabric.num_links}), separators=(",", ":"))
        t3 = time.perf_counter()
        runs.append((t3 - t0, t1 - t0, t2 - t1, t3 - t2))
    total, parse, rates, enc = min(runs)
    print(f"telemetry sweep: {ports} switch ports, {2 * fabric.num_links} directed links, "
          f"{mb:.1f} MB of perfquery text")
    print(f"  parse+merge {parse * 1e3:7.1f} ms   rates+state {rates * 1e3:7.1f} ms   frame {enc * 1e3:7.1f} ms "
          f"({len(frame) / 1e6:.1f} MB)")
    print(f"  total {total * 1e3:7.1f} ms  ->  {ports / total:,.0f} ports/s   (bar: 1000 ms, ratio {total / 1.0:.2f})")
    stale = int(obs.stale.sum())
    print(f"  stale links: {stale} (host-side ports are covered by the switch port's receive counter)")


if __name__ == "__main__":
    main()
