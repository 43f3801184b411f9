"""Regenerate ``reference.json``: every scenario of ``scenarios.py`` run on BookSim 2, per-flow accepted rates.

Usage: ``BOOKSIM=/path/to/booksim python -m tests.reference.congestion.run_booksim [--cycles N] [--only NAME]``
(``BOOKSIM`` is a BookSim 2 binary, built from its public sources; nothing of it is kept here).
The configurations it runs are written beside this file under ``configs/`` (kept, to be read).

How the scenarios are put to stock BookSim, which has no traffic pattern "these sources to these
destinations" (every node injects under one pattern):

* The network is an ``anynet`` file. Every host is a router (``host router``) joined to its leaf by one
  link (the host link). Flow ``f``'s sender is node ``f`` on its source host router; its receiver is node
  ``N - 1 - f`` on a router of its own (``q`` router) hung off its destination host router. The traffic
  pattern ``bitcomp`` sends node ``i`` to node ``N - 1 - i``: node ``f`` to its receiver, and the
  receiver back to node ``f``; nodes past the flows are dummies paired on a router of their own.
* The receivers' traffic back must not touch the fabric: every ``q`` router reaches the senders' host
  routers through one return router (``zr``) over links whose latencies make that path the shortest for
  them and a path no fabric route takes (latency is the distance of anynet's shortest-path routing;
  latencies are per direction).
* Static routes are pinned by the leaf<->spine latencies (3 + 0..4 cycles, searched so that every
  (source leaf, destination leaf) pair of the scenario's flows goes over its d-mod-k spine). anynet
  routes by destination router, so all flows of one leaf pair take one spine: the scenarios are chosen
  so that d-mod-k gives them one (checked here with a copy of anynet's Dijkstra before running).
* A receiver router only ejects: the host link's buffer at the destination drains as a host does.
* ``fattree`` scenarios use BookSim's own 4-ary 2-tree with ``hotspot`` traffic and ``nca`` routing
  (random up port per packet): every host sends to the hot host.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tests.reference.congestion.scenarios import HOSTS, LEAVES, SCENARIOS, SPINES, Scenario, leaf_of, route

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference.json"
CONFIGS = HERE / "configs"

#: BookSim settings shared by every run: one virtual channel (one data VL), packets of 16 flits
#: (virtual cut-through sized buffers: ``vc_buf_size`` also covers the longest credit round trip, latency 7
#: each way + pipeline), every node offering a flit per cycle, input-queued routers with round-robin
#: (iSLIP, 1 iteration) switch allocation, speculative VC allocation and no routing delay (with one VC
#: and short packets, VC allocation bubbles would otherwise cap every link below its rate: 1-flit packets
#: get 1/3 of it, 16-flit ones 8/9).
COMMON = {
    "num_vcs": 1,
    "vc_buf_size": 64,
    "router": "iq",
    "sw_allocator": "islip",
    "vc_allocator": "islip",
    "alloc_iters": 1,
    "speculative": 1,
    "routing_delay": 0,
    "packet_size": 16,
    "injection_rate": 1.0,
    "injection_rate_uses_flits": 1,
    "injection_process": "bernoulli",
    "use_read_write": 0,
    "sim_type": "throughput",
    "warmup_periods": 3,
    "sample_period": 10000,
    "max_samples": 8,
    "seed": 1,
}

UP, FAR, RETURN = 3, 1000, 100  # leaf<->spine base latency; a link never taken; the return path's links


def _dijkstra_next(adj: dict[int, dict[int, int]], start: int, n: int) -> dict[int, int]:
    """anynet's route(): the first hop from ``start`` to every router (ties: lowest router id popped first)."""
    dist = {i: float("inf") for i in range(n)}
    prev = {i: -1 for i in range(n)}
    dist[start] = 0
    todo = set(range(n))
    while todo:
        cand = min(sorted(todo), key=lambda i: dist[i])
        todo.remove(cand)
        for other, lat in sorted(adj[cand].items()):
            if dist[cand] + lat < dist[other]:
                dist[other], prev[other] = dist[cand] + lat, cand
    first = {}
    for i in range(n):
        if i == start:
            continue
        hop = i
        while prev[hop] != start:
            hop = prev[hop]
        first[i] = hop
    return first


