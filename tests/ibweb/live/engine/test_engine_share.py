"""Engine processes share the fabrics on real Redis: a balanced share each, a dead one's taken over (issue 25)."""

import asyncio
import contextlib
import json
import re
import time

import pytest
import websockets
from redis.asyncio import Redis

from ibweb.live.engine.share import FabricShare, assign
from tests.ibweb.live.engine.test_engine_leader import engines
from tests.support.engine_share import wait_for_shares
from tests.support.services import require_redis

pytestmark = pytest.mark.services

SMALL = [{"name": f"Small {i}", "slug": f"small{i}", "tick_s": 0.5,
          "spec": {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8}, "jobs": []}} for i in range(5)]
SLUGS = ["demo"] + [f["slug"] for f in SMALL]


def test_assignment_is_balanced_and_only_to_members_that_run_the_fabric():
    members = {f"p{i}": range(1, 17) for i in range(4)}
    loads = sorted(list(assign(members).values()).count(m) for m in members)
    assert loads == [4, 4, 4, 4]
    three = {m: f for m, f in members.items() if m != "p3"}
    assert sorted(list(assign(three).values()).count(m) for m in three) == [5, 5, 6]
    partial = {"p0": [1, 2, 3, 4], "p1": [1, 2], "p2": [9]}
    got = assign(partial)
    assert got[9] == "p2" and all(got[f] in ("p0", "p1") for f in (1, 2, 3, 4))
    assert assign({}) == {} and assign({"p0": []}) == {}


def test_deployments_on_one_redis_share_only_among_their_own_processes():
    url = require_redis(db=7)

    async def beats() -> list[dict[int, str]]:
        shares = [FabricShare(url, namespace=ns, token=token)
                  for ns, token in (("site-a", "a1"), ("site-a", "a2"), ("site-b", "b1"))]
        try:
            for _ in range(2):
                for share in shares:
                    await share.beat([1, 2])
            return [share.assignment for share in shares]
        finally:
            for share in shares:
                await share.leave()

    a1, a2, b1 = asyncio.run(beats())
    assert a1 == a2 and sorted(a1.values()) == ["a1", "a2"], a1
    assert b1 == {1: "b1", 2: "b1"}, "a process of another deployment took a share"


def test_three_engine_processes_share_six_fabrics_and_a_killed_ones_move_with_their_sequence(tmp_path):
    with engines(tmp_path, fabrics=SMALL) as group:
        for name in ("a", "b", "c"):
            group.start(name, slugs=[])
        shares = wait_for_shares(group, ["a", "b", "c"], SLUGS, [2, 2, 2])
        victim = "b"
        watched = sorted(shares[victim])[0]

        async def watch() -> tuple[list[int], float]:
            seqs, times = [], []
            url = f"{group.server.ws_url}/ws/fabrics/{watched}/live/"
            async with websockets.connect(url, max_size=None) as ws:
                end = time.monotonic() + 25
                while time.monotonic() < end:
                    with contextlib.suppress(TimeoutError):
                        msg = json.loads(await asyncio.wait_for(ws.recv(), 1))
                        if msg["type"] == "frame":
                            seqs.append(msg["seq"])
                            times.append(time.monotonic())
                    if len(seqs) == 4 and group.procs[victim].poll() is None:
                        group.procs[victim].kill()
            gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
            return seqs, max(gaps)

        seqs, longest_gap_s = asyncio.run(watch())
        after = wait_for_shares(group, ["a", "c"], SLUGS, [3, 3])
    assert watched in after["a"] | after["c"]
    assert len(seqs) >= 12, seqs
    assert seqs == sorted(set(seqs)), f"sequence numbers must keep increasing across the takeover: {seqs}"
    assert longest_gap_s < 15, f"the takeover left the fabric without frames for {longest_gap_s:.1f} s"


