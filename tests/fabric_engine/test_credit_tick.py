"""The emulator's tick with the credit flow control model (issue 41): the model's rates, the congestion tree,
XmitWait on held ports, per-job spreading, and the size guard."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import fabric_engine.credit_tick as credit_tick
from fabric_engine.backpressure import Hops, credit_rates, order_paths
from fabric_engine.credit_tick import CREDIT_MAX_HOSTS, check_congestion
from fabric_engine.emulator import Emulator
from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import route
from fabric_engine.scenario import build_emulator
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import Job
from fabric_engine.workload.patterns import PATTERNS, PatternFlows

GB = 1e9


def _incast(job: Job, fabric) -> PatternFlows:
    """Every rank but the first writes ``buffer_bytes`` to the first."""
    h = np.asarray(job.hosts, dtype=np.int64)
    return PatternFlows(h[1:], np.full(len(h) - 1, h[0]), np.full(len(h) - 1, float(job.buffer_bytes)))


@pytest.fixture(scope="module")
def fabric():
    """The issue's fabric: 16 hosts on 4 leaves, 4 spines, d-mod-k routes (ftree)."""
    f = fat_tree(hosts=16, radix=8)
    return f, route(f, "ftree")


@pytest.fixture
def incast_jobs(fabric, monkeypatch):
    """An incast to host 0 (three senders beside host 4 on leaf 1, one on h0's leaf, one on leaf 2), and a victim
    job between host 4 and host 8 whose flows share the incast's uplinks (d-mod-k: spine 4 for h0 and h8)."""
    monkeypatch.setitem(PATTERNS, "incast", _incast)
    f, _ = fabric
    h = f.hosts
    return [Job("hot", "t1", h[[0, 1, 5, 6, 7, 9]], pattern="incast", buffer_bytes=GB, compute_s=0.01),
            Job("victim", "t2", h[[4, 8]], pattern="pipeline", buffer_bytes=GB, compute_s=0.01,
                params={"stages": 2})]


def _expected(fabric, src, dst):
    """The credit model's rates of flows ``src -> dst`` alone on the fabric, greedy."""
    f, r = fabric
    inc, _ = r.paths(np.asarray(src), np.asarray(dst), return_broken=True)
    indptr, links = order_paths(sp.csr_matrix(inc), f.dl_src, f.dl_dst)
    hops = Hops.from_paths(indptr, links, len(f.dl_src))
    return credit_rates(hops, f.capacity_gbps, np.full(len(src), np.inf))


def test_tick_gives_the_credit_models_rates_not_max_mins(fabric, incast_jobs):
    f, r = fabric
    h = f.hosts
    src = h[[1, 5, 6, 7, 9, 4, 8]]
    dst = h[[0, 0, 0, 0, 0, 8, 4]]
    model = _expected(fabric, src, dst).rate
    bits = GB * 8e-9
    credit = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit").step(0.0)
    ideal = Emulator(r, incast_jobs, tick_s=1.0).step(0.0)
    # A collective takes as long as its slowest flow at the model's rate.
    assert credit.job("hot").comm_s == pytest.approx(bits / model[:5].min(), rel=1e-6)
    assert credit.job("victim").comm_s == pytest.approx(bits / model[5:].min(), rel=1e-6)
    # The victim shares leaf 1's uplink buffer with three incast flows: spine 4 gives that input half of h0's
    # link's remote half (1/4), 3/4 of the buffer waits for it, so it drains at 1/3 and the victim moves at 1/12
    # of link rate, several times slower than max-min says.
    assert model[5] / f.capacity_gbps.max() == pytest.approx(1 / 12, rel=1e-3)
    assert credit.job("victim").comm_s > 3 * ideal.job("victim").comm_s
    # Spreading: the credit model's collective over max-min's in the same tick.
    assert credit.job("victim").spreading == pytest.approx(credit.job("victim").comm_s / ideal.job("victim").comm_s,
                                                           rel=1e-6)
    assert ideal.job("victim").spreading is None
    assert credit.job("victim").as_dict()["spreading"] > 3