def _spine_latencies(pairs: dict[tuple[int, int], int], seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Latency offsets ``u[leaf, spine]``, ``w[spine, leaf]`` in 0..4 so that each pair's spine is the unique best.

    A local search: change one offset on the path of a pair whose spine is not the unique best yet.
    """
    rng = np.random.default_rng(seed)
    u = np.full((LEAVES, SPINES), 2)
    w = np.full((SPINES, LEAVES), 2)

    def bad() -> list[tuple[int, int, int]]:
        out = []
        for (ls, ld), j in pairs.items():
            cost = u[ls] + w[:, ld]
            if cost[j] != cost.min() or (cost == cost.min()).sum() != 1:
                out.append((ls, ld, j))
        return out

    for _ in range(100_000):
        todo = bad()
        if not todo:
            return u, w
        ls, ld, j = todo[rng.integers(len(todo))]
        k = int(rng.integers(SPINES))
        if rng.random() < 0.5:
            if k == j:
                u[ls, j] = max(0, u[ls, j] - 1)
            else:
                u[ls, k] = min(4, u[ls, k] + 1)
        else:
            if k == j:
                w[j, ld] = max(0, w[j, ld] - 1)
            else:
                w[k, ld] = min(4, w[k, ld] + 1)
        if rng.random() < 0.05:  # shake out of a corner
            u[rng.integers(LEAVES), rng.integers(SPINES)] = rng.integers(5)
    raise SystemExit(f"no leaf<->spine latencies pin the routes {pairs}")


def anynet(sc: Scenario) -> tuple[str, int, dict]:
    """The anynet file for ``sc``, its node count, and where each flow's receiver is."""
    flows = sc.flows
    n_flows = len(flows)
    nodes = 2
    while nodes < 2 * n_flows:
        nodes *= 2
    pairs: dict[tuple[int, int], int] = {}
    for f in flows:
        ls, ld = leaf_of(f.src), leaf_of(f.dst)
        if ls != ld:
            j = f.dst % SPINES
            if pairs.setdefault((ls, ld), j) != j:
                raise SystemExit(f"{sc.name}: flows from leaf {ls} to leaf {ld} need two spines; anynet routes "
                                 "by destination router and cannot give them")
    u, w = _spine_latencies(pairs)
    leaf = list(range(LEAVES))
    spine = [LEAVES + s for s in range(SPINES)]
    hosts = sorted({f.src for f in flows} | {f.dst for f in flows})
    host_router = {h: LEAVES + SPINES + i for i, h in enumerate(hosts)}
    q_router = [LEAVES + SPINES + len(hosts) + i for i in range(n_flows)]
    zr = LEAVES + SPINES + len(hosts) + n_flows
    dummy = zr + 1
    n_routers = dummy + 1
    adj: dict[int, dict[int, int]] = {r: {} for r in range(n_routers)}
    attached: dict[int, list[int]] = {r: [] for r in range(n_routers)}

    def link(a: int, b: int, ab: int, ba: int) -> None:
        adj[a][b], adj[b][a] = ab, ba

    for h, r in host_router.items():
        link(r, leaf[leaf_of(h)], 1, 1)
    for ls in range(LEAVES):
        for s in range(SPINES):
            link(leaf[ls], spine[s], UP + int(u[ls, s]), UP + int(w[s, ls]))
    senders = {f.src for f in flows}
    for h in senders:
        link(zr, host_router[h], RETURN, FAR)
    for i, f in enumerate(flows):
        attached[host_router[f.src]].append(i)
        attached[q_router[i]].append(nodes - 1 - i)
        link(host_router[f.dst], q_router[i], 1, FAR)
        link(q_router[i], zr, RETURN, FAR)
    for k in range(n_flows, nodes - n_flows):
        attached[dummy].append(k)
    link(dummy, zr, FAR, FAR)

    # Check the routes anynet will compute against the scenario's d-mod-k routes.
    nxt = {r: _dijkstra_next(adj, r, n_routers) for r in range(n_routers)}
    name_of = {**{leaf[i]: ("leaf", i) for i in range(LEAVES)}, **{spine[s]: ("spine", s) for s in range(SPINES)}}
    for i, f in enumerate(flows):
        at, seen = host_router[f.src], []
        while at != q_router[i]:
            at = nxt[at][q_router[i]]
            if at in name_of:
                seen.append(name_of[at])
        want = [("leaf", leaf_of(f.src))]
        hops = route(f.src, f.dst, f.dst % SPINES)
        if len(hops) == 4:
            want += [("spine", hops[1][2]), ("leaf", leaf_of(f.dst))]
        if seen != want:
            raise SystemExit(f"{sc.name}: {f.name} would go {seen}, not {want}")
        at, back = q_router[i], []
        while at != host_router[f.src]:
            at = nxt[at][host_router[f.src]]
            back.append(at)
        if back != [zr, host_router[f.src]]:
            raise SystemExit(f"{sc.name}: {f.name}'s return traffic would go {back}")

    lines = []
    for r in range(n_routers):
        parts = [f"router {r}"] + [f"node {n}" for n in attached[r]]
        parts += [f"router {o} {lat}" for o, lat in sorted(adj[r].items())]
        lines.append(" ".join(parts))
    receivers = {f.name: nodes - 1 - i for i, f in enumerate(flows)}
    return "\n".join(lines) + "\n", nodes, receivers


def config(sc: Scenario, cycles: int | None) -> tuple[dict, str | None, dict]:
    """BookSim settings for ``sc``, its anynet file (or None) and where to read each flow's rate."""
    cfg = dict(COMMON)
    if cycles:
        cfg["sample_period"] = cycles
    if sc.network == "fattree":
        hot = {f.dst for f in sc.flows}
        if len(hot) != 1 or sorted(f.src for f in sc.flows) != list(range(HOSTS)):
            raise SystemExit(f"{sc.name}: BookSim's fat tree takes only an all-to-one incast")
        cfg.update({"topology": "fattree", "k": 4, "n": 2, "routing_function": "nca",
                    "traffic": f"hotspot({{{hot.pop()}}})"})
        return cfg, None, {f.name: ("sent_flits", f.src) for f in sc.flows}
    text, _nodes, receivers = anynet(sc)
    cfg.update({"topology": "anynet", "network_file": f"{sc.name}.anynet", "routing_function": "min",
                "traffic": "bitcomp"})
    return cfg, text, {name: ("accepted_flits", node) for name, node in receivers.items()}


def _matlab_vector(text: str, name: str) -> np.ndarray:
    found = re.findall(rf"^{re.escape(name)}\(1,:\) = \[([^\]]*)\];", text, flags=re.M)
    if not found:
        raise SystemExit(f"BookSim's stats have no {name}")
    return np.array([float(v) for v in found[-1].split()])


def run(sc: Scenario, booksim: str, cycles: int | None) -> dict:
    cfg, net, where = config(sc, cycles)
    CONFIGS.mkdir(exist_ok=True)
    body = "".join(f"{k} = {v};\n" for k, v in cfg.items())
    (CONFIGS / f"{sc.name}.cfg").write_text(body)
    if net is not None:
        (CONFIGS / f"{sc.name}.anynet").write_text(net)
    with tempfile.TemporaryDirectory() as tmp:
        cfg_path = Path(tmp) / "booksim.cfg"
        cfg_path.write_text(body + "stats_out = stats.m;\n")
        if net is not None:
            (Path(tmp) / f"{sc.name}.anynet").write_text(net)
        proc = subprocess.run([booksim, str(cfg_path)], cwd=tmp, capture_output=True, text=True, timeout=3600)
        # BookSim exits with -1 (255) when the simulation ran, 0 when it found it unstable.
        if proc.returncode != 255 or "Time taken is" not in proc.stdout:
            raise SystemExit(f"{sc.name}: BookSim failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr}")
        stats = (Path(tmp) / "stats.m").read_text()
        taken = re.findall(r"Time taken is (\d+) cycles", proc.stdout)
    vectors = {k: _matlab_vector(stats, k) for k in ("accepted_flits", "sent_flits")}
    rates = {name: round(float(vectors[vec][node]), 4) for name, (vec, node) in where.items()}
    return {"rates": rates, "cycles": int(taken[-1]) if taken else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=None,
                    help=f"sample period in cycles (default {COMMON['sample_period']})")
    ap.add_argument("--only", action="append", help="run only this scenario (repeatable); keep the others")
    args = ap.parse_args(argv)
    booksim = os.environ.get("BOOKSIM")
    if not booksim or not Path(booksim).is_file():
        print("set BOOKSIM to a BookSim 2 binary", file=sys.stderr)
        return 2
    old = json.loads(OUT.read_text()) if OUT.exists() else {}
    out = {
        "about": "Per-flow accepted rates (fraction of link rate) from BookSim 2 for "
                 "tests/reference/congestion/scenarios.py; regenerate with run_booksim.py.",
        "booksim": {"commit": os.environ.get("BOOKSIM_COMMIT", old.get("booksim", {}).get("commit", "unknown")),
                    "settings": COMMON},
        "scenarios": dict(old.get("scenarios", {})),
        "not_expressible": {},
    }
    for sc in SCENARIOS:
        if not sc.booksim:
            out["not_expressible"][sc.name] = sc.why_not
            out["scenarios"].pop(sc.name, None)
            continue
        if args.only and sc.name not in args.only:
            continue
        res = run(sc, booksim, args.cycles)
        out["scenarios"][sc.name] = res
        print(sc.name, json.dumps(res["rates"]), flush=True)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