def test_a_process_that_hands_fabrics_over_drops_them_and_builds_them_again_when_they_return(tmp_path):
    def started(name: str, slug: str) -> int:
        return group.logs[name].read_text().count(f"fabric {slug}: engine started")

    with engines(tmp_path, fabrics=SMALL) as group:
        group.start("a", slugs=[])
        wait_for_shares(group, ["a"], SLUGS, [6])
        group.start("b", slugs=[])
        shares = wait_for_shares(group, ["a", "b"], SLUGS, [3, 3])
        deadline = time.monotonic() + 15  # a logs the drop once its runner has let go, a moment after b leads
        while (dropped := set(re.findall(r"fabric (\S+): dropped after the hand-over",
                                         group.logs["a"].read_text()))) != shares["b"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert dropped == shares["b"], f"a dropped {dropped}, b leads {shares['b']}"
        assert all(started("a", slug) == 1 for slug in SLUGS)
        group.procs["b"].kill()
        wait_for_shares(group, ["a"], SLUGS, [6])
        # the fabrics that came back were built again; the ones a kept were not
        assert {slug for slug in SLUGS if started("a", slug) == 2} == shares["b"]
        assert {slug for slug in SLUGS if started("a", slug) == 1} == shares["a"]


@pytest.mark.django_db(transaction=True)
def test_a_build_and_ticks_that_outlast_the_lock_are_made_by_one_process_only(monkeypatch, settings):
    """The leading process renews the fabric's lock while it builds and while it ticks: the other sees the
    fabric led, and waits.

    Renewed only between ticks, a build longer than a free lock's grace (ttl + 2 beats: 5 s) looked like an
    abandoned fabric, and a tick longer than the lock's 3 s let it lapse: every process built the fabric and
    led it in turn (seen with 8 planes of 16,384 hosts in two processes on two cores).
    """
    from ibweb.fabrics.models import Fabric
    from ibweb.live.engine.emulated import EmulatedSource
    from ibweb.live.engine.runner import FabricRunner

    url = require_redis(db=7)
    settings.REDIS_URL, settings.REDIS_NAMESPACE = url, f"slow-engine-{time.monotonic_ns()}"
    row = Fabric.objects.create(**{**SMALL[0], "tick_s": 0.5})
    builds, steppers = [], set()
    build, step = EmulatedSource.start, EmulatedSource.step

    async def slow_build(source, progress) -> None:
        builds.append(id(source))
        await asyncio.sleep(8)
        await build(source, progress)

    async def slow_step(source, seq, now):
        steppers.add(id(source))
        await asyncio.sleep(4)
        return await step(source, seq, now)

    monkeypatch.setattr(EmulatedSource, "start", slow_build)
    monkeypatch.setattr(EmulatedSource, "step", slow_step)

    async def two_processes() -> list[int]:
        shares = [FabricShare(url, token=t, namespace=settings.REDIS_NAMESPACE) for t in ("p", "q")]
        runners = [FabricRunner(row, share=s) for s in shares]

        async def beat() -> None:
            while True:
                for s in shares:
                    await s.beat([row.pk])
                await asyncio.sleep(0.5)

        async def watch_lock() -> None:  # from the first time it is taken, the lock never lapses
            client = Redis.from_url(url)
            key, taken = f"{settings.REDIS_NAMESPACE}:leader:{row.pk}", False
            try:
                while True:
                    held = bool(await client.exists(key))
                    if taken and not held:
                        lapses.append(time.monotonic())
                    taken = taken or held
                    await asyncio.sleep(0.2)
            finally:
                await client.aclose()

        loop = asyncio.get_running_loop()
        beating, watching = loop.create_task(beat()), loop.create_task(watch_lock())
        running = [loop.create_task(r.run()) for r in runners]
        await asyncio.sleep(24)
        watching.cancel()
        for r in runners:
            r.request_stop()
        await asyncio.gather(*running)
        beating.cancel()
        for s in shares:
            await s.leave()
        return [r.seq for r in runners]

    lapses: list[float] = []
    seqs = asyncio.run(two_processes())
    assert len(builds) == 1, f"built {len(builds)} times"
    assert len(steppers) == 1, "the fabric was led by both processes"
    assert not lapses, f"the lock lapsed {len(lapses)} times while its leader ticked"
    assert sorted(seqs)[0] == 0 and sorted(seqs)[1] >= 2, seqs
