"""The congestion what-if (issue 41): max-min, credit flow control, VL separation and congestion control side by side.

The fabric is the issue's (16 hosts, 4 leaves, 4 spines, minhop): a hot job of 8 senders to gpu0001 (3 of them
on gpu0008's leaf) and a victim job, gpu0008 -> gpu0009, whose path shares the uplink of those 3 senders. The
credit figures are the BookSim-validated ones of docs/workloads-and-congestion.md: the 3 senders and the victim
beside them get 0.0556 of a link, max-min gives the incast 1/8 and the victim 5/8.
"""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.analysis import AnalysisInputError, run_analysis
from fabric_engine.analysis import run as run_module
from fabric_engine.analysis.congestion import SIDES, congestion_whatif
from fabric_engine.backpressure.cc_params import CongestionControl
from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import Job
from fabric_engine.workload.patterns import PATTERNS, PatternFlows

GBITS = 8.0  # each flow's collective: 1 GB
LINK = 400.0  # Gbit/s, the generator's links


def _incast(job: Job, fabric) -> PatternFlows:
    """Every host but the first sends its buffer to the first (one flow for a 2-host job)."""
    h = np.asarray(job.hosts, dtype=np.int64)
    return PatternFlows(h[1:], np.full(len(h) - 1, h[0]), np.full(len(h) - 1, float(job.buffer_bytes)))


@pytest.fixture
def incast(monkeypatch):
    monkeypatch.setitem(PATTERNS, "incast", _incast)
    f = fat_tree(hosts=16, radix=8)
    r = route(f, "minhop")
    h = f.hosts
    jobs = [Job("hot", "a", np.array([h[0], *(h[i] for i in (1, 4, 5, 6, 8, 12, 13, 14))]), pattern="incast",
                buffer_bytes=1e9, sl=0),
            Job("victim", "b", np.array([h[8], h[7]]), pattern="incast", buffer_bytes=1e9, sl=1)]
    return r, jobs


def by_key(out: dict) -> dict:
    return {s["key"]: {j["id"]: j for j in s["jobs"]} | {"_side": s} for s in out["sides"]}


def test_vl_separation_frees_the_victim_and_congestion_control_the_hot_job(incast):
    r, jobs = incast
    seen = []
    out = congestion_whatif(r, jobs, progress=lambda f, m: seen.append((f, m)))
    s = by_key(out)
    assert [x["key"] for x in out["sides"]] == list(SIDES)
    # max-min: the incast at 1/8 of the link, the victim at what the 3 incast flows leave of its uplink (5/8)
    assert s["maxmin"]["hot"]["comm_s"] == pytest.approx(GBITS / (LINK / 8))
    assert s["maxmin"]["victim"]["comm_s"] == pytest.approx(GBITS / (LINK * 5 / 8))
    # credit flow control, one lane: the victim behind the tree at 0.0556 of the link, as BookSim has it
    assert s["credit"]["victim"]["comm_s"] == pytest.approx(GBITS / (LINK / 18), rel=1e-3)
    assert s["credit"]["victim"]["slowdown"] == pytest.approx(11.25, rel=1e-3)
    assert s["credit"]["hot"]["slowdown"] == pytest.approx(2.25, rel=1e-3)
    assert s["credit"]["_side"]["roots"] == 1 and s["credit"]["_side"]["held"] > 0
    assert s["credit"]["_side"]["converged"] and s["credit"]["_side"]["lanes"] == 1
    # VL separation: the victim on a lane of its own is back to (at least) its max-min time; the hot job is not
    assert s["vl_separation"]["victim"]["slowdown"] <= 1 + 1e-6
    assert s["vl_separation"]["hot"]["slowdown"] == pytest.approx(2.25, rel=1e-3)
    assert s["vl_separation"]["_side"]["lanes"] == 4
    # congestion control (default profile): every flow held at its fair share, no congestion tree left
    cc = s["congestion_control"]["_side"]
    assert s["congestion_control"]["hot"]["slowdown"] == pytest.approx(1.0, abs=0.02)
    assert s["congestion_control"]["victim"]["slowdown"] == pytest.approx(1.0, abs=0.02)
    assert cc["roots"] == 0 and cc["held"] == 0
    assert cc["throttled_flows"] == 9 and cc["held_by"] == {"fair": 9, "marking": 0, "table": 0}
    assert cc["fecn_marks_per_s"] > 0 and cc["becn_per_s"] == pytest.approx(cc["fecn_marks_per_s"])
    assert out["congestion_control"]["source"] == "default"
    assert out["congestion_control"]["settings"] == CongestionControl.typical().as_dict()
    # per-job rows side by side, the limiting links named
    assert [j["id"] for j in out["summary"]] == ["hot", "victim"]
    assert out["summary"][1]["vs_maxmin"][0] == 1.0 and out["summary"][1]["vs_maxmin"][1] > 10
    assert s["maxmin"]["hot"]["limiting_link"]["label"] == "leaf01/1 -> gpu0001/1"
    assert " -> " in s["credit"]["victim"]["limiting_link"]["label"]
    assert s["credit"]["_side"]["worst_slowdown"] == pytest.approx(11.25, rel=1e-3)
    # progress at each side
    messages = " | ".join(m for _, m in seen)
    assert all(label in messages for label in SIDES.values()), messages
    assert "hops)" in messages and "): round 1 |" in messages and "): round 2 |" in messages  # each throttled solve
    assert [f for f, _ in seen] == sorted(f for f, _ in seen) and seen[-1][0] == 1.0


