"""Fabric validation on a real subnet (issue 38): ibsim, OpenSM, ``sminfo``, ``smpquery pkeys``, ``ibnetdiscover``.

The net file declares ``leaf01[2] - gpu0002`` 1x (ibsim's ``parse_port_link_width_and_speed`` reads the width
from the port line's comment), so the link trains at 1xHDR among 4xHDR host links. ``partitions.conf`` gives
P_Key 0x0001 to gpu0001's port alone. With partition enforcement on (OpenSM's default ``--part_enforce both``)
OpenSM copies a CA's P_Keys to the switch port it is cabled to (``osm_pkey_mgr.c``, ``pkey_mgr_update_peer_port``),
so the two ends agree and nothing is found; with ``--part_enforce off`` it leaves the switch port's table alone:
gpu0001 holds 0x8001, leaf01 port 1 only the default 0xffff, and the check finds the mismatch. Both subnets are
read with our readers only (``read_sminfo``, ``read_pkeys``, ``formats.read``) and judged by ``validate``.
"""

from __future__ import annotations

import re
import time

import pytest

from fabric_engine import formats
from fabric_engine.formats import ibsim as ibsim_format
from fabric_engine.topology.generate import fat_tree
from fabric_engine.validation import read_pkeys, read_sminfo, validate

pytestmark = pytest.mark.realtools


def _net() -> tuple[str, object]:
    f = fat_tree(hosts=4, radix=4, speed="HDR")
    text = ibsim_format.write(f)
    block = re.search(r'Switch\t4 "leaf01".*?(?=\n\n)', text, flags=re.S)
    line = re.search(r'^\[2\]\t"gpu0002"\[1\].*4xHDR$', block.group(0), flags=re.M)
    assert line, "the writer's leaf01 port 2 line"
    start = block.start() + line.start()
    end = block.start() + line.end()
    return text[:start] + text[start:end].replace("4xHDR", "1xHDR") + text[end:], f


def _subnet(ibsim, tmp_path, enforce: str):
    net, f = _net()
    guid = f"0x{int(f.port_guid[f.port_offset[f.node('gpu0001')]]):016x}"
    part = tmp_path / f"partitions-{enforce}.conf"
    part.write_text("Default=0x7fff, ipoib : ALL=limited, ALL_SWITCHES=full, SELF=full ;\n"
                    f"acme=0x0001 : {guid}=full ;\n")
    sim = ibsim(net, sim_host="gpu0004", name=f"sim-{enforce}", tools=("smpquery", "sminfo"))
    cache = sim.workdir / "osm"
    cache.mkdir()
    sim.start_opensm(["-P", str(part), "-Z", enforce, "-s", "0"], cache_dir=cache)
    deadline = time.monotonic() + 60
    while "SMINFO_MASTER" not in (out := sim.run(["sminfo"], check=False).stdout):
        assert time.monotonic() < deadline, f"no master SM after 60 s: {out!r}"
        time.sleep(0.3)
    fabric = formats.read(sim.run(["ibnetdiscover"]).stdout, source="ibnetdiscover")
    captures = []
    for c in range(fabric.num_links):  # every CA port and the switch port it is cabled to (8 links)
        for node, port in ((fabric.a_node[c], fabric.a_port[c]), (fabric.b_node[c], fabric.b_port[c])):
            slot = fabric.port_offset[node] + port - 1
            lid = int(fabric.port_lid[slot])
            cmd = ["smpquery", "pkeys", str(lid), str(int(port))]
            captures.append(f"$ {' '.join(cmd)}\n" + sim.run(cmd).stdout)
    sms = read_sminfo(sim.run(["sminfo"]).stdout, "sminfo").sms
    tables = read_pkeys("".join(captures), "smpquery pkeys").tables
    return fabric, sms, tables


@pytest.mark.parametrize("enforce", ["off", "both"])
def test_pkey_mismatch_and_trained_down_link_found_on_ibsim(ibsim, tmp_path, enforce):
    fabric, sms, tables = _subnet(ibsim, tmp_path, enforce)
    report = validate(fabric, sminfo=sms, pkeys=tables)
    by_check = {}
    for f in report.findings:
        by_check.setdefault(f.check, []).append(f)
    (slow,) = by_check.pop("link_below_expected")
    assert slow.subject == "leaf01/2 - gpu0002/1" and slow.evidence["width"] == 1
    assert slow.evidence["expected_width"] == 4 and slow.evidence["basis"] == "majority of host-leaf links"
    assert report.checks["sm_mastership"]["status"] == "pass" and len(sms) == 1 and sms[0].master
    assert report.checks["pkey_mismatch"]["status"] != "skipped"
    if enforce == "off":
        (pk,) = by_check.pop("pkey_mismatch")
        assert pk.subject == "leaf01/1 - gpu0001/1" and pk.severity == "error"
        assert pk.evidence["only_at_ca"] == ["0x0001"] and pk.evidence["only_at_switch"] == []
    else:  # OpenSM keeps both ends of every switch-CA link alike
        assert report.checks["pkey_mismatch"]["status"] == "pass"
    assert by_check == {}
