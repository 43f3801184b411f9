"""ibv_devinfo -v output against a fixture written from rdma-core ``libibverbs/examples/devinfo.c``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_engine.devices import ibv_devinfo
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"


def test_ports_states_width_speed_and_rate():
    warnings: list = []
    types: dict = {}
    a, b = ibv_devinfo.read((DATA / "ibv_devinfo_v.txt").read_text(), "f", warnings, types)
    assert (a.node, a.guid, a.port, a.state, a.phys_state) == ("gpu0107/mlx5_0", 0x946DAE03006C1B70, 1, "Active",
                                                               "LinkUp")
    # no effective_speed: 4 lanes x HDR's nominal 50 Gb/s
    assert (a.width, a.speed, a.rate_gbps, a.firmware, a.source) == ("4x", "HDR", 200.0, "28.39.2048", "f:43")
    # effective_speed printed: taken as the rate
    assert (b.state, b.phys_state, b.speed, b.rate_gbps) == ("Down", "Polling", "NDR", 400.0)
    assert types == {"gpu0107/mlx5_0": "MT4129", "gpu0107/mlx5_1": "MT4129"}
    assert [w["reason"] for w in warnings] == ["shell prompt", "shell prompt"]


@pytest.mark.parametrize(("text", "message"), [
    ("hca_id:\tm\n\ttransport:\t\tInfiniBand (0)\n\t\tport:\t1\n\t\t\tstate:\t\tPORT_ACTIVE (9)\n", r"f:4: state"),
    ("hca_id:\tm\n\t\tport:\t1\n\t\t\tactive_width:\t\t3X (9)\n", r"f:3: active_width '3X \(9\)'"),
    ("hca_id:\tm\n\t\tport:\t1\n\t\t\tactive_speed:\t\t1.0 Gbps (3)\n", r"f:3: active_speed"),
    ("hca_id:\tm\n\tnode_guid:\t\txyz\n\t\tport:\t1\n", r"f:2: 'xyz' is not a GUID"),
    ("this is not it\n", r"f:1: not a line of ibv_devinfo output"),
])
def test_errors_name_file_and_line(text, message):
    with pytest.raises(FormatError, match=message):
        ibv_devinfo.read(text, "f")