def test_congestion_tree_and_xmit_wait_on_held_ports(fabric, incast_jobs):
    f, r = fabric
    h = f.hosts
    s = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit").step(0.0)
    into_h0 = int(np.flatnonzero(f.dl_dst == h[0])[0])
    up_h4 = _expected(fabric, [h[4]], [h[8]])
    inc, _ = r.paths(np.array([h[4]]), np.array([h[8]]), return_broken=True)
    path = sp.csr_matrix(inc).indices
    leaf = f.dl_dst[path[f.dl_src[path] == h[4]][0]]
    leaf_up = int(path[f.dl_src[path] == leaf][0])  # leaf 1's uplink that the victim shares with the incast
    assert up_h4.rate[0] == pytest.approx(f.capacity_gbps.max())  # alone it runs at link rate
    tree = s.congestion_tree
    assert tree["model"] == "credit"
    assert tree["converged"] and tree["averaged"] == 0  # settled: its rates are its last iterate, not a mean
    assert into_h0 in tree["roots"]
    assert leaf_up in tree["held"] and into_h0 not in tree["held"]
    # XmitWait: the held uplink's port waits for credits; the root sends at full rate and does not.
    assert s.xmit_wait[leaf_up] > 0
    assert s.xmit_wait[into_h0] == 0
    ideal = Emulator(r, incast_jobs, tick_s=1.0).step(0.0)
    assert ideal.congestion_tree is None
    assert s.frame_header({})["congestion_tree"] == tree


def test_xmit_wait_counts_the_offered_load_held_above_the_credit_cap():
    held = credit_tick.credit_xmit_wait_carried(np.array([300.0, 300.0, 100.0]), np.array([100.0, 400.0, 50.0]),
                                                np.array([True, False, True]))
    assert held.tolist() == [100.0, 300.0, 50.0]


def test_size_guard_refuses_large_fabrics_by_name(fabric, incast_jobs, monkeypatch):
    f, r = fabric
    with pytest.raises(FabricEngineError, match=f"at most {CREDIT_MAX_HOSTS:,} hosts"):
        check_congestion("credit", CREDIT_MAX_HOSTS + 1)
    check_congestion("credit", CREDIT_MAX_HOSTS)
    check_congestion("maxmin", 10**6)
    monkeypatch.setattr(credit_tick, "CREDIT_MAX_HOSTS", 8)
    with pytest.raises(FabricEngineError, match="congestion: credit flow control runs on fabrics of at most 8 hosts"):
        Emulator(r, incast_jobs, congestion="credit")
    Emulator(r, incast_jobs)  # max-min has no limit


def test_congestion_control_under_the_credit_model_has_its_own_size_limit(fabric, incast_jobs, monkeypatch):
    f, r = fabric
    assert credit_tick.CREDIT_CC_MAX_HOSTS <= CREDIT_MAX_HOSTS
    limit = credit_tick.CREDIT_CC_MAX_HOSTS
    check_congestion("credit", limit, controlled=True)
    check_congestion("credit", limit + 1)
    with pytest.raises(FabricEngineError, match=f"congestion_control: .* at most {limit:,} hosts .* has {limit + 1:,}"):
        check_congestion("credit", limit + 1, controlled=True)
    check_congestion("maxmin", 10**6, controlled=True)  # max-min ignores it
    monkeypatch.setattr(credit_tick, "CREDIT_CC_MAX_HOSTS", 8)
    with pytest.raises(FabricEngineError, match="congestion_control: the credit model runs congestion control on "
                                                "fabrics of at most 8 hosts"):
        Emulator(r, incast_jobs, congestion="credit", congestion_control=_control())
    emu = Emulator(r, incast_jobs, congestion="credit", congestion_control=_control(enabled=False))
    with pytest.raises(FabricEngineError, match="at most 8 hosts"):
        emu.set_congestion_control(_control())
    assert emu.congestion_control == _control(enabled=False)  # left as it was
    Emulator(r, incast_jobs, congestion_control=_control())  # max-min: the settings are not run


