"""Topology against the plan (issue 17): the CSV plan parser and the comparison with the discovered fabric."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.formats import write
from fabric_engine.topology import Fabric
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin import compare_plan, read_plan, read_plan_csv
from fabric_engine.twin.plan import ISSUE_KINDS, MAX_NAME_CHARS, plan_from_fabric


def csv_of(f: Fabric, *, header: bool = True, described: bool = False) -> str:
    def name(n):
        nm = str(f.node_name[n])
        return f"{nm} HCA-1" if described and f.kind[n] == 0 else nm

    rows = [f"{name(a)},{pa},{name(b)},{pb},HDR,4x"
            for a, pa, b, pb in zip(f.a_node, f.a_port, f.b_node, f.b_port, strict=True)]
    return ("node,port,remote node,remote port,speed,width\n" if header else "") + "\n".join(rows) + "\n"


@pytest.fixture
def fabric() -> Fabric:
    return fat_tree(hosts=16, radix=8, speed="HDR")


def rebuild(f: Fabric, **arrays) -> Fabric:
    base = dict(kind=f.kind, node_name=f.node_name, guid=f.guid, lid=f.lid, nports=f.nports, role=f.role,
                tier=f.tier, a_node=f.a_node, a_port=f.a_port, b_node=f.b_node, b_port=f.b_port, width=f.width,
                speed=f.speed)
    base.update(arrays)
    return Fabric.build(f.name, **base)


def test_a_fabric_as_planned_has_no_issue(fabric):
    for text in (csv_of(fabric), csv_of(fabric, header=False), csv_of(fabric, described=True)):
        report = compare_plan(read_plan(text, "plan.csv"), fabric)
        assert report.ok and report.counts == dict.fromkeys(ISSUE_KINDS, 0)
        assert report.planned_cables == report.discovered_cables == fabric.num_links
        assert not report.link_status.any()


@pytest.mark.parametrize("fmt", ["ibnetdiscover", "ibsim", "json"])
def test_a_design_file_is_a_plan(fabric, fmt):
    plan = read_plan(write(fabric, fmt), f"design.{ {'ibnetdiscover': 'topo', 'ibsim': 'net', 'json': 'json'}[fmt]}")
    assert plan.num_cables == fabric.num_links and (plan.speed == fabric.speed).all()
    assert compare_plan(plan, fabric).ok


def test_missing_extra_miswired_and_wrong_speed_or_width(fabric):
    f = fabric
    plan = read_plan_csv(csv_of(f), "plan.csv")
    # discovered: cable 20 gone, host ports of cables 0 and 1 swapped, cable 5 at 1x, cable 6 at EDR
    b_node, b_port = f.b_node.copy(), f.b_port.copy()
    b_node[[0, 1]], b_port[[0, 1]] = f.b_node[[1, 0]], f.b_port[[1, 0]]
    width, speed = f.width.copy(), f.speed.copy()
    width[5], speed[6] = 1, 5
    keep = np.ones(f.num_links, dtype=bool)
    keep[20] = False
    g = rebuild(f, a_node=f.a_node[keep], a_port=f.a_port[keep], b_node=b_node[keep], b_port=b_port[keep],
                width=width[keep], speed=speed[keep])
    report = compare_plan(plan, g)
    assert report.counts == {"missing": 1, "miswired": 2, "extra": 0, "wrong_speed": 1, "wrong_width": 1}
    missing = next(i for i in report.issues if i["kind"] == "missing")
    a, pa, b, pb = (f.node_name[f.a_node[20]], f.a_port[20], f.node_name[f.b_node[20]], f.b_port[20])
    assert missing["planned"] == f"{a} port {pa} - {b} port {pb}" and missing["line"] == 22  # header + cable 21
    mis = [i for i in report.issues if i["kind"] == "miswired"]
    assert mis[0]["planned"] == f"{f.node_name[f.a_node[0]]} port 1 - {f.node_name[f.b_node[0]]} port 1"
    assert f"{f.node_name[f.a_node[0]]} port 1 - {f.node_name[f.b_node[1]]} port 1" in mis[0]["found"]
    width_issue = next(i for i in report.issues if i["kind"] == "wrong_width")
    assert width_issue["expected"] == "4x" and width_issue["found"] == "1x" and width_issue["line"] == 7
    speed_issue = next(i for i in report.issues if i["kind"] == "wrong_speed")
    assert (speed_issue["expected"], speed_issue["found"]) == ("HDR", "EDR")
    status = report.link_status[: g.num_links]
    assert status[0] == status[1] == 1 + ISSUE_KINDS.index("miswired")
    assert status[5] == 1 + ISSUE_KINDS.index("wrong_width") and status[6] == 1 + ISSUE_KINDS.index("wrong_speed")
    assert (report.link_status[g.num_links:] == status).all()


def test_extra_cables_and_unknown_nodes(fabric):
    f = fabric
    lines = csv_of(f).splitlines()
    dropped = lines.pop(11)  # cable 10 not planned
    lines.append("ghost01,1,spine01,40")  # ... and a switch that does not exist
    report = compare_plan(read_plan_csv("\n".join(lines), "p.csv"), f)
    assert report.counts["extra"] == 1 and report.counts["missing"] == 1
    extra = next(i for i in report.issues if i["kind"] == "extra")
    assert extra["link"] == 10 and dropped.split(",")[0] in extra["found"]
    missing = next(i for i in report.issues if i["kind"] == "missing")
    assert "ghost01 not in the fabric" in missing["message"] and report.unknown_nodes == ["ghost01"]
    assert report.link_status[10] == 1 + ISSUE_KINDS.index("extra")


def test_plan_matches_nodes_by_guid(fabric):
    f = fabric
    rows = [f"0x{int(f.guid[a]):016x},{pa},0x{int(f.guid[b]):016X},{pb}"
            for a, pa, b, pb in zip(f.a_node, f.a_port, f.b_node, f.b_port, strict=True)]
    assert compare_plan(read_plan_csv("\n".join(rows), "guids.csv"), f).ok


@pytest.mark.parametrize(("text", "where", "message"), [
    ("a,1,b\n", "bad.csv:1", "3 fields"),
    ("# c\n\na,x,b,1\n", "bad.csv:3", "port 'x' is not a port number"),
    ("a,1,b,0\n", "bad.csv:1", "remote port '0'"),
    ("a,1,b,1,QQR\n", "bad.csv:1", "speed 'QQR'"),
    ("a,1,b,1,HDR,3x\n", "bad.csv:1", "width '3x'"),
    ("a,1,b,1\nc,2,a,1\n", "bad.csv:2", "a port 1 is already cabled on line 1"),
    ("a,1,a,2\n", "bad.csv:1", "its own node"),
    (",1,b,1\n", "bad.csv:1", "node is empty"),
    (f"{'n' * (MAX_NAME_CHARS + 1)},1,b,1\n", "bad.csv:1", "more than 64"),
    ('"a,1,b,1\n', "bad.csv:1", "fields|CSV"),
    ("# nothing\n", "bad.csv", "no cables"),
    (b"a,1,b,1\n\xff\n", "bad.csv:2", "not UTF-8"),
])
def test_bad_plan_lines_are_named_by_file_and_line(text, where, message):
    with pytest.raises(FormatError, match=message) as err:
        read_plan(text, "bad.csv")
    assert str(err.value).startswith(where + ":")


def test_plan_size_is_checked_before_parsing(monkeypatch):
    import fabric_engine.twin.plan as plan_mod

    monkeypatch.setattr(plan_mod, "MAX_PLAN_BYTES", 100)
    with pytest.raises(FormatError, match="more than the limit of 100"):
        read_plan_csv("a,1,b,1\n" * 20, "big.csv")
    monkeypatch.setattr(plan_mod, "MAX_PLAN_BYTES", 1 << 20)
    monkeypatch.setattr(plan_mod, "MAX_PLAN_CABLES", 5)
    with pytest.raises(FormatError, match="more than the limit of 5 cables"):
        read_plan_csv("\n".join(f"a,{i},b,{i}" for i in range(1, 8)), "big.csv")


def test_plan_from_fabric_round_trip(fabric):
    plan = plan_from_fabric(fabric)
    assert plan.num_cables == fabric.num_links and len(plan.nodes()) == fabric.num_nodes
