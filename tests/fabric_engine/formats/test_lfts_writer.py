"""The streaming LFT writer (:mod:`fabric_engine.formats.lfts_writer`) writes byte for byte what the old writer did.

:func:`legacy_write` is the writer ``opensm_lfts.write`` had before it streamed (one f-string per
entry), kept verbatim as the reference; ``tests/bench/bench_lfts_writer.py`` times it against the
new one. Fabrics: fat trees with multi-port storage servers and management nodes, a rail-optimized
fabric, a dragonfly+, sparse LIDs with unowned (``unknown``) LIDs, non-ASCII and brace-laden node
names, LFTs wider than the fabric's LIDs (past LID 0xffff), unrouted entries, rows and columns, every
port number, and a fabric without switches. LMC > 0 is not modelled (one LID per port, ``Routing``
is LMC 0), so there is no LMC case.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from fabric_engine import cli, formats
from fabric_engine.formats import opensm_lfts
from fabric_engine.formats.lfts_writer import iter_lfts, write_to
from fabric_engine.routing import NO_PATH, Routing, route
from fabric_engine.topology import KIND_HOST, Fabric
from fabric_engine.topology.generate import dragonfly_plus, fat_tree, rail_optimized

STYLES = ("opensm", "ibroute")


def legacy_write(routing: Routing, style: str = "opensm") -> str:
    """The writer before streaming, verbatim: the reference output."""
    if style not in ("opensm", "ibroute"):
        raise ValueError(f"unknown LFT style {style!r}; use 'opensm' or 'ibroute'")
    f = routing.fabric
    owner = f.lid_to_node
    slot = f.lid_to_slot
    out: list[str] = []
    top = routing.lft.shape[1] - 1
    for s, node in enumerate(f.switches):
        name, guid, lid = str(f.node_name[node]), int(f.guid[node]), int(f.lid[node])
        row = routing.lft[s]
        valid = np.flatnonzero(row != NO_PATH)
        valid = valid[valid > 0]
        if style == "opensm":
            out.append(f"Unicast lids [0-{top}] of switch Lid {lid} guid 0x{guid:016x} ('{name}'):")
        else:
            out.append(f"Unicast lids [0x0-0x{top:x}] of switch Lid {lid} guid 0x{guid:016x} ({name}):")
            out.append("  Lid  Out   Destination")
            out.append("       Port     Info ")
        for d in valid.tolist():
            n = int(owner[d]) if d < len(owner) else -1
            if n >= 0:
                kind = "Channel Adapter" if f.kind[n] == KIND_HOST else "Switch"
                pg = int(f.port_guid[slot[d]])
                info = f"{kind} portguid 0x{pg:016x}: '{f.node_name[n]}'"
            else:
                info = "unknown"
            sep = f"# {info}" if style == "opensm" else f": ({info})"
            out.append(f"0x{d:04x} {int(row[d]):03d} {sep}")
        out.append(f"{top} lids dumped" if style == "opensm" else f"{len(valid)} valid lids dumped ")
    return "\n".join(out) + "\n"


def assert_same(routing: Routing, style: str) -> None:
    """Every way out of the new writer gives the legacy text, byte for byte."""
    want = legacy_write(routing, style)
    chunks = list(iter_lfts(routing, style))
    assert b"".join(chunks) == want.encode("utf-8")
    assert opensm_lfts.write(routing, style) == want
    buf = io.BytesIO()
    assert write_to(routing, buf, style) == len(want.encode("utf-8"))
    assert buf.getvalue() == want.encode("utf-8")
    if routing.fabric.num_switches:
        assert len(chunks) == routing.fabric.num_switches
        assert all(c.startswith(b"Unicast lids [") for c in chunks)


def _relabelled(f: Fabric, lid_of, names: dict[int, str]) -> Fabric:
    """``f`` with LIDs mapped through ``lid_of`` and some node names replaced."""
    node_name = [names.get(i, str(nm)) for i, nm in enumerate(f.node_name)]
    return Fabric.build(
        f.name, kind=f.kind, node_name=node_name, guid=f.guid, lid=lid_of(f.lid), nports=f.nports, role=f.role,
        tier=f.tier, group=f.group, port_lid=lid_of(f.port_lid), port_guid=f.port_guid, a_node=f.a_node,
        a_port=f.a_port, b_node=f.b_node, b_port=f.b_port, width=f.width, speed=f.speed, length_m=f.length_m)


FABRICS = {
    "fat tree 8 hosts, minhop": lambda: route(fat_tree(hosts=8, radix=4), "minhop"),
    "3-level with 3-port storage and mgmt": lambda: route(
        fat_tree(hosts=40, radix=8, levels=3, storage_servers=4, storage_ports=3, mgmt_nodes=2), "ftree"),
    "3-level radix 16 ftree": lambda: route(fat_tree(hosts=200, radix=16, levels=3), "ftree"),
    "rail-optimized": lambda: route(rail_optimized(nodes=8, gpus_per_node=4, nodes_per_su=4, radix=16), "minhop"),
    "dragonfly+ dfsssp": lambda: route(
        dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=3, radix=8), "dfsssp"),
}


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", list(FABRICS))
def test_generated_fabrics_match_the_legacy_writer(name, style):
    assert_same(FABRICS[name](), style)


@pytest.mark.parametrize("style", STYLES)
def test_unrouted_entries_rows_and_columns(style):
    r = FABRICS["3-level with 3-port storage and mgmt"]()
    rng = np.random.default_rng(7)
    lft = r.lft.copy()
    lft[rng.random(lft.shape) < 0.3] = NO_PATH  # a different set of routed LIDs on most switches
    lft[:, 5] = NO_PATH  # a LID no switch routes
    lft[3] = NO_PATH  # a switch with an empty table
    lft[10:14] = lft[9]  # runs of switches sharing one routed set, then a change back
    lft[15] = r.lft[15]  # fully routed in between
    lft[16] = lft[9]
    assert_same(Routing(r.fabric, lft, "edited"), style)
    assert_same(Routing(r.fabric, np.full_like(r.lft, NO_PATH), "empty"), style)


@pytest.mark.parametrize("style", STYLES)
def test_every_port_number_and_lids_past_0xffff(style):
    """Ports 0..254 in every digit position; an LFT wider than the fabric's LIDs: ``unknown`` lines, 5-digit LIDs."""
    f = fat_tree(hosts=16, radix=8)
    rng = np.random.default_rng(3)
    lft = rng.integers(0, 255, size=(f.num_switches, 0x10004), dtype=np.uint8)
    lft[:, :255] = np.arange(255, dtype=np.uint8)
    lft[0, 0x10000:] = NO_PATH
    assert_same(Routing(f, lft, "wide"), style)


