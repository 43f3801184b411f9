"""Engine enforcement of partitions and QoS (issue 9)."""

import numpy as np
import pytest
import scipy.sparse as sp

from fabric_engine.errors import FabricEngineError
from fabric_engine.flows import max_min_fair
from fabric_engine.policy import REASONS, Policy, VLArbitration, allocate, enforce, violations
from fabric_engine.topology.generate import fat_tree


@pytest.fixture(scope="module")
def fabric():
    return fat_tree(hosts=8, radix=4)


def guid(fabric, host_rank):
    n = fabric.hosts[host_rank]
    return f"0x{int(fabric.port_guid[fabric.port_offset[n]]):016x}"


def reasons(fp):
    return [REASONS[r] for r in fp.reason]


def test_membership_rules_full_limited_both(fabric):
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {"partitions": [
        {"name": "a", "pkey": 1, "members": [[guid(fabric, 0), "full"], [guid(fabric, 1), "limited"],
                                             [guid(fabric, 2), "limited"], [guid(fabric, 3), "both"]]},
        {"name": "b", "pkey": 2, "members": [[guid(fabric, 4), "full"], [guid(fabric, 5), "full"]]},
    ]})
    src = np.array([h[0], h[1], h[1], h[2], h[4], h[0], h[6]])
    dst = np.array([h[1], h[0], h[2], h[3], h[5], h[4], h[7]])
    fp = enforce(pol, src, dst, np.zeros(7, int))
    assert fp.allowed.tolist() == [True, True, False, True, True, False, False]
    assert reasons(fp) == ["ok", "ok", "both-limited", "ok", "ok", "no-shared-partition", "no-shared-partition"]
    assert fp.partition.tolist() == [0, 0, 0, 0, 1, -1, -1]  # a blocked limited pair names the partition


def test_keywords_and_default_partition(fabric):
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {"partitions": [
        {"name": "Default", "pkey": 0x7FFF, "keywords": {"ALL_CAS": "limited", "ALL_SWITCHES": "full"}},
        {"name": "t", "pkey": 5, "members": [[guid(fabric, 0), "full"], [guid(fabric, 1), "full"]]},
    ]})
    fp = enforce(pol, np.array([h[0], h[2]]), np.array([h[1], h[3]]), np.zeros(2, int))
    assert fp.allowed.tolist() == [True, False]
    assert reasons(fp) == ["ok", "both-limited"] and pol.names[fp.partition[1]] == "Default"
    # a host may still reach a switch (full member) in the default partition
    sw = fabric.switches[0]
    assert enforce(pol, np.array([h[2]]), np.array([sw]), np.zeros(1, int)).allowed.all()


def test_empty_policy_blocks_nothing(fabric):
    h = fabric.hosts
    fp = enforce(Policy.from_dict(fabric, {}), h, np.roll(h, 1), np.zeros(len(h), int))
    assert fp.allowed.all() and (fp.weight == 1).all()


def test_explicit_partition_per_flow(fabric):
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {"partitions": [
        {"name": "a", "pkey": 1, "members": [[guid(fabric, 0), "full"], [guid(fabric, 1), "full"]]},
        {"name": "b", "pkey": 2, "members": [[guid(fabric, 0), "limited"], [guid(fabric, 1), "limited"]]},
    ]})
    fp = enforce(pol, np.array([h[0]] * 3), np.array([h[1], h[1], h[2]]), np.zeros(3, int),
                 pkey_index=np.array([-1, 1, 0]))
    assert reasons(fp) == ["ok", "both-limited", "not-in-partition"]


def test_partition_sl_and_rate_limit_apply(fabric):
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {
        "partitions": [{"name": "gold", "pkey": 1, "sl": 1, "rate_limit_gbps": 100,
                        "members": [[guid(fabric, 0), "full"], [guid(fabric, 1), "full"]]},
                       {"name": "free", "pkey": 2, "members": [[guid(fabric, 2), "full"], [guid(fabric, 3), "full"]]}],
        "qos": {"sl2vl": [0, 1] + [0] * 14, "vlarb_high": [[1, 64]], "vlarb_low": [[0, 16]], "max_vls": 2}})
    fp = enforce(pol, np.array([h[0], h[2]]), np.array([h[1], h[3]]), np.array([0, 0]))
    assert fp.sl.tolist() == [1, 0] and fp.vl.tolist() == [1, 0]
    assert fp.priority.tolist() == [1, 0] and fp.weight.tolist() == [64.0, 16.0]
    assert fp.rate_cap_gbps[0] == 100 and np.isinf(fp.rate_cap_gbps[1])


