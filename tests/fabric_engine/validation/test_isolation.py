"""Isolation advice (issue 38): ranked, capped as UFM's PDR plugin caps itself, commands, repeat offenders."""

from __future__ import annotations

import numpy as np

from fabric_engine.analysis.whatif import whatif_report
from fabric_engine.routing import route
from fabric_engine.topology import KIND_SWITCH
from fabric_engine.topology.generate import fat_tree
from fabric_engine.validation.isolation import advise, default_cap, whatif_inputs
from fabric_engine.workload import Job


def ends(f, c):
    return (f.port_offset[f.a_node[c]] + f.a_port[c] - 1, f.port_offset[f.b_node[c]] + f.b_port[c] - 1)


def test_cap_is_max_of_ten_and_half_a_percent_of_the_ports():
    small, large = fat_tree(hosts=16, radix=8, speed="HDR"), fat_tree(hosts=2048, radix=64, speed="NDR")
    assert default_cap(small) == 10
    assert default_cap(large) == int(np.ceil(0.005 * 2 * large.num_links)) > 10


def test_advice_ranks_caps_and_disables_the_switch_end():
    f = fat_tree(hosts=64, radix=16, speed="HDR")
    P = int(f.nports.sum())
    grade, score = np.zeros(P, np.int8), np.full(P, np.nan)
    host_links = np.flatnonzero(f.kind[f.a_node] != f.kind[f.b_node])[:14]
    for i, c in enumerate(host_links.tolist()):
        a, b = ends(f, c)
        host_end = a if f.kind[f.a_node[c]] != KIND_SWITCH else b
        grade[host_end] = 2
        score[host_end] = 1e-12 * (i + 1)  # the later, the worse
    isl = int(np.flatnonzero(f.kind[f.a_node] == f.kind[f.b_node])[0])
    grade[ends(f, isl)[1]] = 1  # a warning is not advised by default
    plan = advise(f, grade, score=score)
    assert plan.cap == 10 and plan.candidates == 14 and len(plan.advised) == 10 and len(plan.held_back) == 4
    assert [a.cable for a in plan.advised] == host_links[::-1][:10].tolist()  # worst score first
    first = plan.advised[0]
    node = f.node(first.node)
    assert f.kind[node] == KIND_SWITCH and first.lid == int(f.lid[node])
    assert first.isolate == f"ibportstate {first.lid} {first.port} disable"
    assert first.reenable == f"ibportstate {first.lid} {first.port} enable" and "126 minutes" in first.note
    assert first.disconnects  # a single-rail host loses its only link
    assert advise(f, grade, min_grade=1, cap=100).candidates == 15
    d = plan.as_dict()
    assert d["executed"] is False and d["advised"][0]["commands"]["isolate"] == first.isolate


def test_port_isolated_before_and_failing_again_is_flagged_without_reenable():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    grade = np.zeros(int(f.nports.sum()), np.int8)
    c = int(np.flatnonzero(f.kind[f.a_node] != f.kind[f.b_node])[0])
    grade[list(ends(f, c))] = 2
    (first,) = advise(f, grade).advised
    (again,) = advise(f, grade, history=[{"guid": f"0x{first.guid:016x}", "port": first.port}]).advised
    assert not first.failing_again and again.failing_again and again.reenable is None
    assert "failing again" in again.note and again.isolate is None and again.action == "replace"


def test_whatif_inputs_feed_the_cable_whatif():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    grade = np.zeros(int(f.nports.sum()), np.int8)
    isl = np.flatnonzero(f.kind[f.a_node] == f.kind[f.b_node])[:2]
    for c in isl.tolist():
        grade[ends(f, c)[0]] = 2
    plan = advise(f, grade)
    inputs = whatif_inputs(plan)
    assert inputs == {"failed_cables": sorted(isl.tolist())}
    h = f.hosts
    out = whatif_report(route(f, "minhop"), [Job("j", "t", h[::2], buffer_bytes=1e9)], **inputs)
    assert out["alternative"]["failed_cables"] == inputs["failed_cables"]
    assert [x["cable"] for x in out["failed"]] == inputs["failed_cables"]
