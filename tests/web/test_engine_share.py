"""Engine processes share the fabrics on real Redis: a balanced share each, a dead one's taken over (issue 25)."""

import asyncio
import contextlib
import json
import re
import time

import pytest
import websockets

from ibweb.live.share import assign
from tests.web.test_engine_leader import engines

pytestmark = pytest.mark.services

SMALL = [{"name": f"Small {i}", "slug": f"small{i}", "tick_s": 0.5,
          "spec": {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8}, "jobs": []}} for i in range(5)]
SLUGS = ["demo"] + [f["slug"] for f in SMALL]
EVENT = re.compile(r"fabric (\S+): (this process leads|handed over)")


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


def _leads(log_text: str) -> set[str]:
    """The fabrics a process leads now, from its log: the last of 'leads' and 'handed over' for each."""
    now: dict[str, bool] = {}
    for slug, what in EVENT.findall(log_text):
        now[slug] = what == "this process leads"
    return {slug for slug, leads in now.items() if leads}


def _wait_for_shares(group, names: list[str], sizes: list[int], timeout_s: float = 60) -> dict[str, set[str]]:
    deadline = time.monotonic() + timeout_s
    while True:
        shares = {n: _leads(group.logs[n].read_text()) for n in names}
        led = [s for share in shares.values() for s in share]
        if sorted(len(s) for s in shares.values()) == sizes and sorted(led) == sorted(SLUGS):
            return shares
        assert time.monotonic() < deadline, f"fabrics not shared as {sizes}: {shares}"
        time.sleep(0.5)


def test_three_engine_processes_share_six_fabrics_and_a_killed_ones_move_with_their_sequence(tmp_path):
    with engines(tmp_path, fabrics=SMALL) as group:
        for name in ("a", "b", "c"):
            group.start(name, slugs=[])
        shares = _wait_for_shares(group, ["a", "b", "c"], [2, 2, 2])
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
        after = _wait_for_shares(group, ["a", "c"], [3, 3])
    assert watched in after["a"] | after["c"]
    assert len(seqs) >= 12, seqs
    assert seqs == sorted(set(seqs)), f"sequence numbers must keep increasing across the takeover: {seqs}"
    assert longest_gap_s < 15, f"the takeover left the fabric without frames for {longest_gap_s:.1f} s"
