"""OpenSM in its normal sweeping mode rewrites its dump around cuts and relinks; the frames keep its routing (issue 35).

ibsim runs a 4x HDR fat tree (16 hosts, 8 switches); a long-running OpenSM (``-R ftree -D 0x47``,
light sweeps every 10 s, a heavy sweep on each link-state trap) writes ``opensm-lfts.dump``
within milliseconds of each ``Unlink``/``ReLink``. A telemetry-fed fabric whose own
``routing_engine`` is ``ftree`` sweeps every second through the real ``iblinkinfo`` and
``perfquery`` (the embedded sweeps the source starts itself) and ticks every 0.5 s. Two
leaf-spine cables are cut and relinked while it runs: the dump often changes before the sweep
that sees the cabling (the issue), sometimes after. Every frame must say ``opensm-dump``, no
routing alert or sweep event may warn, and while a cable is out the path API must equal
``ibtracert`` on the simulated switches (the tables OpenSM set are the ones in use).
"""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest
from django.core.cache import cache

from fabric_engine.formats import opensm_lfts
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.frame_store import newest_parts
from ibweb.telemetry.lft_tracker import dump_signature
from ibweb.telemetry.models import CollectorConfig, Sweep
from tests.realtools.tracert import ibtracert_hops, switch_hops
from tests.support.tenancy_fixtures import operator_api

pytestmark = [pytest.mark.realtools, pytest.mark.django_db(transaction=True)]

LINKS = 32
CABLES = ('"leaf01"[5]', '"leaf03"[6]')  # leaf uplinks (ports 1-4 face hosts)
TICK_S = 0.5
SETTLE_S = 3.0  # ticks kept after the engine saw a change


class DumpWatch(threading.Thread):
    """Notes every rewrite of the dump (its signature changing), sampled every 10 ms."""

    def __init__(self, path) -> None:
        super().__init__(daemon=True)
        self.path, self.rewrites, self.done = path, [], threading.Event()

    def run(self) -> None:
        sig = dump_signature(self.path)
        while not self.done.wait(0.01):
            now = dump_signature(self.path)
            if now != sig and now is not None:
                self.rewrites.append(time.monotonic())
                sig = now


def api_hops(src: str, dst: str) -> tuple[str, list]:
    r = operator_api().get("/api/fabrics/fabrics/osm/path/", {"src": src, "dst": dst})
    assert r.status_code == 200, r.content
    return r.json()["routing"], switch_hops(r.json()["hops"])