@pytest.mark.parametrize("style", STYLES)
def test_sparse_lids_and_odd_names(style):
    """LID gaps routed anyway (``unknown``), names in UTF-8 of several bytes, braces, quotes, spaces."""
    base = fat_tree(hosts=24, radix=8, levels=2, storage_servers=2, storage_ports=2, mgmt_nodes=1)
    names = {int(base.switches[0]): "leaf{0}é", int(base.hosts[0]): "gpü0001 HCA-1", int(base.hosts[1]): "n'{x}'",
             int(base.hosts[-1]): "存储 mlx5_0", int(base.switches[-1]): "spine 🚀"}
    f = _relabelled(base, lambda lid: np.where(lid > 0, lid * 3 + 1, 0), names)
    r = route(f, "minhop")
    lft = r.lft.copy()
    gaps = np.setdiff1d(np.arange(1, lft.shape[1]), np.flatnonzero(f.lid_to_node >= 0))
    lft[:, gaps[::2]] = 7
    assert_same(Routing(f, lft, "gaps"), style)
    assert_same(r, style)


def test_a_fabric_without_switches_and_a_bad_style():
    f = Fabric.build("pair", kind=[KIND_HOST, KIND_HOST], node_name=["a", "b"], guid=[16, 32], lid=[1, 2],
                     nports=[1, 1], role=[0, 0], tier=[0, 0], a_node=[0], a_port=[1], b_node=[1], b_port=[1])
    r = Routing(f, np.zeros((0, f.max_lid + 1), dtype=np.uint8), "none")
    for style in STYLES:
        assert_same(r, style)
    with pytest.raises(ValueError, match="unknown LFT style"):
        iter_lfts(route(fat_tree(hosts=8, radix=4), "minhop"), "osm")


@pytest.mark.parametrize("style", STYLES)
def test_cli_streams_the_same_dump(capsys, tmp_path, style):
    fabric_file = tmp_path / "f.json"
    f = fat_tree(hosts=40, radix=8, levels=3, storage_servers=4, storage_ports=3, mgmt_nodes=2)
    fabric_file.write_text(formats.write(f, "json"))
    want = legacy_write(route(formats.read(fabric_file), "ftree"), style)
    dump = tmp_path / "out.dump"
    assert cli.main(["route", str(fabric_file), "--engine", "ftree", "--dump-lfts", str(dump), "--style", style]) == 0
    assert dump.read_bytes() == want.encode()
    capsys.readouterr()
    assert cli.main(["route", str(fabric_file), "--engine", "ftree", "--dump-lfts", "-", "--style", style]) == 0
    assert capsys.readouterr().out == want
