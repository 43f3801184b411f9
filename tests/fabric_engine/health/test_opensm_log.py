"""OpenSM's log as link-down evidence: entries as ``osm_log`` writes them, the unlinkings and linkings of ports, the
link state change traps that time them, a log read in pieces, and the evidence fed to the down tracker.

The lines are written from OpenSM's format strings (``osm_log.c``: ``"%s %02d %02d:%02d:%02d %06d [%04X] 0x%02x ->
%s"``, ``OSM_LOG`` prefixing the function; ``osm_port_info_rcv.c``, ``osm_drop_mgr.c``, ``osm_node_info_rcv.c``,
``osm_trap_rcv.c``, ``osm_inform.c``), not copied from a log.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.health import opensm_log
from fabric_engine.health.downs import EXACT, DownTracker
from fabric_engine.health.opensm_log import TailState, feed, read, tail

NOW = datetime(2026, 3, 5, 12, 0, tzinfo=UTC).timestamp()
SW, SPINE, HCA = 0x98039B0300000001, 0x98039B0300000002, 0xB83FD20300000010


def at(hms: str, us: int = 0, day: str = "Mar 05") -> float:
    return datetime.strptime(f"2026 {day} {hms}", "%Y %b %d %H:%M:%S").replace(tzinfo=UTC).timestamp() + us / 1e6


def entry(hms: str, us: int, level: int, message: str, thread: str = "420F66C0", day: str = "Mar 05") -> str:
    return f"{day} {hms} {us:06d} [{thread}] 0x{level:02x} -> {message}\n"


def trap(hms: str, us: int, lid: int = 1, guid: int = SW) -> str:
    return (entry(hms, us, 0x01, f"log_trap_info: Received Generic Notice type:1 num:128 (Link state change) "
                                 f"Producer:2 (Switch) from LID:{lid} TID:0x0000000000000000")
            + entry(hms, us + 30, 0x04, "Generic Notice dump:\n\t\t\t\ttype.....................1\n"
                                        "\t\t\t\ttrap_num.................128")
            + entry(hms, us + 60, 0x02, f'log_notice: Reporting Urgent Notice "Link state change" from switch LID '
                                        f"{lid}, GUID 0x{guid:016x}"))


def unlink(hms: str, us: int, a: tuple[int, int], b: tuple[int, int], why: str = "") -> str:
    return entry(hms, us, 0x04, f"pi_rcv_process_switch_ext_port: Unlinking local node 0x{a[0]:016x}, port {a[1]}"
                                f"\n\t\t\t\tand remote node 0x{b[0]:016x}, port {b[1]}{why}")


def link(hms: str, us: int, a: tuple[int, int], b: tuple[int, int]) -> str:
    return entry(hms, us, 0x08, f"ni_rcv_set_links: Creating new link between:\n\t\t\t\tnode 0x{a[0]:x}, port "
                                f"number {a[1]} and\n\t\t\t\tnode 0x{b[0]:x}, port number {b[1]}")


LOG = (entry("11:58:00", 1, 0x80, "Entering MASTER state")
       + trap("11:59:00", 100)
       + entry("11:59:00", 400, 0x04, "trap_rcv_process_request: Forcing heavy sweep. Received trap:128")
       + unlink("11:59:00", 900, (SW, 3), (SPINE, 1))
       + trap("11:59:20", 0)
       + link("11:59:21", 0, (SW, 3), (SPINE, 1))
       + unlink("11:59:40", 0, (SW, 1), (HCA, 1), " due to missing PortInfo"))


def test_unlinkings_and_linkings_become_port_changes_timed_by_their_traps():
    warnings: list = []
    ev = read(LOG, "opensm.log", warnings, now=NOW, tz=UTC)
    assert warnings == []
    rows = sorted(zip(ev.t.tolist(), ev.guid.tolist(), ev.port.tolist(), ev.up.tolist(), ev.exact.tolist(),
                      strict=True))
    assert rows == [
        (at("11:59:00", 100), SW, 3, 0, True), (at("11:59:00", 100), SPINE, 1, 0, True),  # the trap's time
        (at("11:59:20"), SW, 3, 1, True), (at("11:59:20"), SPINE, 1, 1, True),
        (at("11:59:40"), SW, 1, 0, False), (at("11:59:40"), HCA, 1, 0, False),  # that trap timed port 3's change
    ]
    # each trap is logged received (by LID), then reported (by LID and GUID): one trap, at its receipt
    assert ev.trap_lid.tolist() == [1, 1] and ev.trap_guid.tolist() == [SW, SW]
    assert ev.trap_t.tolist() == [at("11:59:00", 100), at("11:59:20")] and ev.trap_line.tolist() == [2, 10]


def test_a_trap_older_than_the_window_does_not_time_a_change():
    text = trap("11:00:00", 0) + unlink("11:01:00", 0, (SW, 3), (SPINE, 1))
    ev = read(text, now=NOW, tz=UTC)
    assert not ev.exact.any() and ev.t.tolist() == [at("11:01:00")] * 2
    assert read(text, now=NOW, tz=UTC, trap_window_s=120).exact.all()


def test_the_year_is_the_one_before_now_and_the_zone_is_the_sm_hosts():
    jan = datetime(2027, 1, 1, 0, 5, tzinfo=UTC).timestamp()
    ev = read(unlink("23:59:59", 0, (SW, 3), (SPINE, 1), ) .replace("Mar 05", "Dec 31"), now=jan, tz=UTC)
    assert ev.t[0] == datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()
    from zoneinfo import ZoneInfo

    berlin = read(unlink("12:00:00", 0, (SW, 3), (SPINE, 1)), now=NOW, tz=ZoneInfo("Europe/Berlin"))
    assert berlin.t[0] == at("11:00:00")  # CET is UTC+1 in March


def test_a_terminal_capture_is_read_with_its_prompts_as_warnings():
    text = ("[root@sm01 ~]# tail -n 20 /var/log/opensm.log\n" + LOG + "[root@sm01 ~]# ")
    warnings: list = []
    ev = read(text, "capture", warnings, now=NOW, tz=UTC)
    assert len(ev) == 6
    assert [(w["line"], w["reason"]) for w in warnings] == [(1, "shell prompt"), (LOG.count("\n") + 2, "shell prompt")]
    with_text = read("OpenSM log follows\n" + LOG, now=NOW, tz=UTC, warnings=(w := []))
    assert len(with_text) == 6 and w[0]["line"] == 1 and "not an OpenSM log entry" in w[0]["reason"]


def test_an_entry_out_of_range_names_its_line():
    with pytest.raises(FormatError, match=r"opensm\.log:2: port 300"):
        read(entry("11:00:00", 0, 2, "x") + unlink("11:00:01", 0, (SW, 300), (SPINE, 1)), "opensm.log", now=NOW)
    with pytest.raises(FormatError, match=r"opensm\.log:1: .*Feb 30"):
        read(unlink("11:00:00", 0, (SW, 3), (SPINE, 1)).replace("Mar 05", "Feb 30"), "opensm.log", now=NOW)
    assert len(read(entry("11:00:00", 0, 2, "x", day="Feb 30"), now=NOW)) == 0  # an entry not read: not checked
    with pytest.raises(FormatError, match=r"opensm\.log:1: LID 60000"):
        read(trap("11:00:00", 0, lid=60000), "opensm.log", now=NOW)


def test_the_log_is_read_in_pieces_holding_back_what_is_not_written_yet(tmp_path):
    path = tmp_path / "opensm.log"
    head = trap("11:59:00", 100) + unlink("11:59:00", 900, (SW, 3), (SPINE, 1))
    first_line, rest = head.rsplit("\n\t\t\t\tand", 1)
    path.write_text(first_line + "\n")  # the unlinking's second line not written yet
    ev, state = tail(path, now=NOW, tz=UTC)
    assert len(ev) == 0 and len(ev.trap_t) == 1 and state.offset == len(head.split("Mar 05 11:59:00 000900")[0])
    with open(path, "a") as fh:
        fh.write("\t\t\t\tand" + rest + entry("11:59:30", 0, 2, "a line being writ")[:-1])  # no newline yet
    ev, state2 = tail(path, state, now=NOW, tz=UTC)
    assert len(ev) == 2 and ev.exact.all() and len(ev.trap_t) == 0
    assert state2.offset == len(head) and state2.line == head.count("\n") + 1
    ev, same = tail(path, state2, now=NOW, tz=UTC)
    assert len(ev) == 0 and same.offset == state2.offset
    # OpenSM truncates its log at its -L limit: read from the start again, with a warning
    path.write_text(unlink("12:00:00", 0, (SW, 4), (SPINE, 2)))
    warnings: list = []
    ev, state3 = tail(path, same, warnings, now=NOW + 60, tz=UTC)
    assert ev.port.tolist() == [4, 2] and "rotated or truncated" in warnings[0]["reason"]
    # logrotate: a new file under the name
    os.rename(path, tmp_path / "opensm.log.1")
    path.write_text(unlink("12:00:10", 0, (SW, 5), (SPINE, 3)) * 30)
    ev, _ = tail(path, TailState.from_json(state3.as_json()), (w := []), now=NOW + 60, tz=UTC)
    assert len(ev) == 60 and w


def test_fed_to_the_down_tracker_a_down_is_exact_and_what_a_sweep_saw_later_is_left_out():
    tr = DownTracker()
    up0 = at("11:58:00")
    tr.observe(up0, np.array([SW, SPINE, SW, HCA], np.uint64), [3, 1, 1, 1], [1, 1, 1, 1])
    ev = read(LOG, now=NOW, tz=UTC)
    assert feed(tr, ev) == 6
    e = tr.episodes()
    closed = np.flatnonzero(~e["open"])
    assert sorted(zip(e["guid"][closed].tolist(), e["port"][closed].tolist(), strict=True)) == [(SW, 3), (SPINE, 1)]
    assert (e["start_lo"][closed] == at("11:59:00", 100)).all() and (e["end_hi"][closed] == at("11:59:20")).all()
    assert (e["evidence"][closed] & EXACT).all()
    assert e["duration_lo"][closed] == pytest.approx([20 - 100e-6] * 2)
    assert e["open"].sum() == 2  # the host's link: still down
    # a sweep that already saw the host's port down after the log's time: the log's older change is left out
    tr2 = DownTracker()
    tr2.observe(up0, np.array([SW, HCA], np.uint64), [1, 1], [1, 1])
    tr2.observe(at("11:59:50"), np.array([SW, HCA], np.uint64), [1, 1], [0, 0])
    assert feed(tr2, read(unlink("11:59:40", 0, (SW, 1), (HCA, 1)), now=NOW, tz=UTC)) == 0


def test_many_changes_of_one_port_are_observed_in_order():
    text = "".join(unlink(f"11:{m:02d}:00", 0, (SW, 3), (SPINE, 1)) + link(f"11:{m:02d}:30", 0, (SW, 3), (SPINE, 1))
                   for m in range(10))
    tr = DownTracker()
    assert feed(tr, read(text, now=NOW, tz=UTC)) == 40
    assert tr.status()["downs_24h"].tolist() == [10, 10]


def test_looks_like():
    assert opensm_log.looks_like("[root@sm ~]# cat log\n" + LOG)
    assert not opensm_log.looks_like("# PortExtendedSpeedsCounters counters: Lid 1 port 1\n")
