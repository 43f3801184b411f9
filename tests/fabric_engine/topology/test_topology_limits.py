"""The bounds of one subnet as data (issue 14): every generator parameter has a range and a reason."""

import inspect
import json

import pytest

from fabric_engine.errors import TopologyError
from fabric_engine.topology import generate
from fabric_engine.topology.limits import (
    GENERATOR_PARAMETERS,
    MAX_NODE_PORTS,
    MAX_UNICAST_LID,
    check_generator_parameters,
    generator_limits,
)


@pytest.mark.parametrize("name", sorted(generate.GENERATORS))
def test_every_generator_parameter_has_a_limit_and_a_reason(name):
    params = set(inspect.signature(generate.GENERATORS[name]).parameters)
    assert set(GENERATOR_PARAMETERS[name]) == params
    assert all(limit.why for limit in GENERATOR_PARAMETERS[name].values())


def test_limits_are_json_for_forms_and_apis():
    limits = json.loads(json.dumps(generator_limits()))
    assert limits["fat_tree"]["radix"] == {"kind": "int", "why": limits["fat_tree"]["radix"]["why"], "min": 2,
                                           "max": MAX_NODE_PORTS, "choices": None, "optional": False,
                                           "design_max": None}
    assert limits["fat_tree"]["hosts"]["max"] == MAX_UNICAST_LID
    assert limits["fat_tree"]["levels"]["choices"] == [2, 3]


@pytest.mark.parametrize(("params", "words"), [
    ({"radix": 255}, "topology.radix: 255 is above 254"),
    ({"radix": 1}, "topology.radix: 1 is below 2"),
    ({"levels": 2.0}, "topology.levels: expected an integer"),
    ({"speed": 4}, "topology.speed: expected a string"),
    ({"width": 3}, "topology.width: 3 is not one of 1, 2, 4, 8, 12"),
    ({"name": "n" * 101}, "topology.name: longer than 100"),
    ({"hosts": 49152}, "topology.hosts: 49152 is above 49151"),
])
def test_out_of_range_parameters_name_the_field(params, words):
    with pytest.raises(TopologyError, match=words.replace(".", r"\.")):
        check_generator_parameters("fat_tree", params)


def test_offline_designs_may_exceed_a_subnet():
    check_generator_parameters("fat_tree", {"hosts": 65536, "lids": "none"})
    with pytest.raises(TopologyError, match="262144"):
        check_generator_parameters("fat_tree", {"hosts": 10**6, "lids": "none"})
