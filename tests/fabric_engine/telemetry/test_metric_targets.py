"""Cutting a fabric's ``/metrics`` into parts (fabric_engine.telemetry.metric_targets)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from fabric_engine.telemetry import metric_targets
from fabric_engine.telemetry.metric_targets import node_ranges, part_of


def test_the_examples_hold():
    assert doctest.testmod(metric_targets).failed == 0


@pytest.mark.parametrize("max_ports", [1, 5, 64, 10_000])
def test_parts_cover_every_node_once_within_their_bound(max_ports):
    rng = np.random.default_rng(7)
    ports = rng.integers(0, 41, 3_000)  # switches of up to 40 ports, hosts of none
    node = np.repeat(np.arange(ports.size), ports)
    bounds = node_ranges(rng.permutation(node), ports.size, max_ports)
    assert bounds[0] == 0 and bounds[-1] == ports.size and np.all(np.diff(bounds) > 0)
    sizes = np.add.reduceat(ports, bounds[:-1])
    assert sizes.sum() == node.size
    assert sizes.max() <= max_ports + ports.max() - 1  # the bound, and the one node crossing it
    assert len(bounds) - 1 <= -(-node.size // max_ports) + 1


def test_a_part_that_is_not_there_is_an_index_error_naming_the_parts():
    bounds = np.array([0, 4, 9])
    assert part_of(bounds, 1) == (4, 9)
    with pytest.raises(IndexError, match=r"part 2: the fabric has 2 parts \(0\.\.1\)"):
        part_of(bounds, 2)
    with pytest.raises(ValueError, match="max_ports"):
        node_ranges(np.zeros(3, np.int64), 1, 0)