def test_congestion_choice_errors():
    with pytest.raises(FabricEngineError, match="congestion: 'fair' is not one of maxmin, credit"):
        check_congestion("fair", 4)
    with pytest.raises(FabricEngineError, match="static routes"):
        check_congestion("credit", 4, adaptive=True)


def test_scenario_key_chooses_the_model():
    spec = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4},
            "jobs": [{"name": "a", "tenant": "t", "hosts": 8, "pattern": "all_to_all", "buffer_gb": 1}],
            "congestion": "credit"}
    emu = build_emulator(spec)
    assert emu.congestion == "credit"
    s = emu.step(0.0)
    s = emu.step(1.0)
    assert s.congestion_tree is not None and emu.credit_result is not None
    assert build_emulator({**spec, "congestion": "maxmin"}).step(0.0).congestion_tree is None


def test_perfquery_counters_integrate_the_models_xmit_wait(fabric, incast_jobs):
    from fabric_engine.telemetry.counters import COLUMN
    from fabric_engine.telemetry.prometheus import CounterIntegrator

    f, r = fabric
    s = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit").step(0.0)
    acc = CounterIntegrator(f)
    acc.add(s)
    wait = acc.totals[:, COLUMN["PortXmitWait"]]
    held = np.asarray(s.congestion_tree["held"])
    roots = np.asarray(s.congestion_tree["roots"])
    assert (wait[held] > 0).any() and (wait[roots] == 0).all()
    assert wait.tolist() == np.round(s.xmit_wait.astype(np.float64)).tolist()


def test_victims_on_their_own_lane_are_not_held_back(fabric, monkeypatch):
    from fabric_engine.policy import Policy

    monkeypatch.setitem(PATTERNS, "incast", _incast)
    f, r = fabric
    h = f.hosts
    jobs = [Job("hot", "t1", h[[0, 1, 5, 6, 7, 9]], pattern="incast", buffer_bytes=GB, compute_s=0.01),
            Job("victim", "t2", h[[4, 8]], pattern="pipeline", buffer_bytes=GB, compute_s=0.01,
                params={"stages": 2}, sl=1)]
    qos = {"sl2vl": [0, 1] + [0] * 14, "vlarb_low": [[0, 1], [1, 1]], "max_vls": 2}
    policy = Policy.from_dict(f, {"partitions": [], "qos": qos})
    one_lane = Emulator(r, jobs, congestion="credit").step(0.0).job("victim")
    lanes = Emulator(r, jobs, congestion="credit", policy=policy).step(0.0).job("victim")
    # The model's rates with the victims on VL 1: the lane weights are the policy's.
    src, dst = h[[1, 5, 6, 7, 9, 4, 8]], h[[0, 0, 0, 0, 0, 8, 4]]
    inc, _ = r.paths(src, dst, return_broken=True)
    indptr, links = order_paths(sp.csr_matrix(inc), f.dl_src, f.dl_dst)
    vl = np.array([0, 0, 0, 0, 0, 1, 1])
    w = np.maximum(policy.qos.weight, 1e-3)
    hops = Hops.from_paths(indptr, links, len(f.dl_src), vl=vl, n_vls=len(w))
    model = credit_rates(hops, f.capacity_gbps, np.full(7, np.inf), w).rate
    assert lanes.comm_s == pytest.approx(GB * 8e-9 / model[5:].min(), rel=1e-6)
    assert lanes.comm_s < one_lane.comm_s / 3  # no longer waiting behind the incast's packets


def _control(**kw):
    import dataclasses

    from fabric_engine.backpressure.cc_params import CongestionControl

    return dataclasses.replace(CongestionControl.typical(), **kw)


