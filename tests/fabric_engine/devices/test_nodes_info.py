"""ibdiagnet2.nodes_info against a fixture written from ibutils2's GeneralInfo field names."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_engine.devices import nodes_info
from fabric_engine.devices.vitals import NodeInfo
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"


def test_nodes_extended_and_short_firmware():
    warnings: list = []
    spine, hca, legacy = nodes_info.read((DATA / "ibdiagnet2.nodes_info").read_text(), "n", warnings)
    assert spine == NodeInfo(0xB83FD203003C1A40, "MF0;ib-spine-01:MQM9700/U1", 0xD2F2, "0xa1", "31.2012.1068",
                             "MT_0000000002", 0x24EA00, "n:7")
    assert (hca.device_id, hca.firmware, hca.uptime_s) == (4129, "28.37.1022", 675)
    # extended fields all zero: the short version; N/A uptime not given
    assert (legacy.firmware, legacy.uptime_s, legacy.psid) == ("7.2.0000", None, "MT_0C20110003")
    assert warnings == []


@pytest.mark.parametrize(("text", "message"), [
    ("GUID=0x1\n", r"n:1: GUID outside a node's record"),
    ("Node Name=a\nHWInfo_DeviceID=0x1\n", r"n:1: node record without GUID="),
    ("Node Name=a\nGUID=0x1\nHWInfo_UpTime=0xfffffffff\n", r"n:3: HWInfo_UpTime"),
    ("Node Name=a\nGUID=0x1\nFWInfo_Major=12z\n", r"n:3: FWInfo_Major: '12z' is not a number"),
    ("Node Name=a\nGUID=0x1\n???\n", r"n:3: not a line of ibdiagnet2.nodes_info output"),
])
def test_errors_name_file_and_line(text, message):
    with pytest.raises(FormatError, match=message):
        nodes_info.read(text, "n")
