"""qos_* options of opensm.conf and qos-policy.conf (issue 9)."""

import pytest

from fabric_engine.errors import FormatError
from fabric_engine.formats.opensm_qos import (
    DEFAULT_TABLES,
    QosLevel,
    QosMatchRule,
    QosTables,
    parse_opensm_conf,
    parse_policy,
    parse_sl2vl,
    parse_vlarb,
    write_opensm_conf,
    write_policy,
)


def test_opensm_conf_round_trip_with_port_types():
    base = QosTables(max_vls=4, high_limit=10, vlarb_high=[(1, 32)], vlarb_low=[(0, 8), (2, 4)],
                     sl2vl=[0, 1, 2, 3] * 4)
    ca = QosTables(max_vls=2, high_limit=255, vlarb_high=[], vlarb_low=[(0, 1), (1, 1)], sl2vl=[0, 1] * 8)
    text = write_opensm_conf(base, {"qos_ca": ca})
    assert "qos_ca_sl2vl 0,1,0,1" in text and text.startswith("qos TRUE\n")
    parsed = parse_opensm_conf("# other options\nsweep_interval 10\n" + text)
    assert parsed == {"qos": base, "qos_ca": ca}


def test_missing_options_keep_opensm_defaults():
    parsed = parse_opensm_conf("qos_max_vls 2\n")["qos"]
    assert parsed.max_vls == 2 and parsed.sl2vl == DEFAULT_TABLES.sl2vl and parsed.vlarb_low == DEFAULT_TABLES.vlarb_low


@pytest.mark.parametrize("fn, text, words", [
    (parse_vlarb, "0:256", "weight of VL 0 256"),
    (parse_vlarb, "15:1", "VL 15"),
    (parse_vlarb, "0-4", "VL:weight"),
    (parse_sl2vl, "0,1,2", "16 VLs"),
    (parse_sl2vl, ",".join(["16"] * 16), "VL of SL 0 16"),
])
def test_bad_tables_name_the_value(fn, text, words):
    with pytest.raises(FormatError, match=words):
        fn(text)


def test_opensm_conf_error_names_the_line():
    with pytest.raises(FormatError) as info:
        parse_opensm_conf("qos TRUE\nqos_vlarb_low 0:4,1:300\n")
    assert info.value.line == 2


def test_policy_round_trip():
    levels = [QosLevel("gold", 1, mtu_limit=5, rate_limit=21, use="tenant acme"), QosLevel("bronze", 3)]
    rules = [QosMatchRule("gold", [0x1, 0x2]), QosMatchRule("bronze", [0x10])]
    text = write_policy(levels, rules, default_sl=0)
    assert "qos-level-name: gold" in text and "pkey: 0x0001, 0x0002" in text
    got_levels, got_rules, default = parse_policy(text)
    assert got_levels == levels and got_rules == [QosMatchRule("gold", [1, 2]), QosMatchRule("bronze", [16])]
    assert default == 0


def test_policy_reads_simplified_ulps():
    levels, rules, default = parse_policy("qos-ulps\n  default : 2\n  any, pkey 0x0A-0x0C : 5\nend-qos-ulps\n")
    assert default == 2 and levels[0].sl == 5 and rules[0].pkeys == [10, 11, 12]


def test_policy_rejects_unknown_level():
    with pytest.raises(ValueError, match="unknown QoS level"):
        write_policy([], [QosMatchRule("nope", [1])])
