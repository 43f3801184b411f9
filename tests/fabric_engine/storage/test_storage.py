"""Storage: backends as virtual links, striping, data loading, checkpoints and what they cost."""

import numpy as np
import pytest

from fabric_engine.emulator import Emulator
from fabric_engine.errors import FabricEngineError
from fabric_engine.flows import max_min_fair
from fabric_engine.routing import route
from fabric_engine.scenario import DEMO_SPEC, build_emulator
from fabric_engine.storage import Checkpoint, StorageConfig, StorageModel, stripe_bytes, stripe_servers
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import Job


@pytest.fixture(scope="module")
def fab():
    """Leaves of 3 GPU hosts with one 400 Gb/s up-link each to a single spine; one 2-port server on sleaf01."""
    f = fat_tree(hosts=6, radix=4, oversubscription=3, storage_servers=1, storage_ports=2)
    return f, route(f)


def _solve(model, clients, write=False, demand=np.inf):
    n = len(clients)
    flows, inc = model.transfers(np.asarray(clients), np.zeros(n, int), np.full(n, write), demand=np.full(n, demand))
    cap = np.concatenate([model.fabric.capacity_gbps, model.backend_gbps])
    return max_min_fair(inc, cap, flows.demand_gbps), inc


def test_single_client_is_bound_by_min_of_nic_and_backend(fab):
    f, r = fab
    # Backend slower than the client's NIC (400 Gb/s): the backend bounds it.
    rate, inc = _solve(StorageModel(r, StorageConfig(read_gbps=100.0)), f.hosts[:1])
    assert rate[0] == pytest.approx(100.0)
    # Backend faster: the client's single 400 Gb/s port does (the server has two).
    rate, _ = _solve(StorageModel(r, StorageConfig(read_gbps=1000.0)), f.hosts[:1])
    assert rate[0] == pytest.approx(400.0)
    # Writes cross the write backend, not the read one.
    rate, inc_w = _solve(StorageModel(r, StorageConfig(read_gbps=1000.0, write_gbps=50.0)), f.hosts[:1], write=True)
    e = 2 * f.num_links
    assert rate[0] == pytest.approx(50.0) and inc_w[0, e + 1] == 1.0 and inc_w[0, e] == 0.0
    # The flow is split over the server's two ports: half its rate on each server link.
    server_links = f.port_out_link[f.port_offset[f.node("stor001")] + np.arange(2)]
    assert np.allclose(inc[0, server_links].toarray(), 0.5)


def test_many_clients_share_the_backend_fairly(fab):
    f, r = fab
    model = StorageModel(r, StorageConfig(read_gbps=300.0))
    rate, _ = _solve(model, f.hosts[[0, 1, 3, 4]])
    assert np.allclose(rate, 75.0)
    # A client that asks for less leaves its share to the others.
    n = 4
    flows, inc = model.transfers(f.hosts[[0, 1, 3, 4]], np.zeros(n, int), np.zeros(n, bool),
                                 demand=np.array([30.0, np.inf, np.inf, np.inf]))
    rate = max_min_fair(inc, np.concatenate([f.capacity_gbps, model.backend_gbps]), flows.demand_gbps)
    assert rate[0] == pytest.approx(30.0) and np.allclose(rate[1:], 90.0)


def test_striping_is_round_robin_and_exact():
    assert stripe_servers(np.array([0, 1, 7]), 3, 8).tolist() == [[0, 1, 2], [1, 2, 3], [7, 0, 1]]
    assert stripe_servers(np.array([2]), -1, 4).tolist() == [[2, 3, 0, 1]]
    per = stripe_bytes(7.5 * 2**20, 4, 2**20, 8)
    assert per.tolist() == [2 * 2**20, 2 * 2**20, 2 * 2**20, 1.5 * 2**20] and per.sum() == 7.5 * 2**20
    assert stripe_bytes(100.0, 4, 2**20, 8).tolist() == [100.0, 0.0, 0.0, 0.0]
    assert Checkpoint(7e9, every=10).size_bytes == 7e9 * 14
    with pytest.raises(FabricEngineError, match="every"):
        Checkpoint(1e9, every=0)