def test_the_fabric_qos_lanes_are_the_credit_sides_lanes(incast):
    r, jobs = incast  # the victim is on SL 1: QoS maps it to VL 1, the incast stays on VL 0
    qos = {"qos": {"sl2vl": [0, 1] + [0] * 14, "vlarb_low": [[0, 1], [1, 1]], "max_vls": 2}}
    out = run_analysis("whatif_congestion", {"vls": 2}, {"policy": qos, "routing": "minhop"}, routing=r, jobs=jobs)
    s = by_key(out)
    assert out["params"]["qos"] is True and s["credit"]["_side"]["lanes"] == 16
    assert s["credit"]["victim"]["slowdown"] <= 1 + 1e-6  # already on its own lane
    assert s["credit"]["hot"]["slowdown"] == pytest.approx(2.25, rel=1e-3)


def test_settings_given_are_used_and_named(incast):
    r, jobs = incast
    off = run_analysis("whatif_congestion", {"vls": 4, "congestion_control": {"enabled": False}}, {}, routing=r,
                       jobs=jobs)
    s = by_key(off)
    assert off["congestion_control"]["source"] == "params" and off["congestion_control"]["settings"]["enabled"] is False
    for job in ("hot", "victim"):  # congestion control off: the credit side as it is
        assert s["congestion_control"][job]["comm_s"] == s["credit"][job]["comm_s"]
    assert s["congestion_control"]["_side"]["throttled_flows"] == 0
    # one mark in 65,536 packets: the timer wins
    sparse = dict(CongestionControl.typical().as_dict(), marking_rate=0xFFFF)
    out = run_analysis("whatif_congestion", {"vls": 4, "congestion_control": sparse,
                                             "congestion_control_source": "fabric"}, {}, routing=r, jobs=jobs)
    side = by_key(out)["congestion_control"]["_side"]
    assert out["congestion_control"]["source"] == "fabric"
    assert side["held_by"]["marking"] > 0 and by_key(out)["congestion_control"]["hot"]["slowdown"] > 1.05


def test_the_default_profile():
    cc = CongestionControl.typical()
    assert cc.enabled and cc.threshold == 8 and cc.marking_rate == 0 and cc.marks
    assert cc.ccti_increase == (1,) * 16 and cc.ccti_timer == (10,) * 16
    assert cc.ca_control_map == 0xFFFF and cc.sw_control_map == 0x1F
    assert len(cc.cct) == 128 and cc.cct[0] == (0, 0) and cc.cct[95] == (0, 32) and cc.cct[127] == (0, 57)
    assert all(cc.sl_enabled(sl) for sl in range(16))
    assert CongestionControl.from_dict(cc.as_dict()) == cc


@pytest.mark.parametrize(("data", "field"), [({"threshold": 16}, "threshold"), ({"bogus": 1}, "bogus"),
                                              ({"enabled": 1}, "enabled"), ({"cct": [[0]]}, "cct"),
                                              ({"ccti_timer": [1, 2]}, "ccti_timer"), ("x", "object")])
def test_bad_settings_name_their_field(data, field):
    with pytest.raises(FabricEngineError, match=field):
        CongestionControl.from_dict(data)


def test_refusals_name_the_field(incast, monkeypatch):
    r, jobs = incast
    params = {"vls": 4}
    with pytest.raises(AnalysisInputError) as err:
        run_analysis("whatif_congestion", params, {"adaptive": True}, routing=r, jobs=jobs)
    assert err.value.field == "adaptive"
    with pytest.raises(AnalysisInputError) as err:
        run_analysis("whatif_congestion", params, {}, routing=r, jobs=[])
    assert err.value.field == "kind"
    with pytest.raises(AnalysisInputError) as err:
        run_analysis("whatif_congestion", {"vls": 4, "congestion_control": {"threshold": 99}}, {}, routing=r,
                     jobs=jobs)
    assert err.value.field == "congestion_control" and "threshold" in err.value.message
    monkeypatch.setattr(run_module, "CONGESTION_MAX_HOSTS", 8)
    with pytest.raises(AnalysisInputError) as err:
        run_analysis("whatif_congestion", params, {}, routing=r, jobs=jobs)
    assert err.value.field == "fabric" and "at most 8 hosts" in err.value.message
    monkeypatch.setattr("fabric_engine.analysis.congestion.MAX_FLOWS", 5)
    with pytest.raises(AnalysisInputError) as err:
        congestion_whatif(r, jobs)
    assert err.value.field == "jobs" and "at most 5 flows" in err.value.message and "have 9" in err.value.message


def test_a_scenario_without_engine_records_is_built():
    spec = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8}, "routing": "minhop",
            "jobs": [{"name": "a", "tenant": "t", "hosts": 8, "placement": "scattered", "pattern": "all_to_all"},
                     {"name": "b", "tenant": "u", "hosts": 8, "placement": "scattered"}]}
    out = run_analysis("whatif_congestion", {"vls": 2}, spec)
    assert out["params"]["jobs"] == 2 and out["params"]["vls"] == 2
    for side in out["sides"]:
        assert all(j["comm_s"] is not None and j["slowdown"] >= 0 for j in side["jobs"])
    assert all(v == 1.0 for v in (j["vs_maxmin"][0] for j in out["summary"]))
