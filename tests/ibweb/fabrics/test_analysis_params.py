"""Analysis parameters checked by a DRF serializer per kind: the same limits, defaults and messages naming the field."""

import pytest
from rest_framework.exceptions import ValidationError

from ibweb.fabrics.api.params import LIMITS, PARAMS, clean_params


def errors(kind: str, params, num_links: int = 100) -> dict:
    with pytest.raises(ValidationError) as info:
        clean_params(kind, params, num_links)
    return info.value.detail


def test_each_kind_has_a_serializer_with_its_defaults():
    assert set(PARAMS) == {"ebb", "whatif_links", "whatif_engine", "whatif_roce", "whatif_live", "whatif_congestion"}
    assert clean_params("ebb", {}, 10) == {"patterns": 1000, "seed": 1, "method": "count", "pattern": "bisection"}
    assert clean_params("ebb", {"engine": "updn"}, 10)["engine"] == "updn"
    assert clean_params("whatif_links", {"failed_cables": [7, 2]}, 10) == {"ebb_patterns": 200, "seed": 1,
                                                                          "failed_cables": [2, 7]}
    assert clean_params("whatif_roce", {"qps": 4}, 10) == {"qps": 4, "seed": 1, "same_seed": False}
    assert clean_params("whatif_live", {"failed_switches": ["s2", "s1", "s2"], "engine": None}, 10) == {
        "failed_cables": [], "failed_switches": ["s1", "s2"]}


@pytest.mark.parametrize(("kind", "params", "expected"), [
    ("ebb", {"patterns": 0}, {"patterns": ["0 is outside 1..20000"]}),
    ("ebb", {"seed": 2**32}, {"seed": [f"{2**32} is outside 0..{2**32 - 1}"]}),
    ("whatif_engine", {"engine": "minhop", "ebb_patterns": 5001}, {"ebb_patterns": ["5001 is outside 0..5000"]}),
    ("whatif_roce", {"qps": 129}, {"qps": ["129 is outside 1..128"]}),
    ("ebb", {"patterns": "5"}, {"patterns": ["expected an integer, got '5'"]}),
    ("ebb", {"patterns": 5.0}, {"patterns": ["expected an integer, got 5.0"]}),
    ("ebb", {"patterns": True}, {"patterns": ["expected an integer, got True"]}),
    ("ebb", {"seed": None}, {"seed": ["expected an integer, got None"]}),
    ("ebb", {"patterns": [1] * 1000}, {"patterns": [f"expected an integer, got {repr([1] * 1000)[:37]}..."]}),
    ("ebb", {"samples": 1, "patterns": 0}, {"samples": [
        "unknown parameter of ebb; known: engine, method, pattern, patterns, seed"]}),
    ("ebb", {"engine": None}, {"engine": ["required: one of dfsssp, ftree, minhop, updn"]}),
    ("whatif_engine", {}, {"engine": ["required: one of dfsssp, ftree, minhop, updn"]}),
    ("whatif_links", {"failed_cables": []}, {"failed_cables": ["required: a non-empty list of cable indices"]}),
    ("whatif_links", {"failed_cables": [1, 100]}, {"failed_cables": ["item 1: cable 100 is outside 0..99"]}),
    ("whatif_links", {"failed_cables": [1, 1]}, {"failed_cables": ["lists a cable twice"]}),
    ("whatif_roce", {"same_seed": "yes"}, {"same_seed": ["expected true or false, got 'yes'"]}),
    ("whatif_live", {"failed_switches": ["s"] * 65}, {"failed_switches": ["expected at most 64 switch names"]}),
    ("whatif_live", {}, {"params": ["fail a cable or a switch, or choose another routing engine"]}),
    ("whatif_live", [], {"params": ["expected an object"]}),
])
def test_a_bad_parameter_is_named_with_the_same_message(kind, params, expected):
    assert errors(kind, params) == expected


def test_the_limits_are_those_the_work_is_bounded_by():
    assert LIMITS == {"patterns": (1, 20000), "ebb_patterns": (0, 5000), "seed": (0, 2**32 - 1), "qps": (1, 128),
                      "vls": (1, 15)}


@pytest.mark.django_db
def test_the_api_answers_an_out_of_range_parameter_with_a_400_naming_it():
    from django.contrib.auth.models import Permission, User
    from rest_framework.test import APIClient

    from ibweb.fabrics.demo import ensure_demo
    from ibweb.fabrics.models import Analysis

    ensure_demo()
    user = User.objects.create_user("analyst")
    user.user_permissions.add(Permission.objects.get(codename="add_analysis", content_type__app_label="fabrics"))
    client = APIClient()
    client.force_authenticate(user)
    r = client.post("/api/fabrics/fabrics/demo/analyses/", {"kind": "whatif_roce", "params": {"seed": -1, "qps": 2}},
                    format="json")
    assert r.status_code == 400 and r.json() == {"params": {"seed": [f"-1 is outside 0..{2**32 - 1}"]}}
    assert not Analysis.objects.exists()
