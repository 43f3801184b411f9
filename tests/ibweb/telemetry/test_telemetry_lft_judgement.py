"""OpenSM's dump judged by its content against the discovery, never by timestamps (issue 35).

The two scenes of the issue, on real captures (ibsim ``fat-tree-8.net``, OpenSM ``-D 0x47``,
``Unlink "leaf01"[3]``): OpenSM rewrites its dump right after the cut, before the sweep that
sees it (the dump must stay in use, no "has not changed" re-route); after the relink the new
dump reaches us before the discovery does (our discovery is the older one: no warning, the
dump waits for the next sweep). Plus a dump read half-written at a table's end, re-read.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

from fabric_engine.telemetry import diff_topology, fabric_from_linkinfo, parse_iblinkinfo
from ibweb.telemetry.lft_tracker import ROUTING_CHANGES, RoutingTracker
from ibweb.telemetry.message_parts import held

DATA = Path(__file__).parents[2] / "data" / "telemetry"


def discovered(name: str):
    return fabric_from_linkinfo(parse_iblinkinfo((DATA / name).read_text()), "lab")


def put(path: Path, fixture: str, t: float) -> None:
    """OpenSM (re)writes its dump; ``t`` is only its mtime, which the tracker must not judge by."""
    shutil.copy(DATA / fixture, path)
    os.utime(path, (t, t))


def cabling(old, new) -> list[dict]:
    return [c for c in diff_topology(old, new) if c["kind"] in ROUTING_CHANGES]


FULL, CUT = "iblinkinfo.txt", "iblinkinfo_unlinked.txt"


def test_a_dump_rewritten_before_the_sweep_saw_the_cut_stays_in_use(tmp_path):
    full, cut = discovered(FULL), discovered(CUT)
    dump = tmp_path / "opensm-lfts.dump"
    put(dump, "opensm-lfts.dump", time.time() - 60)
    tracker = RoutingTracker(dump, "ftree", wait_s=0.01)
    assert tracker.on_topology(full)["action"] == "loaded"
    # OpenSM re-routes 0.2 s after the cut; a tick reads the new dump while our discovery still shows the cable
    put(dump, "opensm-lfts_unlinked.dump", time.time())
    event = tracker.poll(full)
    assert (event["action"], event["severity"], tracker.source) == ("reloaded", "info", "opensm-dump")
    # the sweep that sees the cut: the dump did not change since, and it agrees with the cut cabling
    event = tracker.on_topology(cut, cabling(full, cut))
    assert (event["action"], event["severity"], tracker.source) == ("reloaded", "info", "opensm-dump")
    assert "after link down" in event["message"] and "changed" not in event["message"]
    assert tracker.status()["dead_entries"] == 0 and tracker.routing.fabric is cut


def test_a_dump_newer_than_the_discovery_waits_for_the_next_sweep_without_a_warning(tmp_path):
    full, cut = discovered(FULL), discovered(CUT)
    dump = tmp_path / "opensm-lfts.dump"
    put(dump, "opensm-lfts_unlinked.dump", time.time())
    asked = []

    def rediscover():
        asked.append(1)
        return full  # the cable is back: a fresh iblinkinfo sees it

    tracker = RoutingTracker(dump, "ftree", rediscover=rediscover, wait_s=0.01)
    assert tracker.on_topology(cut)["action"] == "loaded" and asked == []
    in_use = tracker.routing
    # the relink: OpenSM's new dump routes through leaf01 port 3, which our (older) discovery shows without a cable
    put(dump, "opensm-lfts.dump", time.time() - 3600)  # an mtime older than the last one: never asked
    assert tracker.poll(cut) is None and asked == [1]
    assert tracker.routing is in_use and tracker.source == "opensm-dump"
    assert tracker.poll(cut) is None and asked == [1]  # kept for the next sweep, not judged every tick
    event = tracker.on_topology(full, cabling(cut, full))
    assert (event["action"], event["severity"], tracker.source) == ("reloaded", "info", "opensm-dump")
    assert "after link up" in event["message"] and tracker.status()["dead_entries"] == 0


def test_a_sweep_older_than_the_dump_uses_it_and_says_so_exactly(tmp_path):
    full, cut = discovered(FULL), discovered(CUT)
    dump = tmp_path / "opensm-lfts.dump"
    put(dump, "opensm-lfts.dump", time.time())
    tracker = RoutingTracker(dump, "ftree", rediscover=lambda: full, wait_s=0.01)
    event = tracker.on_topology(cut)  # the sweep saw the cut; the cable is back already, and so is the dump
    assert (event["action"], event["severity"], tracker.source) == ("loaded", "info", "opensm-dump")
    assert "agrees with a fresh discovery (link up: " in event["message"]
    assert "11 entries lead out of ports without a cable (leaf01 port 3: 7, spine01 port 1: 4)" in event["message"]


def test_a_dump_that_disagrees_with_both_gives_way_with_what_disagreed(tmp_path):
    full, cut = discovered(FULL), discovered(CUT)
    dump = tmp_path / "opensm-lfts.dump"
    put(dump, "opensm-lfts.dump", time.time())
    asked = []
    tracker = RoutingTracker(dump, "minhop", rediscover=lambda: asked.append(1) or cut, rereads=2, wait_s=0.01)
    event = tracker.on_topology(cut, cabling(full, cut))
    assert (event["action"], event["severity"], tracker.source) == ("computed", "warning", "computed")
    assert "the dump read 3 times, the discovery as often" in event["message"] and len(asked) == 3
    assert "spine01 routes LID 1 (gpu0001) out of port 1, which has no cable" in event["message"]
    assert tracker.poll(cut) is None and len(asked) == 3  # the same dump is not judged again
    put(dump, "opensm-lfts_unlinked.dump", time.time() - 3600)  # OpenSM re-routed: loaded, whatever its mtime
    event = tracker.poll(cut)
    assert (event["action"], event["severity"], tracker.source) == ("reloaded", "info", "opensm-dump")


def test_a_dump_read_half_written_at_a_tables_end_is_read_again(tmp_path):
    full = discovered(FULL)
    dump = tmp_path / "opensm-lfts.dump"
    text = (DATA / "opensm-lfts.dump").read_text()
    dump.write_text("".join(text.partition("lids dumped\n")[:2]))  # one whole table so far: it parses
    tracker = RoutingTracker(dump, "ftree", wait_s=0.3)
    writer = threading.Timer(0.1, dump.write_text, (text,))
    writer.start()
    try:
        judgement = tracker.judge(full)
    finally:
        writer.join()
    assert (judgement.verdict, judgement.reads) == ("agrees", 2)
    # never completed: it gives way, naming the tables it lacks
    dump.write_text("".join(text.partition("lids dumped\n")[:2]))
    event = RoutingTracker(dump, "ftree", rereads=1, wait_s=0.01).on_topology(full)
    assert event["severity"] == "warning" and f"no table for {full.num_switches - 1} switches" in event["message"]


def test_a_sweep_that_sees_the_cut_before_opensm_rewrote_reads_the_dump_again(tmp_path):
    full, cut = discovered(FULL), discovered(CUT)
    dump = tmp_path / "opensm-lfts.dump"
    put(dump, "opensm-lfts.dump", time.time())
    tracker = RoutingTracker(dump, "ftree", wait_s=0.3)
    tracker.on_topology(full)
    # our sweep saw the cut first; OpenSM's heavy sweep rewrites the dump a moment later
    rewrite = threading.Timer(0.1, put, (dump, "opensm-lfts_unlinked.dump", time.time() - 3600))
    rewrite.start()
    try:
        event = tracker.on_topology(cut, cabling(full, cut))
    finally:
        rewrite.join()
    assert (event["action"], event["severity"], tracker.source) == ("reloaded", "info", "opensm-dump")
    assert tracker.status()["dead_entries"] == 0


def test_a_dump_line_the_reader_refuses_is_not_quoted_by_the_event(tmp_path):
    """The reader's error says where (file and line) and what, not the dump's text: an entry's comment names a host,
    perhaps one the discovery lacks, which no view could relabel (issue 42); the switches it names stay."""
    full = discovered(FULL)
    dump = tmp_path / "opensm-lfts.dump"
    text = (DATA / "opensm-lfts.dump").read_text()
    entry = "0x0001 001 # Channel Adapter portguid 0xb83fd20300000011: 'gpu0001'"
    assert entry in text
    dump.write_text(text.replace(entry, "0x0001 1 # Channel Adapter portguid 0xb83fd20300000099: 'gpu0099'", 1))
    tracker = RoutingTracker(dump, "minhop", rereads=0)
    event = tracker.on_topology(full)
    assert event["severity"] == "warning" and event["action"] == "computed", event
    assert f"cannot use the LFT dump: {dump}:2: partial entry '…': the port has 1 digit(s)" in event["message"]
    shown = repr(event) + repr(tracker.status())
    assert "gpu0099" not in shown and "b83fd20300000099" not in shown
    dump.write_text(text.replace("('leaf01'):\n", "('leaf01'):\ngpu0099 leaf01 0xb83fd20300000099\n", 1))
    event = tracker.poll(full)  # a changed dump that cannot be read: the routing in use stays
    assert event["action"] == "kept" and f"{dump}:2: cannot parse '…'" in event["message"], event["message"]
    assert "gpu0099" not in repr(event) and "b83fd20300000099" not in repr(event)


def test_a_fresher_discoverys_changes_are_quoted_on_the_discovery_in_use(tmp_path):
    """The event of a dump newer than the discovery quotes the fresh discovery's changes as parts of the discovery
    in use (its node indices), a host only the fresh one holds as an object with its tenants there (none without a
    way to read them: hidden below ``ALL``), so each view can render it (issue 42)."""
    fresh = discovered(FULL)
    lines = (DATA / CUT).read_text().splitlines(keepends=True)  # the cut cabling, gpu0005 not yet seen
    in_use = fabric_from_linkinfo(parse_iblinkinfo("".join(x for x in lines if "gpu0005" not in x
                                                           and "0xb83fd20300000051" not in x)), "lab")
    dump = tmp_path / "opensm-lfts.dump"
    put(dump, "opensm-lfts.dump", time.time())
    asked = []

    def objects(changes, holder):
        asked.append(holder)
        return [{**c, "gone": [{**g, "tenants": ["globex"]} for g in c.get("gone", [])]} for c in held(changes, holder,
                                                                                                      None)]

    for tracker, tenants in ((RoutingTracker(dump, "ftree", rediscover=lambda: fresh, wait_s=0.01), []),
                             (RoutingTracker(dump, "ftree", rediscover=lambda: fresh, wait_s=0.01, objects=objects),
                              ["globex"])):
        event = tracker.on_topology(in_use)
        assert "agrees with a fresh discovery (gpu0005 appeared; " in event["message"], event["message"]
        gone = {g["slot"]: g for g in event["gone"]}  # gpu0005 appeared; the cable to it came up
        assert [(g["name"], g["tenants"], event["nodes"][k]) for k, g in gone.items()] == [("gpu0005", tenants, -1)] * 2
        labels = [gone[k]["name"] if k in gone else str(in_use.node_name[n]) for k, n in enumerate(event["nodes"])]
        assert event["text"].format(*labels) == event["message"] and event["nodes"].count(-1) == 2
    assert asked == [fresh]
