"""The ``health`` key of a scenario spec (fabric_engine.health.emulated_faults): strict, errors naming the field."""

from __future__ import annotations

import pytest

from fabric_engine.errors import FabricEngineError
from fabric_engine.health.emulated_faults import MAX_FAULTS, faults_from_spec
from fabric_engine.topology.generate import fat_tree

BER = {"kind": "ber_rising", "port": "leaf01 3", "from": 1e-8, "to": 1e-4, "over_s": 60}


@pytest.fixture(scope="module")
def tiny():
    return fat_tree(hosts=8, radix=4, speed="NDR")


def test_a_valid_spec_gives_rows_and_parameters(tiny):
    faults = faults_from_spec(tiny, [BER, {"kind": "flapping", "link": "leaf01/3", "period_s": 10, "down_s": 1},
                                     {"kind": "cable_swap", "link": "spine01 1", "at_s": 0}])
    ber, flap, swap = faults
    d = tiny.out_link(tiny.node("leaf01"), 3)
    assert ber.rows == (d,) and ber.params == {"start_s": 0.0, "from": 1e-8, "to": 1e-4, "over_s": 60.0}
    assert flap.cable == d % tiny.num_links and flap.rows == (flap.cable, flap.cable + tiny.num_links)
    assert len(swap.rows) == 2 and faults_from_spec(tiny, []) == []


@pytest.mark.parametrize("spec, match", [
    ({"kinds": []}, r"^health: expected a list of faults"),
    ([[1]], r"^health\[0\]: expected an object"),
    ([{**BER, "kind": "melting"}], r"^health\[0\]\.kind: 'melting' is not one of ber_rising"),
    ([{**BER, "celsius": 3}], r"^health\[0\]: unknown key\(s\) celsius for ber_rising"),
    ([{k: v for k, v in BER.items() if k != "over_s"}], r"^health\[0\]: ber_rising needs over_s"),
    ([{**BER, "link": "leaf01 3"}], r"^health\[0\]: give one of port .* or link"),
    ([{k: v for k, v in BER.items() if k != "port"}], r"^health\[0\]: give one of port"),
    ([BER, {**BER, "port": "nosuch 1"}], r"^health\[1\]\.port: no node 'nosuch'"),
    ([{**BER, "port": "leaf01 99"}], r"^health\[0\]\.port: leaf01 has ports 1\.\.4, not 99"),
    ([{**BER, "port": "leaf01"}], r"^health\[0\]\.port: 'leaf01' is not \"<node> <port>\""),
    ([{**BER, "port": 7}], r"^health\[0\]\.port: expected \"<node> <port>\""),
    ([{**BER, "port": "x" * 300 + " 1"}], r"^health\[0\]\.port: expected .* \(at most 200 characters\)"),
    ([{**BER, "from": "1e-8"}], r"^health\[0\]\.from: expected a number"),
    ([{**BER, "from": True}], r"^health\[0\]\.from: expected a number"),
    ([{**BER, "to": float("nan")}], r"^health\[0\]\.to: expected a number"),
    ([{**BER, "from": 0}], r"^health\[0\]\.from: 0 out of range"),
    ([{**BER, "to": 0.9}], r"^health\[0\]\.to: 0\.9 out of range"),
    ([{**BER, "to": 1e-9}], r"^health\[0\]\.to: a rising BER needs to > from"),
    ([{**BER, "over_s": 0}], r"^health\[0\]\.over_s: 0 out of range"),
    ([{**BER, "start_s": -1}], r"^health\[0\]\.start_s: -1 out of range"),
    ([{**BER, "start_s": 1e12}], r"^health\[0\]\.start_s: .* out of range"),
    ([{"kind": "hot_module", "port": "leaf01 3", "celsius": 300}], r"^health\[0\]\.celsius: 300 out of range"),
    ([{"kind": "flapping", "port": "leaf01 3", "period_s": 10, "down_s": 10}],
     r"^health\[0\]\.down_s: 10 must be shorter than period_s 10"),
    ([{"kind": "flapping", "port": "leaf01 3", "period_s": 10, "down_s": 0}], r"^health\[0\]\.down_s: 0 out of range"),
    ([{"kind": "cable_swap", "port": "leaf01 3"}], r"^health\[0\]: cable_swap needs at_s"),
    ([BER, BER], r"^health\[1\]: a second ber_rising where health\[0\] has one already"),
    ([{"kind": "flapping", "port": "leaf01 3", "period_s": 10, "down_s": 1},
      {"kind": "flapping", "link": "leaf01 3", "period_s": 20, "down_s": 1}], r"^health\[1\]: a second flapping"),
    ([BER] * (MAX_FAULTS + 1), rf"^health: {MAX_FAULTS + 1} faults, at most {MAX_FAULTS}"),
])
def test_bad_specs_are_refused_naming_the_field(tiny, spec, match):
    with pytest.raises(FabricEngineError, match=match):
        faults_from_spec(tiny, spec)


def test_an_unconnected_port_is_refused():
    f = fat_tree(hosts=6, radix=4, speed="NDR")  # leaves with a free host port
    free = [(str(f.node_name[n]), p) for n in f.switches.tolist() for p in range(1, int(f.nports[n]) + 1)
            if f.out_link(n, p) < 0]
    assert free
    with pytest.raises(FabricEngineError, match=rf"^health\[0\]\.port: {free[0][0]} port {free[0][1]} has no cable"):
        faults_from_spec(f, [{**BER, "port": f"{free[0][0]} {free[0][1]}"}])
