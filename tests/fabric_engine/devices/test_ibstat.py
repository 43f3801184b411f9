"""ibstat output against a fixture written from rdma-core ``infiniband-diags/ibstat.c``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_engine.devices import ibstat
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"


def test_adapters_ports_and_the_single_port_form():
    warnings: list = []
    types: dict = {}
    ports = ibstat.read((DATA / "ibstat_two_cas.txt").read_text(), "f", warnings, types)
    assert [(p.node, p.port, p.state, p.phys_state, p.rate_gbps) for p in ports] == [
        ("gpu0042/mlx5_0", 1, "Active", "LinkUp", 400.0), ("gpu0042/mlx5_1", 1, "Down", "Polling", 10.0),
        ("gpu0042/mlx4_0", 1, "Active", "LinkUp", 40.0), ("gpu0042/mlx4_0", 2, "Down", "Disabled", 2.5),
        ("gpu0042/mlx5_0", 1, "Active", "LinkUp", 400.0)]
    assert ports[0].guid == 0x946DAE03006C1A20 and ports[0].firmware == "28.39.2048" and ports[0].source == "f:9"
    assert ports[2].speed == "FDR10" and ports[2].firmware == "2.42.5000" and ports[0].width is None
    # `ibstat <ca> <port>` prints no CA header fields
    assert ports[4].guid is None and ports[4].firmware is None
    assert types == {"gpu0042/mlx5_0": "MT4129", "gpu0042/mlx5_1": "MT4129", "gpu0042/mlx4_0": "MT4099"}
    assert [w["line"] for w in warnings] == [1, 63, 75]


@pytest.mark.parametrize(("text", "message"), [
    ("CA 'mlx5_0'\n\tPort 1:\n\t\tState: Sleeping\n\t\tPhysical state: Sleep\n", r"f:3: State 'Sleeping'"),
    ("CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: fast\n",
     r"f:5: Rate: 'fast' is not a number"),
    ("CA 'mlx5_0'\n\tNode GUID: 0xzz\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n",
     r"f:2: '0xzz' is not a GUID"),
    ("CA 'mlx5_0'\n\tPort 1:\n\t\tState: Down\n", r"f:2: Port 1 without Physical state: truncated output\?"),
    ("CA 'mlx5_0'\n\tPort 1:\n\t\tgarbage here\n", r"f:3: not a line of ibstat output"),
])
def test_errors_name_file_and_line(text, message):
    with pytest.raises(FormatError, match=message):
        ibstat.read(text, "f")


def test_sizes_checked():
    text = "CA 'mlx5_0'\n" + "\tPort 1:\n" * (ibstat.MAX_PORTS + 1)
    with pytest.raises(FormatError, match=f"more than {ibstat.MAX_PORTS} ports"):
        ibstat.read(text, "f")
