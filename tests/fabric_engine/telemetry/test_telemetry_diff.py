"""Topology changes between discoveries -> events (captured ibsim Unlink/ReLink, plus synthetic ones)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fabric_engine.telemetry import diff_topology, fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.topology import SPEEDS, Fabric
from fabric_engine.topology.generate import fat_tree

DATA = Path(__file__).parents[2] / "data" / "telemetry"


def discovered(name: str) -> Fabric:
    return fabric_from_linkinfo(parse_iblinkinfo((DATA / name).read_text()))


def test_unlink_and_relink_captured_from_ibsim():
    before, after, back = discovered("iblinkinfo.txt"), discovered("iblinkinfo_unlinked.txt"), discovered(
        "iblinkinfo_relinked.txt")
    down = diff_topology(before, after)
    assert [e["kind"] for e in down] == ["link_down"]
    assert {down[0]["a"], down[0]["b"]} == {"leaf01 port 3", "spine01 port 1"}
    assert down[0]["severity"] == "critical" and down[0]["link"] == -1
    up = diff_topology(after, back)
    assert [e["kind"] for e in up] == ["link_up"]
    assert back.node_name[back.a_node[up[0]["link"]]] in ("leaf01", "spine01")
    assert diff_topology(before, back) == []


def test_same_fabric_listed_in_another_order_has_no_events():
    f = discovered("iblinkinfo.txt")
    order = np.arange(f.num_links)[::-1]
    g = Fabric.build(f.name, kind=f.kind, node_name=f.node_name, guid=f.guid, lid=f.lid, nports=f.nports,
                     role=f.role, tier=f.tier, port_lid=f.port_lid, port_guid=f.port_guid,
                     a_node=f.b_node[order], a_port=f.b_port[order], b_node=f.a_node[order], b_port=f.a_port[order],
                     width=f.width[order], speed=f.speed[order])
    assert diff_topology(f, g) == []


def test_degraded_and_restored_width_and_speed():
    f = fat_tree(hosts=8, radix=4, speed="NDR")
    width = f.width.copy()
    speed = f.speed.copy()
    width[2] = 1
    speed[5] = SPEEDS.index("HDR")
    g = Fabric.build(f.name, kind=f.kind, node_name=f.node_name, guid=f.guid, lid=f.lid, nports=f.nports,
                     role=f.role, tier=f.tier, a_node=f.a_node, a_port=f.a_port, b_node=f.b_node, b_port=f.b_port,
                     width=width, speed=speed)
    ev = {e["kind"]: e for e in diff_topology(f, g)}
    assert set(ev) == {"width_degraded", "speed_degraded"}
    assert (ev["width_degraded"]["old"], ev["width_degraded"]["new"], ev["width_degraded"]["link"]) == ("4x", "1x", 2)
    assert (ev["speed_degraded"]["old"], ev["speed_degraded"]["new"]) == ("NDR", "HDR")
    assert {e["kind"] for e in diff_topology(g, f)} == {"width_restored", "speed_restored"}


def test_node_vanished_and_appeared():
    f = fat_tree(hosts=8, radix=4)
    gone = f.node("gpu0008")
    keep = np.flatnonzero(np.arange(f.num_nodes) != gone)
    remap = np.full(f.num_nodes, -1)
    remap[keep] = np.arange(len(keep))
    cables = np.flatnonzero((f.a_node != gone) & (f.b_node != gone))
    offs = f.port_offset
    slots = np.concatenate([np.arange(offs[n], offs[n] + f.nports[n]) for n in keep])
    g = Fabric.build(f.name, kind=f.kind[keep], node_name=f.node_name[keep], guid=f.guid[keep], lid=f.lid[keep],
                     nports=f.nports[keep], role=f.role[keep], tier=f.tier[keep], port_lid=f.port_lid[slots],
                     port_guid=f.port_guid[slots], a_node=remap[f.a_node[cables]], a_port=f.a_port[cables],
                     b_node=remap[f.b_node[cables]], b_port=f.b_port[cables])
    events = diff_topology(f, g)
    kinds = sorted(e["kind"] for e in events)
    assert kinds == ["link_down", "node_vanished"]
    assert [e for e in events if e["kind"] == "node_vanished"][0]["node"] == "gpu0008"
    assert sorted(e["kind"] for e in diff_topology(g, f)) == ["link_up", "node_appeared"]