def test_opensm_rewriting_its_dump_around_cuts_and_relinks_keeps_opensm_routing_without_false_warnings(
        ibsim, tmp_path, monkeypatch):
    cache.clear()
    monkeypatch.chdir(tmp_path)  # umad2sim leaves its sys-<pid> directories where the collector's tools run
    sim = ibsim(fat_tree(hosts=16, radix=8, speed="HDR"), sim_host="gpu0001",
                tools=("perfquery", "iblinkinfo", "ibtracert"))
    osm = tmp_path / "osm"
    dump = osm / "opensm-lfts.dump"
    osm.mkdir()
    sim.start_opensm(["-R", "ftree", "-D", "0x47", "-s", "10"], cache_dir=osm)
    deadline = time.monotonic() + 60
    while not (dump.exists() and "SUBNET UP" in (osm / "opensm.log").read_text(errors="replace")):
        assert time.monotonic() < deadline, (osm / "opensm.log").read_text(errors="replace")[-3000:]
        time.sleep(0.1)
    env = {k: v for k, v in sim.client_env("gpu0001").items() if k in ("LD_PRELOAD", "SIM_HOST", "IBSIM_SOCKNAME")}
    fabric = Fabric.objects.create(name="osm", slug="osm", mode=FabricMode.TELEMETRY, tick_s=TICK_S,
                                   routing_engine="ftree")
    CollectorConfig.objects.create(fabric=fabric, environment=env, timeout_s=20.0, interval_s=1.0, shard_size=8,
                                   stale_after_s=600.0, lfts_path=str(dump))
    watch = DumpWatch(dump)
    watch.start()
    log: list[dict] = []  # one row per tick
    marks: dict[str, float] = {}

    def ibtracert(engine, src: str, dst: str) -> list:
        f = engine.source.fabric
        lids = [str(f.lid[f.node(f"{name} HCA-1")]) for name in (src, dst)]
        return ibtracert_hops(sim.run(["ibtracert", *lids], sim_host=src).stdout)

    async def tick(engine, phase: str) -> None:
        await engine.tick()
        header, _ = await newest_parts(fabric.pk)
        alerts = [a for a in (header or {}).get("alerts", []) if a.get("kind") == "routing"]
        log.append({"t": time.monotonic(), "phase": phase, "links": engine.source.fabric.num_links,
                    "source": engine.source.router.source, "frame": (header or {}).get("totals", {}).get("routing"),
                    "alerts": [(a["severity"], a["message"]) for a in alerts]})
        await asyncio.sleep(TICK_S)

    async def until_links(engine, phase: str, links: int) -> None:
        deadline = time.monotonic() + 30
        while engine.source.fabric.num_links != links:
            assert time.monotonic() < deadline, f"{phase}: the engine never saw {links} links"
            await tick(engine, phase)
        marks[f"{phase} seen"] = time.monotonic()
        end = time.monotonic() + SETTLE_S
        while time.monotonic() < end:
            await tick(engine, phase)

    async def scenario() -> None:
        engine = FabricRunner(fabric)
        await engine.start()
        for _ in range(int(3 / TICK_S)):
            await tick(engine, "steady")
        for n, cable in enumerate(CABLES):
            marks[f"cut{n}"] = time.monotonic()
            await asyncio.to_thread(sim.console, f"Unlink {cable}")
            await until_links(engine, f"cut{n}", LINKS - 1)
            # the tables in use are the ones OpenSM set on the switches: the path API equals ibtracert
            for src, dst in (("gpu0001", "gpu0016"), ("gpu0009", "gpu0002"), ("gpu0012", "gpu0005")):
                routing, hops = await asyncio.to_thread(api_hops, src, dst)
                assert routing == "opensm-dump" and hops == await asyncio.to_thread(ibtracert, engine, src, dst)
            marks[f"relink{n}"] = time.monotonic()
            await asyncio.to_thread(sim.console, f"ReLink {cable}")
            await until_links(engine, f"relink{n}", LINKS)
        while engine.source._sweep_thread is not None and not engine.source._sweep_thread.done():
            await tick(engine, "end")
        await engine.source.stop()
        final = opensm_lfts.read(dump.read_text(), engine.source.fabric)
        assert np.array_equal(engine.source.router.routing.lft, final.lft)

    operator_api()  # the API user made before the engine's sweep thread writes (a write then may find SQLite locked)
    try:
        asyncio.run(scenario())
    finally:
        watch.done.set()
        watch.join()

    frames = [row for row in log if row["frame"] is not None]
    assert len(frames) >= 30
    assert {row["frame"] for row in frames} == {"opensm-dump"}, [r for r in frames if r["frame"] != "opensm-dump"]
    assert {row["source"] for row in log} == {"opensm-dump"}
    warned = [a for row in log for a in row["alerts"] if a[0] != "info"]
    assert warned == [], warned
    events = [e for s in Sweep.objects.order_by("pk") for e in s.events if e["kind"] == "routing"]
    assert events and {(e["action"], e["severity"]) for e in events} <= {("loaded", "info"), ("reloaded", "info")}
    for e in events:
        for false in ("has not changed", "older than", "uncabled", "disagrees"):
            assert false not in e["message"], e["message"]
    # OpenSM rewrote its dump after every cut and relink (traps), and the engine followed each change
    for n in range(len(CABLES)):
        for phase in (f"cut{n}", f"relink{n}"):
            after = [t - marks[phase] for t in watch.rewrites if marks[phase] <= t < marks[f"{phase} seen"] + SETTLE_S]
            assert after, f"OpenSM did not rewrite its dump after {phase}"
            marks[f"{phase} dump"] = marks[phase] + after[0]
    print("\nissue 35 timings (s after the console command): "
          + "; ".join(f"{p}: dump {marks[p + ' dump'] - marks[p]:.2f}, engine {marks[p + ' seen'] - marks[p]:.2f}"
                      for n in range(len(CABLES)) for p in (f"cut{n}", f"relink{n}")))
    phases = dict.fromkeys(row["phase"] for row in frames)
    print("frames per phase: " + "; ".join(
        f"{p}: {sum(r['phase'] == p for r in frames)} x {sorted({r['frame'] for r in frames if r['phase'] == p})}, "
        f"routing alerts {sorted({a[0] for r in frames if r['phase'] == p for a in r['alerts']})}" for p in phases))
    print(f"{len(frames)} frames, all opensm-dump; routing events: "
          + " | ".join(f"{e['action']}: {e['message'][:140]}" for e in events))
