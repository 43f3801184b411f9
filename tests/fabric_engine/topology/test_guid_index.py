"""One port-GUID index per fabric (issue 24, item 4): slots and nodes of GUIDs against a dict, vectorized."""

import numpy as np
import pytest

from fabric_engine.topology.generate import fat_tree
from fabric_engine.topology.guid_index import GuidIndex


def _reference(port_guid: np.ndarray, port_node: np.ndarray) -> dict[int, tuple[int, int]]:
    """GUID -> (lowest slot carrying it, its node), by hand."""
    out: dict[int, tuple[int, int]] = {}
    for slot, (g, n) in enumerate(zip(port_guid.tolist(), port_node.tolist(), strict=True)):
        out.setdefault(int(g), (slot, int(n)))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_random_guids_known_and_unknown_match_a_dict(seed):
    rng = np.random.default_rng(seed)
    ports = int(rng.integers(1, 400))
    pool = rng.integers(0, 2**64 - 1, size=ports // 2 + 1, dtype=np.uint64, endpoint=True)
    port_guid = rng.choice(pool, size=ports)  # duplicates, as a switch's ports share its GUID
    port_guid[0] = np.uint64(2**64 - 1)
    port_node = rng.integers(0, 50, size=ports).astype(np.int32)
    ref = _reference(port_guid, port_node)
    unknown = rng.integers(0, 2**64 - 1, size=200, dtype=np.uint64, endpoint=True)
    query = rng.permutation(np.concatenate([port_guid, unknown, [np.uint64(0), np.uint64(2**63)]]))
    ix = GuidIndex(port_guid, port_node)
    slots, found = ix.slots(query)
    nodes, found_n = ix.nodes(query)
    want = [ref.get(int(g), (-1, -1)) for g in query.tolist()]
    assert found.tolist() == found_n.tolist() == [int(g) in ref for g in query.tolist()]
    assert slots.tolist() == [s for s, _ in want] and nodes.tolist() == [n for _, n in want]
    assert slots.dtype == nodes.dtype == np.int64 and found.dtype == bool


def test_guids_above_2_63_from_python_ints():
    big = [2**63, 2**63 + 5, 2**64 - 1]
    ix = GuidIndex(np.array(big, dtype=np.uint64), np.array([7, 8, 9]))
    nodes, found = ix.nodes([2**64 - 1, 2**63 + 5, 2**63 + 4, 2**63, 5])
    assert nodes.tolist() == [9, 8, -1, 7, -1] and found.tolist() == [True, True, False, True, False]


def test_empty_fabric_and_empty_query():
    empty = GuidIndex(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int32))
    slots, found = empty.slots([1, 2**64 - 1])
    assert slots.tolist() == [-1, -1] and found.tolist() == [False, False]
    nodes, found = empty.nodes(np.zeros(0, dtype=np.uint64))
    assert nodes.shape == found.shape == (0,) and nodes.dtype == np.int64
    full = GuidIndex(np.array([3], dtype=np.uint64), np.array([0]))
    for method in (full.slots, full.nodes):
        out, hit = method([])
        assert out.shape == hit.shape == (0,) and out.dtype == np.int64 and hit.dtype == bool


def test_the_fabric_keeps_one_index_that_answers_its_ports():
    f = fat_tree(hosts=8, radix=4)
    assert f.guid_index is f.guid_index
    nodes, found = f.guid_index.nodes(f.port_guid)
    assert found.all() and (nodes == f.port_node).all()
    slots, _ = f.guid_index.slots(f.port_guid[f.port_offset[f.switches]])
    assert (slots == f.port_offset[f.switches]).all()  # a switch's GUID answers its port 1
    host = f.hosts[3]
    assert f.guid_index.slots([f.port_guid[f.port_offset[host]]])[0].tolist() == [f.port_offset[host]]


def test_conditions_place_a_downed_cables_ends_by_node_guid():
    from fabric_engine.telemetry.conditions import cabling_conditions

    f = fat_tree(hosts=8, radix=4)
    cable = int(f.port_out_link[f.port_offset[f.hosts[2]]]) % f.num_links
    (c,) = cabling_conditions(f, f.without_links([cable]))
    assert c["kind"] == "link_down" and sorted(c["nodes"]) == sorted([int(f.a_node[cable]), int(f.b_node[cable])])
