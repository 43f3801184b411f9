"""Nodes as a user names them in a URL (ibweb.access.node_names): names, GUIDs, labels, and a host's name alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine.formats import read
from ibweb.access import find_node, host_hcas, node_name

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def fabric():
    return read(DATA / "ibnd_sharp_multi_hca.txt")  # node01 has HCA-1 and HCA-2, stor01 one HCA


def _none(f) -> np.ndarray:
    return np.zeros(f.num_nodes, dtype=bool)


def test_a_node_is_found_by_name_guid_and_a_hidden_host_by_its_label_only(fabric):
    f = fabric
    i = f.node("node01 HCA-1")
    assert find_node(f, "node01 HCA-1", _none(f)) == i
    assert find_node(f, f"0x{int(f.guid[i]):016x}", _none(f)) == i
    hidden = _none(f)
    hidden[i] = True
    assert find_node(f, "node01 HCA-1", hidden) is None
    assert find_node(f, f"host-{i}", hidden) == i and node_name(f, i, hidden) == f"host-{i}"
    assert find_node(f, f"host-{i}", _none(f)) is None  # a visible host is not named by a label


def test_a_host_with_one_hca_is_found_by_its_host_name_alone(fabric):
    """Walking the telemetry guide, ``gpu0001`` alone was no such node on the port counters API."""
    f = fabric
    one, two = f.node("node01 HCA-1"), f.node("node01 HCA-2")
    assert find_node(f, "node01", _none(f)) is None  # two HCAs: which one is not guessed
    assert sorted(host_hcas(f, "node01", _none(f)).tolist()) == sorted([one, two])
    hidden = _none(f)
    hidden[two] = True
    assert find_node(f, "node01", hidden) == one  # the one the view may see
    hidden[one] = True
    assert find_node(f, "node01", hidden) is None and host_hcas(f, "node01", hidden).size == 0
    assert find_node(f, "node0", _none(f)) is None and find_node(f, "", _none(f)) is None
    assert find_node(f, " node01", _none(f)) is None