def test_congestion_control_frees_the_victim_and_its_ports_mark_fecn(fabric, incast_jobs):
    f, r = fabric
    h = f.hosts
    credit = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit").step(0.0)
    with_cc = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit", congestion_control=_control()).step(0.0)
    ideal = Emulator(r, incast_jobs, tick_s=1.0).step(0.0)
    # throttled to their fair share at h0's port, the incast's flows no longer hold the victim's buffer
    assert with_cc.job("victim").comm_s == pytest.approx(ideal.job("victim").comm_s, rel=1e-3)
    assert credit.job("victim").comm_s > 3 * with_cc.job("victim").comm_s
    into_h0 = int(np.flatnonzero(f.dl_dst == h[0])[0])
    tree = with_cc.congestion_tree
    assert into_h0 in tree["marking"]
    # ecn: the fraction of its packets each port marks; only marking ports mark
    assert with_cc.ecn[into_h0] > 0
    assert (with_cc.ecn[np.setdiff1d(np.arange(len(with_cc.ecn)), tree["marking"])] == 0).all()
    # disabled settings: the credit model as it is
    off = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit",
                   congestion_control=_control(enabled=False)).step(0.0)
    assert off.job("victim").comm_s == pytest.approx(credit.job("victim").comm_s, rel=1e-9)
    assert "marking" not in off.congestion_tree


def test_scenario_key_congestion_control_is_read_and_checked():
    spec = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4},
            "jobs": [{"name": "a", "tenant": "t", "hosts": 8, "buffer_gb": 1.0}], "congestion": "credit",
            "congestion_control": _control().as_dict()}
    emu = build_emulator(spec)
    assert emu.congestion_control == _control()
    assert "marking" in emu.step(0.0).congestion_tree
    with pytest.raises(FabricEngineError, match="congestion_control: cc_sw_cong_setting_threshold 99"):
        build_emulator({**spec, "congestion_control": {**_control().as_dict(), "threshold": 99}})


def _incast_tick(fabric, budget):
    """A CreditTick of the issue's incast and two victims, greedy, with ``budget`` hop-iterations a solve."""
    f, r = fabric
    h = f.hosts
    src, dst = h[[1, 5, 6, 7, 9, 4, 8]], h[[0, 0, 0, 0, 0, 8, 4]]
    inc, broken = r.paths(src, dst, return_broken=True)
    return credit_tick.CreditTick(f.dl_src, f.dl_dst, sp.csr_matrix(inc), ~broken, budget=budget)


def _tick(tick, fabric, dem):
    f, _ = fabric
    n = len(dem)
    return tick.solve(f.capacity_gbps, dem, np.zeros(n), np.full(n, -1), 1)


def test_a_budgeted_solve_carries_the_iteration_on_from_tick_to_tick(fabric):
    dem = np.full(7, np.inf)
    full = _tick(_incast_tick(fabric, None), fabric, dem)
    assert full.result.converged
    hops = _incast_tick(fabric, None).hops()
    one = _incast_tick(fabric, len(hops.row))  # one iteration a tick
    first = _tick(one, fabric, dem)
    assert first.result.iterations == 1 and not first.result.converged
    assert np.abs(first.rate - full.rate).max() > 1.0  # one iteration is far from the steady state
    for _ in range(60):
        last = _tick(one, fabric, dem)
        assert last.result.iterations == 1
    # each tick went on from the one before: after enough ticks the rates are the full solve's
    np.testing.assert_allclose(last.rate, full.rate, atol=1e-3 * fabric[0].capacity_gbps.max())
    assert one.hops() is hops or one.hops().rows == hops.rows  # the hop table is built once
    assert one.hops() is one.hops()


