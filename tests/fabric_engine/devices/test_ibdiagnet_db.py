"""The device sections of ibdiagnet2.db_csv against a fixture written from ibutils2's section definitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine.devices import ibdiagnet_db
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"
SPINE, LEAF, GPU107, GPU108 = 0xB83FD203003C1A40, 0x0C42A1030050E8A0, 0x946DAE03006C1B70, 0x946DAE03006C1C10


def _read():
    return ibdiagnet_db.read((DATA / "ibdiagnet2_devices.db_csv").read_text(), "db")


def test_temperatures_nodes_info_fec_and_findings():
    r = _read()
    spine, leaf = r["vitals"]
    assert (spine.guid, spine.name, spine.temperatures[0].celsius) == (SPINE, "MF0;ib-spine-01:MQM9700/U1", 63.0)
    assert leaf.guid == LEAF and leaf.temperatures[0].celsius is None  # N/A
    info = {n.guid: n for n in r["nodes_info"]}
    assert info[SPINE].firmware == "31.2012.1068" and info[LEAF].firmware == "27.2010.3118"
    assert info[GPU108].firmware == "28.37.1022" and info[GPU108].uptime_s == 675 and info[GPU107].device_id == 4129
    (fec,) = r["fec_modes"]
    assert list(zip(fec.guid.tolist(), fec.port.tolist(), fec.active.tolist(), fec.line.tolist(), strict=True)) == [
        (SPINE, 1, "ll_rs_fec_plr", 33), (SPINE, 2, "", 34), (GPU107, 1, "ll_rs_fec", 35)]  # 0xff: not given
    assert fec.fields["NDRFECEn"].tolist() == ["0x4a", "0x4a", "0x0"] and fec.source == "db"
    found = {(w.severity, w.check, w.event): w for w in r["warnings"]}
    assert found["warning", "FW_CHECK", "FW_VERSION_MISMATCH"].guid == GPU108
    pm = found["error", "PM_COUNTERS", "PM_COUNTER_INCREASED"]
    assert (pm.guid, pm.port, pm.scope, pm.source) == (SPINE, 17, "PORT", "db:53")
    sm = found["error", "SM_INFO", "SM_NOT_FOUND"]
    assert sm.guid is None and sm.port is None and sm.summary == "No master SM found in the fabric"


def test_fec_modes_are_columns_at_scale():
    rows = "".join(f"0x{0xB83FD20300000000 + i // 64:016x},{i % 64 + 1},{9 if i % 3 else 13}\n"
                   for i in range(200_000))
    (fec,) = ibdiagnet_db.read(f"START_FEC_MODE\nNodeGuid,PortNum,FECActv\n{rows}END_FEC_MODE\n", "db")["fec_modes"]
    assert len(fec) == 200_000 and fec.guid.dtype == np.uint64 and int(fec.guid[-1]) == 0xB83FD20300000000 + 3124
    assert (fec.active == "ll_rs_fec").sum() == 133_333 and int(fec.port[-1]) == 64


def test_detection():
    assert ibdiagnet_db.looks_like((DATA / "ibdiagnet2_devices.db_csv").read_text())
    assert not ibdiagnet_db.looks_like("START_NODES\nNodeDesc\nEND_NODES\n")


@pytest.mark.parametrize(("body", "message"), [
    ("START_TEMP_SENSING\nNodeGUID,CurrentTemperature\n0x1,hot\nEND_TEMP_SENSING\n", r"db:3: .*'hot' is not a number"),
    ("START_TEMP_SENSING\nNodeGUID,CurrentTemperature\n0x1,400\nEND_TEMP_SENSING\n", r"db:3: .*outside -60..200"),
    ("START_FEC_MODE\nNodeGuid,PortNum,FECActv\n0x1,300,9\nEND_FEC_MODE\n", r"db:3: PortNum 300 is outside 0..255"),
    ("START_WARNINGS_X\nScope,NodeGUID,PortNumber,EventName,Summary\nPORT,0xg,1,E,S\nEND_WARNINGS_X\n",
     r"db:3: '0xg' is not a GUID"),
    ("START_NODES_INFO\nNodeGUID,HWInfo_DeviceID\n0x1,0x1ffff\nEND_NODES_INFO\n", r"db:3: HWInfo_DeviceID"),
    ("START_TEMP_SENSING\nNodeGUID,CurrentTemperature\n0x1,40\n", r"db:3: file ends inside section TEMP_SENSING"),
])
def test_errors_name_file_and_line(body, message):
    with pytest.raises(FormatError, match=message):
        ibdiagnet_db.read(body, "db")