def test_sl_dropped_and_vl_without_weight(fabric):
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {"qos": {"sl2vl": [0, 15, 3] + [0] * 13, "vlarb_low": [[0, 8], [3, 0]],
                                            "max_vls": 8}})
    fp = enforce(pol, h[:3], h[3:6], np.array([0, 1, 2]))
    assert reasons(fp) == ["ok", "sl-dropped", "no-vl-weight"]


def test_vl_arbitration_sums_weights_per_vl():
    arb = VLArbitration.from_tables(list(range(16)), [[1, 10], [1, 5]], [[0, 4], [1, 7], [2, 0]])
    assert arb.weight[:3].tolist() == [4.0, 15.0, 0.0] and arb.priority[:3].tolist() == [0, 1, 0]


@pytest.mark.parametrize("data, words", [
    ({"partitions": [{"name": "x", "pkey": 1, "members": [["0x1234", "full"]]}]}, "0x0000000000001234"),
    ({"partitions": [{"name": "x", "pkey": 1, "members": [["0xb83fd20300000011", "sometimes"]]}]}, "membership"),
    ({"partitions": [{"name": "x", "pkey": 1, "sl": 16}]}, "sl 16"),
    ({"qos": {"sl2vl": [0] * 15}}, "16 VLs"),
    ({"qos": {"sl2vl": [0] * 16, "vlarb_low": [[0, 300]]}}, "weights 0..255"),
])
def test_bad_policy_names_the_field(fabric, data, words):
    with pytest.raises(FabricEngineError, match=words):
        Policy.from_dict(fabric, data)


def test_allocate_serves_high_priority_first_and_blocks_isolated_flows(fabric):
    # three flows over one shared link of 100 Gb/s
    inc = sp.csr_matrix(np.ones((3, 1)))
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {
        "partitions": [{"name": "hi", "pkey": 1, "sl": 1, "members": [[guid(fabric, 0), "full"], [guid(fabric, 1),
                                                                                                  "full"]]},
                       {"name": "lo", "pkey": 2, "members": [[guid(fabric, 2), "full"], [guid(fabric, 3), "full"]]}],
        "qos": {"sl2vl": [0, 1] + [0] * 14, "vlarb_high": [[1, 8]], "vlarb_low": [[0, 8]], "max_vls": 2}})
    fp = enforce(pol, np.array([h[0], h[2], h[4]]), np.array([h[1], h[3], h[5]]), np.zeros(3, int))
    demand = np.array([60.0, np.inf, np.inf])
    rate = allocate(inc, np.array([100.0]), demand, fp)
    assert rate.tolist() == pytest.approx([60.0, 40.0, 0.0])
    # without QoS the two allowed flows would split fairly
    assert max_min_fair(inc[:2], np.array([100.0]), np.array([60.0, np.inf])).tolist() == pytest.approx([50, 50])


def test_weights_shape_bandwidth_within_a_class(fabric):
    inc = sp.csr_matrix(np.ones((2, 1)))
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {"qos": {"sl2vl": [0, 1] + [0] * 14, "vlarb_low": [[0, 1], [1, 3]], "max_vls": 2}})
    fp = enforce(pol, h[:2], h[2:4], np.array([0, 1]))
    assert allocate(inc, np.array([100.0]), np.full(2, np.inf), fp).tolist() == pytest.approx([25.0, 75.0])


def test_violations_name_job_and_partition(fabric):
    h = fabric.hosts
    pol = Policy.from_dict(fabric, {"partitions": [
        {"name": "lim", "pkey": 1, "members": [[guid(fabric, 0), "limited"], [guid(fabric, 1), "limited"]]}]})
    fp = enforce(pol, np.array([h[0], h[1], h[2]]), np.array([h[1], h[0], h[3]]), np.zeros(3, int))
    alerts = violations(fp, np.array([0, 0, 1]), ["train", "eval"], pol)
    assert alerts == [{"kind": "isolation", "job": "train", "partition": "lim", "reason": "both-limited", "flows": 2},
                      {"kind": "isolation", "job": "eval", "partition": None, "reason": "no-shared-partition",
                       "flows": 1}]


def test_enforce_is_vectorized_over_many_flows():
    f = fat_tree(hosts=512, radix=64)
    h = f.hosts
    parts = [{"name": f"t{k}", "pkey": k + 1,
              "members": [[f"0x{int(f.port_guid[f.port_offset[n]]):016x}", "full"] for n in h[k * 64:(k + 1) * 64]]}
             for k in range(8)]
    pol = Policy.from_dict(f, {"partitions": parts})
    rng = np.random.default_rng(0)
    src, dst = rng.choice(h, 200_000), rng.choice(h, 200_000)
    fp = enforce(pol, src, dst, np.zeros(len(src), int))
    same = (np.searchsorted(h, src) // 64) == (np.searchsorted(h, dst) // 64)
    assert (fp.allowed == same).all()