def test_data_loading_reads_are_reported_per_server_job_and_tenant(fab):
    f, r = fab
    model = StorageModel(r, StorageConfig(read_gbps=200.0))
    # Asks for more than the backend gives: the backend is the bottleneck.
    job = Job("loader", "acme", f.hosts[:4], buffer_bytes=0, compute_s=1.0, read_gbps=1000.0)
    emu = Emulator(r, [job], tick_s=1.0, storage=model)
    st = emu.step(now=0).storage
    server = st["servers"][0]
    assert server["read_gbps"] == pytest.approx(200.0) and server["read_bottleneck"] == "backend"
    assert server["write_gbps"] == 0 and server["write_bottleneck"] is None and server["network_gbps"] == 800.0
    assert st["jobs"][0]["read_gbps"] == pytest.approx(200.0)
    assert st["tenants"][0] == {"tenant": "acme", "read_gbps": 200.0, "write_gbps": 0.0}
    # A reader within the backend's means is held back by nothing.
    emu = Emulator(r, [Job("loader", "acme", f.hosts[:4], buffer_bytes=0, compute_s=1.0, read_gbps=100.0)],
                   storage=model)
    st = emu.step(now=0).storage
    assert st["servers"][0]["read_gbps"] == pytest.approx(100.0) and st["servers"][0]["read_bottleneck"] is None


def test_checkpoint_duration_and_gpu_time(fab):
    f, r = fab
    model = StorageModel(r, StorageConfig(write_gbps=100.0))
    # 1e9 params x 14 bytes = 112 Gb through a 100 Gb/s write backend: 1.12 s, two GPUs idle meanwhile.
    job = Job("ck", "acme", f.hosts[[0, 3]], buffer_bytes=1e6, compute_s=0.05,
              checkpoint=Checkpoint(1e9, every=5))
    emu = Emulator(r, [job], tick_s=0.5, storage=model)
    states = [emu.step(now=i * 0.5) for i in range(5)]
    phases = [s.jobs[0].phase for s in states]
    assert "checkpoint" in phases
    during = [s for s in states if s.jobs[0].phase == "checkpoint"]
    its = {s.jobs[0].iterations for s in during}
    assert len(its) == 1, "a synchronous job does not iterate while it writes"
    ck = states[-1].storage["jobs"][0]["checkpoint"]
    assert ck["count"] == 1 and ck["state"] == "idle" and ck["last_s"] == pytest.approx(1.12, abs=1e-3)
    assert ck["last_gpu_s"] == pytest.approx(2.24, abs=1e-2)
    server = during[0].storage["servers"][0]
    assert server["write_gbps"] == pytest.approx(100.0) and server["write_bottleneck"] == "backend"
    assert ck["bytes_written"] == pytest.approx(14e9, rel=1e-6)
    assert during[0].storage["jobs"][0]["checkpoint"]["progress"] == pytest.approx(0.5 / 1.12, rel=1e-3)


def test_a_checkpoint_burst_slows_the_allreduce_it_shares_links_with(fab):
    f, r = fab
    h = f.hosts
    model = StorageModel(r, StorageConfig(write_gbps=10_000.0))
    # The ring crosses each leaf's single up-link once (gpu2 -> gpu4 and gpu5 -> gpu1).
    ring = Job("ring", "acme", h[[0, 1, 3, 4]], buffer_bytes=1e9, compute_s=0.0)
    # The writers sit on the same leaves; their checkpoint goes up the same links to the storage leaf.
    ck = Job("ck", "globex", h[[2, 5]], buffer_bytes=1e6, compute_s=0.01, checkpoint=Checkpoint(1e11, every=1))
    emu = Emulator(r, [ring, ck], tick_s=1.0, storage=model)
    states = [emu.step(now=i) for i in range(4)]
    writing = [s for s in states if s.job("ck").phase == "checkpoint"]
    quiet = states[0]
    assert writing, "the checkpoint should start"
    alone = quiet.job("ring").comm_alone_s
    assert alone == pytest.approx(12.0 / 400.0)
    # Sharing each up-link with one write: the ring's crossing transfers get half of it.
    assert writing[0].job("ring").comm_s == pytest.approx(2 * alone, rel=1e-6)
    assert writing[0].job("ring").slowdown == pytest.approx(2.0, rel=1e-6)
    assert writing[0].storage["servers"][0]["write_bottleneck"] == "network"


def test_backend_columns_are_stripped_and_demo_publishes_storage():
    emu = build_emulator(DEMO_SPEC)
    f = emu.fabric
    state = emu.step(now=0)
    assert len(state.rate_gbps) == len(state.offered_gbps) == 2 * f.num_links
    st = state.frame_header({})["storage"]
    assert [s["name"] for s in st["servers"]] == [f"stor{i:03d}" for i in range(1, 9)]
    assert st["totals"]["read_gbps"] == pytest.approx(400 + 800 + 600 + 100 + 200, rel=1e-6)
    assert next(j for j in st["jobs"] if j["id"] == "llama-70b")["checkpoint"]["size_bytes"] == 70e9 * 14
    with pytest.raises(FabricEngineError, match="storage: unknown key"):
        build_emulator({**DEMO_SPEC, "storage": {"bogus": 1}})
    spec = {**DEMO_SPEC, "topology": {**DEMO_SPEC["topology"], "storage_servers": 0}}
    with pytest.raises(FabricEngineError, match="no storage servers"):
        build_emulator(spec)
