"""The validation checks (issue 38): each finds its problem, with evidence, and stays quiet on a sound fabric."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.topology import SPEEDS, Fabric
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin.plan import read_plan_csv
from fabric_engine.validation.asic import check_asic
from fabric_engine.validation.devices import check_firmware, check_vitals, version_key
from fabric_engine.validation.identity import duplicate_ids, duplicate_rows
from fabric_engine.validation.links import class_majority, link_classes, slow_links
from fabric_engine.validation.partitions import check_pkeys
from fabric_engine.validation.pkeys import PKeyTable, read_pkeys
from fabric_engine.validation.sm import check_sm
from fabric_engine.validation.sminfo import read_sminfo

from .conftest import DATA, device, vitals_types


def rebuilt(f: Fabric, **changes) -> Fabric:
    """``f`` with some of its arrays replaced."""
    fields = dict(kind=f.kind, node_name=f.node_name, guid=f.guid, lid=f.lid, nports=f.nports, role=f.role,
                  tier=f.tier, group=f.group, port_lid=f.port_lid, port_guid=f.port_guid, a_node=f.a_node,
                  a_port=f.a_port, b_node=f.b_node, b_port=f.b_port, width=f.width, speed=f.speed,
                  length_m=f.length_m)
    fields.update(changes)
    return Fabric.build(f.name, **fields)


# ------------------------------------------------------------------ links
def test_trained_down_link_of_ibsim_is_found_against_its_class(ibsim_fabric):
    (f,) = slow_links(ibsim_fabric)
    assert f.subject == "leaf01/2 - gpu0002/1" and f.severity == "error"
    assert f.evidence["width"] == 1 and f.evidence["expected_width"] == 4
    assert f.evidence["class"] == "host-leaf" and f.evidence["basis"] == "majority of host-leaf links"
    c = f.link
    assert ibsim_fabric.width[c] == 1 and {str(ibsim_fabric.node_name[n]) for n in
                                           (ibsim_fabric.a_node[c], ibsim_fabric.b_node[c])} == {"leaf01", "gpu0002"}


def test_majority_is_per_class_and_ties_go_up():
    classes = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    values = np.array([4, 4, 1, 2, 1, 4, 4, 1, 1])
    assert class_majority(classes, values).tolist() == [4, 4, 4, 2, 2, 4, 4, 4, 4]


def test_each_class_has_its_own_expectation():
    f = fat_tree(hosts=8, radix=4, speed="HDR")
    classes, names = link_classes(f)
    host_leaf = classes == names.index("host-leaf")
    speed = np.where(host_leaf, SPEEDS.index("EDR"), SPEEDS.index("HDR"))  # hosts EDR by design, uplinks HDR
    assert slow_links(rebuilt(f, speed=speed)) == []
    speed[np.flatnonzero(~host_leaf)[0]] = SPEEDS.index("EDR")  # one uplink down to EDR
    (bad,) = slow_links(rebuilt(f, speed=speed))
    assert bad.evidence["class"] == "leaf-spine" and (bad.evidence["speed"], bad.evidence["expected_speed"]) == (
        "EDR", "HDR") and bad.severity == "error"  # half the rate


def test_plan_overrides_the_majority(ibsim_fabric):
    plan = read_plan_csv("leaf01,2,gpu0002,1,HDR,1x\nleaf01,1,gpu0001,1,NDR,4x\n", "plan.csv")
    found = slow_links(ibsim_fabric, plan)
    assert [(x.subject, x.evidence["basis"], x.evidence["expected_speed"]) for x in found] == [
        ("leaf01/1 - gpu0001/1", "plan", "NDR")]  # the 1x link is as planned; gpu0001 is below its plan


# -------------------------------------------------------------- identities
def test_duplicate_port_guid_across_nodes():
    f = fat_tree(hosts=4, radix=4, speed="HDR")
    pg = f.port_guid.copy()
    h0, h1 = f.hosts[:2]
    pg[f.port_offset[h1]] = pg[f.port_offset[h0]]
    found = duplicate_ids(rebuilt(f, port_guid=pg))
    assert [(x.check, x.evidence["count"]) for x in found] == [("duplicate_guid", 2)]
    assert set(found[0].evidence["holders"]) == {str(f.node_name[h0]), str(f.node_name[h1])}
    assert duplicate_ids(f) == []


def test_duplicate_guid_reported_by_two_devices():
    devs = [device("sw1", 0x1234, serial="MT001"), device("sw2", 0x1234, serial="MT002"), device("sw3", 0x99)]
    (found,) = duplicate_ids(None, devs)
    assert found.subject == "device GUID 0x0000000000001234" and found.evidence["count"] == 2
    assert duplicate_ids(None, devs[:1] + [device("sw1", 0x1234, serial="MT001")]) == []
    assert duplicate_ids(None, devs[:1] + [device("leaf-07", 0x1234)]) == []  # another tool's record, no serial


def test_duplicate_lids_among_rows():
    (found,) = duplicate_rows(np.array([5, 6, 5, 7, 5]), np.array([0, 1, 2, 3, 0]), ["a", "b", "c", "d"],
                              "duplicate_lid", "LID")
    assert found.subject == "LID 5" and found.evidence["holders"] == ["a", "c"] and found.check == "duplicate_lid"


# -------------------------------------------------------------------- SMs
def test_one_master_is_fine(ibsim_fabric):
    assert check_sm(read_sminfo((DATA / "ibsim_sminfo.txt").read_text()).sms, ibsim_fabric) == []


def test_two_masters_and_no_master():
    sms = read_sminfo((DATA / "sminfo_two_masters.txt").read_text()).sms
    (two,) = check_sm(sms)
    assert two.severity == "error" and "2 master SMs" in two.message and len(two.evidence["sms"]) == 3
    (none,) = check_sm([s for s in sms if not s.master])
    assert none.severity == "error" and "no master SM" in none.message


def test_standby_outranking_the_master():
    sms = read_sminfo((DATA / "sminfo_standby_outranks.txt").read_text()).sms
    found = check_sm(sms)
    assert [(f.severity, f.evidence["sm"]["lid"]) for f in found] == [("warning", 12), ("info", 13)]


# ----------------------------------------------------------------- P_Keys
def test_pkey_mismatch_of_ibsim(ibsim_fabric):
    tables = read_pkeys((DATA / "ibsim_pkeys.txt").read_text()).tables
    (f,) = check_pkeys(ibsim_fabric, tables)
    assert f.severity == "error" and f.subject == "leaf01/1 - gpu0001/1"
    assert f.evidence["only_at_ca"] == ["0x0001"] and f.evidence["only_at_switch"] == []
    assert f.evidence["ca_keys"] == ["0x0001", "0x7fff"] and f.evidence["switch_keys"] == ["0x7fff"]


def test_pkey_only_at_switch_is_a_warning_and_isl_is_not_compared(ibsim_fabric):
    f = ibsim_fabric
    leaf, spine = f.node("leaf01"), f.node("spine01")
    isl_port = next(int(f.a_port[c]) if f.a_node[c] == leaf else int(f.b_port[c]) for c in range(f.num_links)
                    if {int(f.a_node[c]), int(f.b_node[c])} == {leaf, spine})
    gpu = f.node("gpu0002")
    gpu_lid = int(f.port_lid[f.port_offset[gpu]])
    tables = [PKeyTable(int(f.lid[leaf]), None, 2, (0xFFFF, 0x8005), 64),  # leaf01/2 faces gpu0002
              PKeyTable(gpu_lid, None, 1, (0x7FFF,), 64),
              PKeyTable(int(f.lid[leaf]), None, isl_port, (0xFFFF, 0x8009), 64),
              PKeyTable(int(f.lid[spine]), None, 1, (0xFFFF,), 64)]
    (found,) = check_pkeys(f, tables)
    assert found.severity == "warning" and found.evidence["only_at_switch"] == ["0x0005"]
    assert check_pkeys(f, tables[2:]) == []  # an ISL: OpenSM clears enforcement there


def test_pkey_tables_of_one_end_only_are_not_judged(ibsim_fabric):
    f = ibsim_fabric
    gpu = f.node("gpu0001")
    assert check_pkeys(f, [PKeyTable(int(f.port_lid[f.port_offset[gpu]]), None, 1, (0x8001,), 64)]) == []


# ---------------------------------------------------------------- devices
def test_firmware_majority_and_minimum():
    devs = [device(f"sw{i}", i + 1) for i in range(3)] + [device("sw9", 10, firmware="31.2010.4100"),
                                                          device("cx7", 11, part="MCX75310AAS", firmware="28.39.1002")]
    (odd,) = check_firmware(devs)
    assert odd.subject == "sw9" and odd.severity == "warning" and odd.evidence["majority"] == "31.2012.1068"
    assert odd.evidence["versions"] == {"31.2010.4100": 1, "31.2012.1068": 3}
    low = check_firmware(devs, {"MQM9700-NS2F": "31.2012.1000", "MCX75310AAS": "28.40.0"})
    assert [(f.subject, f.severity) for f in low] == [("cx7", "error"), ("sw9", "error")]
    assert version_key("31.2012.1068") > version_key("31.2010.4100")


def test_vitals_out_of_range():
    Fan, Psu, Temperature, _ = vitals_types()
    d = device("sw1", 1, fans=[Fan("1", 9000, True), Fan("2", 0, True), Fan("3", None, False)],
               psus=[Psu("PSU1", True, True, 250.0), Psu("PSU2", True, False, 0.0), Psu("PSU3", False, None, None)],
               temps=[Temperature("ASIC", 96.0, 99.0, 95.0, 105.0), Temperature("module 3", 106.0, None, 70.0, 105.0),
                      Temperature("ambient", 40.0, None, None, None), Temperature("module 4", None, None, 70, 80)],
               errors=["PSU2: DC fault"])
    got = sorted((f.check, f.subject, f.severity) for f in check_vitals([d]))
    assert got == [("device_errors", "sw1", "warning"), ("fan", "sw1 fan 2", "error"), ("fan", "sw1 fan 3", "error"),
                   ("psu", "sw1 PSU PSU2", "error"), ("psu", "sw1 PSU PSU3", "error"),
                   ("temperature", "sw1 ASIC", "warning"), ("temperature", "sw1 module 3", "error")]
    fallback = check_vitals([d], warning_c=35.0)
    assert any(f.subject == "sw1 ambient" and f.severity == "warning" for f in fallback)
    assert check_vitals([device("ok", 2, fans=[Fan("1", 8000, True)], psus=[Psu("1", True, True, 100.0)])]) == []


# ------------------------------------------------------------------- ASIC
def test_switch_with_most_ports_unhealthy_is_suspected():
    f = fat_tree(hosts=16, radix=8, speed="HDR")
    grade = np.zeros(int(f.nports.sum()), np.int8)
    leaf = int(f.switches[0])
    slots = np.arange(f.port_offset[leaf], f.port_offset[leaf] + f.nports[leaf])
    cabled = slots[f.port_out_link[slots] >= 0]
    grade[cabled[: len(cabled) // 2]] = 2
    (found,) = check_asic(f, grade, share=0.5, min_ports=2)
    assert found.subject == str(f.node_name[leaf]) and found.evidence["unhealthy_ports"] == len(cabled) // 2
    assert check_asic(f, grade, share=0.75, min_ports=2) == []
    assert check_asic(f, grade, share=0.5, min_ports=len(cabled)) == []
    with pytest.raises(ValueError):
        check_asic(f, grade, share=0)