def test_a_row_that_starts_running_starts_from_its_demand(fabric):
    on = np.full(7, np.inf)
    off = on.copy()
    off[5] = 0.0  # the first victim does not run
    tick = _incast_tick(fabric, 1)  # the smallest budget: one iteration a tick
    for _ in range(30):
        _tick(tick, fabric, off)
    assert _tick(tick, fabric, off).rate[5] == 0.0
    # the tick it starts, its hops start at its demand (not at the nothing they departed while it was off)
    assert _tick(tick, fabric, on).rate[5] > 0.0


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_limiting_links_picks_a_root_then_the_most_held_link_then_the_fullest(compiled, monkeypatch):
    if not compiled:
        monkeypatch.setattr(credit_tick, "_credit", None)
    # three rows over five links: row 0 crosses a root, row 1 two held links, row 2 only free links
    hops = Hops.from_paths(np.array([0, 3, 5, 7]), np.array([0, 1, 2, 3, 4, 0, 3]), 5)
    cap = np.full(5, 100.0)
    res = credit_tick.CreditResult(rate=np.array([10.0, 20.0, 30.0]), link_rate=np.array([40, 100, 10, 50, 5.0]),
                                   link_cap=np.array([100, 100, 100, 30, 60.0]),
                                   held=np.array([False, False, False, True, True]),
                                   root=np.array([False, True, False, False, False]), iterations=1, converged=True)
    best = credit_tick.limiting_links(hops, res, cap, np.array([np.inf, np.inf, 30.0]))
    # row 0: the root (link 1); row 1: link 3 holds back more than link 4; row 2 gets its demand: none
    assert best.tolist() == [1, 3, -1]
    best = credit_tick.limiting_links(hops, res, cap, np.full(3, np.inf))
    assert best[2] == 3  # held beats the fuller free link 0


def test_the_credit_models_background_is_a_pool_of_draws_in_its_hop_table(fabric):
    from fabric_engine.emulator import Background

    f, r = fabric
    emu = Emulator(r, [], Background(fraction=0.5, gbps=50.0), tick_s=1.0, seed=3, congestion="credit")
    hops = emu._credit.hops(emu._vl)
    pool = emu._bg_pool
    assert len(pool) == credit_tick.CREDIT_BACKGROUND_DRAWS
    draws = credit_tick.CREDIT_BACKGROUND_DRAWS
    frames = [emu.step(now=float(k), seq=k + 1) for k in range(draws + 1)]
    assert emu._credit.hops(emu._vl) is hops  # not rebuilt at a tick
    # tick draws + 1 takes the pool's first draw again, with the same flows and (the iteration settled) rates
    np.testing.assert_array_equal(frames[0].util, frames[draws].util)
    assert not np.array_equal(frames[0].util, frames[1].util)
    # the first draw is max-min's first tick's background
    ideal = Emulator(r, [], Background(fraction=0.5, gbps=50.0), tick_s=1.0, seed=3)
    assert (ideal._background(1)[0].src == pool[0][0].src).all()
    assert frames[0].util.sum() > 0


def test_congestion_controls_fair_shares_are_the_ticks_max_min_rates(fabric, incast_jobs, monkeypatch):
    """With congestion control on, the tick does not solve max-min a second time for the fair shares effective
    control holds the flows at: it takes the rates of the max-min solve it makes beside the credit model."""
    import fabric_engine.backpressure.cc as cc_module
    import fabric_engine.emulator as emulator_module

    f, r = fabric
    solve = credit_tick.CreditTick.solve
    with monkeypatch.context() as m:  # the fair shares cc_rates solves on its own (unweighted flows: the same)
        m.setattr(credit_tick.CreditTick, "solve", lambda self, *a, fair=None, **k: solve(self, *a, **k))
        own = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit", congestion_control=_control()).step(0.0)
    given, solved = [], []
    max_min_fair, fair = emulator_module.max_min_fair, cc_module._fair

    def recording(*args, **kwargs):
        rate, bott = max_min_fair(*args, **kwargs)
        given.append(rate.copy())
        return rate, bott

    monkeypatch.setattr(emulator_module, "max_min_fair", recording)
    monkeypatch.setattr(cc_module, "_fair", lambda *a: solved.append(1) or fair(*a))
    emu = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit", congestion_control=_control())
    s = emu.step(0.0)
    assert not solved and len(given) == 1
    assert s.job("victim").comm_s == pytest.approx(own.job("victim").comm_s, rel=1e-9)
    hops = emu._credit.hops()
    with pytest.raises(cc_module.SolverError, match="fair needs one rate per row"):
        cc_module.cc_rates(hops, np.full(hops.n_links, 400.0), np.ones(hops.rows), _control(), fair=np.ones(2))


