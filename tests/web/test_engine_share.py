"""Engine processes share the fabrics on real Redis: a balanced share each, a dead one's taken over (issue 25)."""

import asyncio
import contextlib
import json
import time

import pytest
import websockets

from ibweb.live.share import FabricShare, assign
from tests.engine_share import wait_for_shares
from tests.services import require_redis
from tests.web.test_engine_leader import engines

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
