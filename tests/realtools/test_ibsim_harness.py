"""The reusable ibsim harness itself: start, console, clients, stop by PID."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from fabric_engine.topology.generate import fat_tree

pytestmark = pytest.mark.realtools


def test_harness_runs_tools_console_and_stops_by_pid(ibsim):
    sim = ibsim(fat_tree(hosts=4, radix=4, speed="HDR"), sim_host="gpu0001", tools=("smpquery",))
    assert sim.sockname.startswith("ibweb-") and sim.pid
    dump = sim.console('Dump "leaf01"')
    assert 'Switch 4 "leaf01"' in dump and "nodeguid 98039b0300000001" in dump
    assert sim.run_opensm(["-o"]).returncode == 0
    assert (sim.workdir / "opensm" / "guid2lid").exists()
    out = sim.run(["smpquery", "nodedesc", "1"]).stdout  # by LID: needs the LFTs OpenSM just set
    assert "leaf01" in out
    daemon = sim.start_opensm(["-s", "0"], cache_dir=sim.workdir / "osm-daemon")
    pid = sim.pid
    sim.stop()
    assert sim.proc.poll() is not None and daemon.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_two_simulators_do_not_share_a_socket(ibsim):
    a = ibsim(fat_tree(hosts=2, radix=4, speed="HDR"), sim_host="gpu0001")
    b = ibsim(fat_tree(hosts=4, radix=4, speed="EDR"), sim_host="gpu0003")
    assert a.sockname != b.sockname
    assert "4xHDR" in a.run(["ibnetdiscover"]).stdout
    assert "4xEDR" in b.run(["ibnetdiscover"]).stdout


def _attached(sim) -> int:
    return sim.console("Attached").count("Client ")


def test_clients_killed_while_attached_are_detached_so_the_next_tool_connects(ibsim):
    sim = ibsim(fat_tree(hosts=4, radix=4, speed="HDR"), sim_host="gpu0001", tools=("smpquery", "ibsysstat"))
    sim.run_opensm(["-o"])
    # ten clients (ibsim's IBSIM_MAX_CLIENTS) serving queries (ibsysstat -S), then killed: umad2sim detaches at
    # exit only, so each keeps its slot
    waiting = [subprocess.Popen(["ibsysstat", "-S"], env=sim.client_env(), cwd=sim.workdir, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) for _ in range(10)]
    deadline = time.monotonic() + 30
    while _attached(sim) < 10:
        assert time.monotonic() < deadline, "the ten clients never attached"
        time.sleep(0.1)
    refused = subprocess.run(["smpquery", "nodedesc", "1"], env=sim.client_env(), capture_output=True, text=True)
    assert refused.returncode != 0 and "can't open new connection" in sim.log()
    for proc in waiting:
        proc.kill()
        proc.wait()
    assert _attached(sim) == 10, "killed, they are still attached"
    assert "leaf01" in sim.run(["smpquery", "nodedesc", "1"]).stdout
    assert _attached(sim) == 0
    assert sim.reap_dead_clients() == []