def test_congestion_control_carried_on_from_tick_to_tick_lands_where_a_full_solve_does(fabric):
    f, _ = fabric
    cc = _control()
    dem = np.full(7, np.inf)
    n = len(dem)

    def tick(t, d):
        return t.solve(f.capacity_gbps, d, np.zeros(n), np.full(n, -1), 1, cc=cc)

    full = tick(_incast_tick(fabric, None), dem)
    hops = _incast_tick(fabric, None).hops()
    carried = _incast_tick(fabric, 4 * len(hops.row))  # two iterations a solve, one round a tick
    for _ in range(40):
        last = tick(carried, dem)
    assert last.cc.rounds == 1
    np.testing.assert_allclose(last.rate, full.rate, atol=1e-3 * f.capacity_gbps.max())
    assert (last.cc.marking == full.cc.marking).all() and last.cc.marking.any()
    # the incast stops: its root's port is no longer saturated and stops marking; the victims run free
    quiet = dem.copy()
    quiet[:5] = 0.0
    for _ in range(10):
        calm = tick(carried, quiet)
    assert not calm.cc.marking.any()
    np.testing.assert_allclose(calm.rate[5:], f.capacity_gbps.max(), rtol=1e-3)


@pytest.fixture(scope="module")
def storage_fabric():
    """Leaves of 3 GPU hosts with one 400 Gb/s up-link each to a single spine; one 2-port server on sleaf01."""
    f = fat_tree(hosts=6, radix=4, oversubscription=3, storage_servers=1, storage_ports=2)
    return f, route(f)


def _storage_tick(storage_fabric, clients, write, **config):
    from fabric_engine.storage import StorageConfig, StorageModel

    f, r = storage_fabric
    model = StorageModel(r, StorageConfig(**config))
    n = len(clients)
    paths, owner, broken = model.transfer_paths(np.asarray(clients), np.zeros(n, int), np.full(n, write))
    src, dst = credit_tick.storage_links(f.dl_src, f.dl_dst, f.num_nodes, model.servers)
    tick = credit_tick.CreditTick(src, dst, paths, ~broken, owner=owner, n_flows=n)
    cap = np.concatenate([f.capacity_gbps, model.backend_gbps])
    return tick.solve(cap, np.full(n, np.inf), np.zeros(n), np.full(n, -1), 1), 2 * f.num_links


def test_storage_backends_are_links_of_the_credit_model(storage_fabric):
    f, _ = storage_fabric
    clients = f.hosts[[0, 1, 3, 4]]
    # Four checkpoint writers into a 100 Gb/s write backend: it is the root of their congestion tree, each flow
    # is split over the server's two ports (two paths from one send queue) and their rates add up to it.
    solved, e = _storage_tick(storage_fabric, clients, True, read_gbps=1000.0, write_gbps=100.0)
    write_backend = e + 1
    assert solved.rate.sum() == pytest.approx(100.0, rel=1e-3)
    np.testing.assert_allclose(solved.rate, 25.0, rtol=1e-3)
    assert solved.result.root[write_backend] and not solved.result.root[:e].any()
    assert (solved.bottleneck == write_backend).all()
    assert len(solved.live) == 2 * len(clients) and (np.bincount(solved.live) == 2).all()
    # The server's two links carry half of it each, and the buffers before the backend are held back.
    server_in = np.flatnonzero(f.dl_dst == f.node("stor001"))
    np.testing.assert_allclose(solved.result.link_rate[server_in], 50.0, rtol=1e-3)
    assert solved.result.held[server_in].all()
    # A read from a fast backend is bound by the 400 Gb/s links the server's two paths (200 each) merge onto: the
    # root is the first of them, not the backend.
    read, _ = _storage_tick(storage_fabric, f.hosts[:1], False, read_gbps=1000.0)
    assert read.rate[0] == pytest.approx(400.0, rel=1e-3)
    roots = np.flatnonzero(read.result.root)
    assert len(roots) == 1 and roots[0] < e and read.result.link_rate[roots[0]] == pytest.approx(400.0)


