"""Generated fabrics in ibsim under real OpenSM come back through ibnetdiscover (issue 3).

For a 2-level fat tree (with dual-port storage servers and a mgmt node), a 3-level
fat tree and a Dragonfly+: write the ibsim net file, start ibsim, run ``opensm -o``
attached to a host HCA, run ``ibnetdiscover`` and parse it. Nodes (names, GUIDs,
port counts, roles, tiers), cables with their ports, widths and speeds must match
the design, and every LID must be the one OpenSM recorded in its ``guid2lid`` file.
Speeds are HDR: ibsim 0.10 simulates nothing faster (see ``fabric_engine.formats.ibsim``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.formats import ibnetdiscover
from fabric_engine.formats import ibsim as ibsim_format
from fabric_engine.topology import KIND_HOST, SPEEDS, Fabric
from fabric_engine.topology.generate import dragonfly_plus, fat_tree

pytestmark = pytest.mark.realtools

DESIGNS = {
    "fat-tree-2l": lambda: fat_tree(hosts=16, radix=8, speed="HDR", storage_servers=2, mgmt_nodes=1),
    "fat-tree-3l": lambda: fat_tree(hosts=24, radix=8, levels=3, speed="HDR"),
    "dragonfly-plus": lambda: dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=3,
                                             radix=8, speed="HDR", width=2),
}


def cables(f: Fabric) -> set:
    return {(frozenset({(str(f.node_name[a]), int(ap)), (str(f.node_name[b]), int(bp))}), int(w), SPEEDS[s])
            for a, ap, b, bp, w, s in zip(f.a_node, f.a_port, f.b_node, f.b_port, f.width, f.speed, strict=True)}


def guid2lid(cache: Path) -> dict[int, int]:
    """OpenSM's record of the LIDs it assigned: ``0x<port guid> <min lid> <max lid>`` per line."""
    out = {}
    for m in re.finditer(r"^(0x[0-9a-f]+) (0x[0-9a-f]+) (0x[0-9a-f]+)", (cache / "guid2lid").read_text(), re.M):
        out[int(m.group(1), 16)] = int(m.group(2), 16)
    return out


def discover(ibsim, design: Fabric, preset_lids: bool) -> tuple[Fabric, dict[int, int]]:
    host = str(design.node_name[design.hosts[0]])
    sim = ibsim(ibsim_format.write(design, preset_lids=preset_lids), sim_host=host)
    cache = sim.workdir / "opensm"
    sim.run_opensm(["-o"], cache_dir=cache)
    text = sim.run(["ibnetdiscover"]).stdout
    return ibnetdiscover.read(text, source="ibnetdiscover"), guid2lid(cache)


@pytest.mark.parametrize("design_name", list(DESIGNS))
def test_generated_fabric_survives_ibsim_opensm_ibnetdiscover(ibsim, design_name):
    design = DESIGNS[design_name]()
    found, osm = discover(ibsim, design, preset_lids=False)
    # Nodes.
    assert sorted(found.node_name.tolist()) == sorted(design.node_name.tolist())
    idx = np.array([found.node(str(n)) for n in design.node_name])
    for k in ("kind", "guid", "nports", "role", "tier"):
        assert np.array_equal(getattr(found, k)[idx], getattr(design, k)), k
    # Cables, ports, widths, speeds.
    assert cables(found) == cables(design)
    # Every LID is the one OpenSM assigned (its guid2lid file), for switches and every cabled host port.
    cabled = found.port_out_link >= 0
    host_ports = np.flatnonzero(cabled & (found.kind[found.port_node] == KIND_HOST))
    assert {int(found.port_guid[s]): int(found.port_lid[s]) for s in host_ports} == \
        {g: osm[g] for g in map(int, found.port_guid[host_ports])}
    assert {int(found.guid[s]): int(found.lid[s]) for s in found.switches} == \
        {int(g): osm[int(g)] for g in found.guid[found.switches]}
    assert found.meta["lids_filled"] == 0


def test_opensm_keeps_the_lids_the_design_presets(ibsim):
    design = DESIGNS["fat-tree-2l"]()
    found, osm = discover(ibsim, design, preset_lids=True)
    idx = np.array([found.node(str(n)) for n in design.node_name])
    assert np.array_equal(found.lid[idx], design.lid)
    assert all(osm[int(g)] == int(lid) for g, lid in zip(design.guid[design.switches], design.lid[design.switches],
                                                          strict=True))
