"""Exported partitions and QoS, applied by a real OpenSM to an ibsim subnet (issue 9).

OpenSM reads the ``partitions.conf``, ``qos-policy.conf`` and ``opensm.conf`` that
``export_all`` wrote; ``smpquery pkeys`` must then show every member port with the
P_Key and the right membership bit (0x8000 for full, IBA 10.9.1), non-members
without it, and ``smpquery sl2vl`` / ``vlarb`` the exported VL tables.
"""

import re

import pytest

from ibweb.fabrics.models import Fabric
from ibweb.tenancy.exporters import export_all
from ibweb.tenancy.inventory import fabric_inventory
from ibweb.tenancy.models import Partition, PartitionMember, QosPolicy, Tenant

pytestmark = [pytest.mark.realtools, pytest.mark.django_db]

SPEC = {"topology": {"generator": "fat_tree", "hosts": 8, "radix": 4, "name": "pk"}}
SL2VL = [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 15]
HIGH = [(1, 32), (2, 16)]
LOW = [(0, 8), (3, 4)]


def pkeys_of(text: str) -> set[int]:
    """Non-zero P_Key table entries printed by ``smpquery pkeys``."""
    values = {int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]{4}", text)}
    return values - {0}


def vlarb_tables(text: str) -> dict[str, list[tuple[int, int]]]:
    """``{"low": [(vl, weight), ...], "high": [...]}`` from ``smpquery vlarb``."""
    out, current = {}, None
    vls: list[int] = []
    for line in text.splitlines():
        if "Low priority" in line:
            current = "low"
        elif "High priority" in line:
            current = "high"
        elif line.startswith("VL") and current:
            vls = [int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]+", line)]
        elif line.startswith("WEIGHT") and current:
            weights = [int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]+", line)]
            out.setdefault(current, []).extend(zip(vls, weights, strict=True))
    return out


def sl2vl_rows(text: str) -> list[list[int]]:
    return [[int(v) for v in re.findall(r"\d+", line.split("|", 1)[1])] for line in text.splitlines()
            if line.startswith("ports:")]


def test_opensm_applies_exported_partitions_and_qos(ibsim, tmp_path):
    fabric = Fabric.objects.create(name="pk", slug="pk", spec=SPEC)
    inv = fabric_inventory(fabric)
    hosts = inv.hosts
    guid = [f"0x{int(inv.port_guid[inv.port_offset[n]]):016x}" for n in hosts]
    acme, globex = Tenant.objects.create(name="acme", slug="acme"), Tenant.objects.create(name="globex", slug="globex")
    a = Partition.objects.create(fabric=fabric, tenant=acme, name="acme", pkey=0x0001)
    g = Partition.objects.create(fabric=fabric, tenant=globex, name="globex", pkey=0x0002, sl=1)
    PartitionMember.objects.bulk_create([
        PartitionMember(partition=a, guid=guid[0], membership="full"),
        PartitionMember(partition=a, guid=guid[1], membership="limited"),
        PartitionMember(partition=g, guid=guid[2], membership="both"),  # full only, without allow_both_pkeys
        PartitionMember(partition=g, guid=guid[3], membership="limited"),
    ])
    QosPolicy.objects.create(fabric=fabric, max_vls=4, high_limit=8, sl2vl=",".join(map(str, SL2VL)),
                             vlarb_high=",".join(f"{v}:{w}" for v, w in HIGH),
                             vlarb_low=",".join(f"{v}:{w}" for v, w in LOW))
    out = tmp_path / "export"
    export_all(fabric, out)

    sm_host = str(inv.node_name[hosts[-1]])  # the SM runs on a host of no tenant partition
    sim = ibsim(inv, sim_host=sm_host, tools=("smpquery",))
    sim.run_opensm(["-o", "-P", str(out / "partitions.conf"), "-Q", "-Y", str(out / "qos-policy.conf"),
                    "-F", str(out / "opensm.conf")])
    log = (sim.workdir / "opensm" / "opensm.log").read_text(errors="replace")
    errors = [line for line in log.splitlines() if "PARSE ERROR" in line or ("ERR" in line and "QoS" in line)]
    assert not errors, errors

    expected = {n: {0x7FFF} for n in range(len(hosts))}  # every CA a limited member of the default partition
    expected[len(hosts) - 1] = {0xFFFF}  # SELF=full
    expected[0] |= {0x8001}
    expected[1] |= {0x0001}
    expected[2] |= {0x8002}
    expected[3] |= {0x0002}
    for rank, node in enumerate(hosts):
        lid = int(inv.port_lid[inv.port_offset[node]])
        got = pkeys_of(sim.run(["smpquery", "pkeys", str(lid), "1"]).stdout)
        assert got == expected[rank], f"{inv.node_name[node]} (LID {lid})"
    for sw in inv.switches[:2]:
        got = pkeys_of(sim.run(["smpquery", "pkeys", str(int(inv.lid[sw])), "0"]).stdout)
        assert 0xFFFF in got  # ALL_SWITCHES=full in the default partition

    ca_lid = str(int(inv.port_lid[inv.port_offset[hosts[0]]]))
    sw_lid = str(int(inv.lid[inv.switches[0]]))
    for lid, port in ((ca_lid, "1"), (sw_lid, "1")):
        rows = sl2vl_rows(sim.run(["smpquery", "sl2vl", lid, port]).stdout)
        assert rows and all(r == SL2VL for r in rows)
        tables = vlarb_tables(sim.run(["smpquery", "vlarb", lid, port]).stdout)
        assert tables["high"][:len(HIGH)] == HIGH and all(w == 0 for _, w in tables["high"][len(HIGH):])
        assert tables["low"][:len(LOW)] == LOW and all(w == 0 for _, w in tables["low"][len(LOW):])