def test_the_demo_runs_with_the_credit_model_storage_included():
    from fabric_engine.scenario import DEMO_SPEC

    emu = build_emulator({**DEMO_SPEC, "congestion": "credit"})
    assert emu.storage is not None
    s = emu.step(now=0.0)
    e = len(s.util)
    tree = s.congestion_tree
    assert tree["roots"] and max(tree["roots"] + tree["held"]) < e  # backends are not the frame's links
    assert s.storage is not None and s.storage["totals"]
    n = emu._credit.n_links
    assert n == e + 2 * emu.storage.model.num_servers  # the backends are links of the model


def test_congestion_control_that_throttles_nothing_carries_the_solve_without_it_on(fabric):
    """No SL of the adapters runs CC: each tick's result is the solve without CC, carried on as that solve is."""
    f, _ = fabric
    dem = np.full(7, np.inf)
    n = len(dem)
    hops = _incast_tick(fabric, None).hops()
    with_cc, without = _incast_tick(fabric, len(hops.row)), _incast_tick(fabric, len(hops.row))
    idle = _control(ca_control_map=0)
    for _ in range(12):
        a = with_cc.solve(f.capacity_gbps, dem, np.zeros(n), np.full(n, -1), 1, cc=idle)
        b = without.solve(f.capacity_gbps, dem, np.zeros(n), np.full(n, -1), 1)
        assert a.cc.rounds == 0 and not a.cc.marking.any()
        np.testing.assert_array_equal(a.rate, b.rate)


def test_the_credit_ticks_max_min_solve_runs_beside_it_on_another_thread(fabric, incast_jobs, monkeypatch):
    """Max-min (for each job's spreading) shares no array with the credit solve: it runs on its own thread, on the
    other core, while the credit model solves, its greedy pass alone (the collectives' durations); the tick's
    figures are those of the two solves one after the other."""
    import threading

    import fabric_engine.emulator as emulator_module

    f, r = fabric
    threads = []
    max_min_fair, solve_paced = emulator_module.max_min_fair, emulator_module.solve_paced

    def recording(solver):
        def record(*args, **kwargs):
            threads.append((solver.__name__, threading.current_thread().name))
            return solver(*args, **kwargs)
        return record

    ideal = Emulator(r, incast_jobs, tick_s=1.0).step(0.0)
    monkeypatch.setattr(emulator_module, "max_min_fair", recording(max_min_fair))
    monkeypatch.setattr(emulator_module, "solve_paced", recording(solve_paced))
    s = Emulator(r, incast_jobs, tick_s=1.0, congestion="credit").step(0.0)
    assert len(threads) == 1 and threads[0][0] == "max_min_fair"  # the greedy pass: no pacing pass
    assert threads[0][1].startswith("max-min") and threads[0][1] != threading.main_thread().name
    assert s.job("victim").spreading == pytest.approx(s.job("victim").comm_s / ideal.job("victim").comm_s, rel=1e-9)
    threads.clear()
    Emulator(r, incast_jobs, tick_s=1.0).step(0.0)
    assert threads == [("solve_paced", threading.current_thread().name)]  # max-min alone: in the tick's thread
