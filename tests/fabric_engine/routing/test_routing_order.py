"""Tables depend on GUIDs, port numbers and LIDs only, never on the order of records in a file (issue 16).

The same fabric is routed from its ibsim net file, its ibnetdiscover text (which lists
switches in another order) and JSON files with nodes and cables shuffled; every engine
must give every switch (matched by GUID) the same LFT. Min-hop is also checked against
OpenSM's algorithm done LID by LID (``reference_minhop``) on shuffled, degraded fabrics.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabric_engine import formats
from fabric_engine.formats.json_format import from_json, to_json
from fabric_engine.routing import ENGINES, route
from fabric_engine.routing.order import guid_key, minhop_lid_order, switch_order
from fabric_engine.topology import Fabric
from fabric_engine.topology.generate import dragonfly_plus, fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import degraded, opensm_port_order, reference_minhop


def shuffled(f: Fabric, seed: int) -> Fabric:
    """``f`` with its nodes and cables in a random order and random cable ends swapped."""
    rng = np.random.default_rng(seed)
    d = to_json(f)
    perm = rng.permutation(f.num_nodes)  # new position k holds old node perm[k]
    new_of = np.empty_like(perm)
    new_of[perm] = np.arange(f.num_nodes)
    d["nodes"] = {k: [v[i] for i in perm] for k, v in d["nodes"].items()}
    links = d["links"]
    order = rng.permutation(f.num_links)
    swap = rng.random(f.num_links) < 0.5
    out = {k: [v[i] for i in order] for k, v in links.items()}
    for j, i in enumerate(order):
        a, ap, b, bp = new_of[links["a_node"][i]], links["a_port"][i], new_of[links["b_node"][i]], links["b_port"][i]
        if swap[j]:
            a, ap, b, bp = b, bp, a, ap
        out["a_node"][j], out["a_port"][j], out["b_node"][j], out["b_port"][j] = int(a), ap, int(b), bp
    d["links"] = out
    return from_json(json.loads(json.dumps(d)), "shuffled.json")


def by_guid(routing) -> dict[int, list[int]]:
    f = routing.fabric
    return {int(f.guid[n]): routing.lft[i].tolist() for i, n in enumerate(f.switches)}


DESIGNS = {
    "2-level": lambda: fat_tree(hosts=28, radix=8, speed="HDR", storage_servers=2),
    "3-level": lambda: fat_tree(hosts=64, radix=8, levels=3, speed="HDR"),
    "degraded": lambda: degraded(fat_tree(hosts=64, radix=8, levels=3, speed="HDR"), 4, seed=3),
    "dragonfly+": lambda: dragonfly_plus(groups=3, leaves_per_group=2, spines_per_group=2, hosts_per_leaf=3,
                                         radix=8, speed="HDR"),
}


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("design", list(DESIGNS))
def test_same_tables_from_every_file_order(design, engine):
    f = DESIGNS[design]()
    want = by_guid(route(f, engine))
    variants = {
        "ibsim net": formats.read(formats.write(f, "ibsim")),
        "ibnetdiscover": formats.read(formats.write(f, "ibnetdiscover")),
        "shuffled json 1": shuffled(f, 1),
        "shuffled json 2": shuffled(f, 2),
    }
    for name, g in variants.items():
        assert by_guid(route(g, engine)) == want, f"{engine} on {design} differs when read from {name}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_minhop_is_opensm_lid_by_lid_on_shuffled_degraded_fabrics(seed):
    f = shuffled(degraded(fat_tree(hosts=64, radix=8, levels=3), 6, seed=seed), seed)
    assert np.array_equal(route(f, "minhop").lft, reference_minhop(f))


def test_opensm_orders():
    f = shuffled(fat_tree(hosts=32, radix=8), 5)
    guids = f.guid[f.switches][switch_order(f)]
    assert [int(g) for g in guids] == sorted((int(g) for g in guids),
                                             key=lambda g: int.from_bytes(g.to_bytes(8, "big"), "little"))
    assert minhop_lid_order(f).tolist() == opensm_port_order(f)
    # the byte-swapped key: 0x...0100 comes before 0x...00ff, as in OpenSM's sw_guid_tbl on x86
    keys = guid_key(np.array([0x98039B03000000FF, 0x9803_9B03_0000_0100], dtype=np.uint64))
    assert keys[1] < keys[0]
