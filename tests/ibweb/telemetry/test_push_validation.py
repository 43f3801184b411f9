"""Issue 14: the push API refuses what the engine cannot use with a 400 naming the field or line; nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibweb.telemetry import store
from ibweb.telemetry.models import CollectorConfig, Sweep
from tests.support import hostile
from tests.support.fuzz import SAMPLE_RECORDS, mutated
from tests.support.push_client import push_client

DATA = Path(__file__).parents[2] / "data" / "telemetry"
URL = "/api/telemetry/fabrics/pushed/samples/"
SAMPLE = {"lid": 2, "port": 3, "t": 1.7e9, "extended": True, "counters": {"PortXmitData": 1000}}
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client():
    yield from push_client()


def assert_nothing_stored(config: CollectorConfig) -> None:
    assert not Sweep.objects.filter(config=config).exists()
    assert store.sweeps(config.fabric_id) == (None, None)


def test_iblinkinfo_with_lid_100_million_is_a_400_naming_the_line(client):
    """Issue 14: accepted (201) before, then 762 MB on every engine tick."""
    text = hostile.iblinkinfo_far_lid()
    bad = next(i for i, ln in enumerate(text.splitlines(), 1) if str(hostile.FAR_LID) in ln)
    r = client.post(URL, {"samples": [SAMPLE], "iblinkinfo": text}, format="json")
    assert r.status_code == 400
    assert r.json()["iblinkinfo"] == [f"iblinkinfo:{bad}: LID 100000000 is above the highest unicast LID 49151 "
                                      f"(0xBFFF)"]
    assert_nothing_stored(client.config)


def test_iblinkinfo_the_engine_could_not_build_is_a_400(client):
    text = (DATA / "iblinkinfo.txt").read_text().replace("==>       5    2[  ]", "==>       5    9[  ]", 1)
    r = client.post(URL, {"samples": [SAMPLE], "iblinkinfo": text}, format="json")
    assert r.status_code == 400
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "==>       5    9[  ]" in ln)
    assert r.json()["iblinkinfo"] == [f"iblinkinfo:{line}: gpu0008 port 1: far end leaf04 port 9 is outside its "
                                      f"listed ports 1..4"]
    assert_nothing_stored(client.config)


def test_sample_with_lid_2_to_the_40_is_a_400_naming_the_sample(client):
    """Issue 14: a 500 before."""
    body = hostile.sample_huge_lid()
    body["samples"] = [SAMPLE, *body["samples"]]
    r = client.post(URL, {**body, "iblinkinfo": (DATA / "iblinkinfo.txt").read_text()}, format="json")
    assert r.status_code == 400
    assert r.json()["samples"] == ["samples[1]: lid 1099511627776 or port 1 out of range (LIDs 1..49151, "
                                   "ports 0..255)"]
    assert_nothing_stored(client.config)


@pytest.mark.parametrize(("samples", "words"), [
    ({"lid": 2}, "non-empty list"),
    ([], "non-empty list"),
    ([SAMPLE, "x"], "samples[1]: a sample is an object"),
    ([{**SAMPLE, "t": "later"}], "samples[0]: t: 'later'"),
    ([{**SAMPLE, "counters": {"PortXmitData": -1}}], "samples[0]: PortXmitData: -1 does not fit"),
])
def test_malformed_samples_are_400s(client, samples, words):
    r = client.post(URL, {"samples": samples, "iblinkinfo": (DATA / "iblinkinfo.txt").read_text()}, format="json")
    assert r.status_code == 400 and words in r.json()["samples"][0]
    assert_nothing_stored(client.config)


def test_a_valid_push_is_still_stored(client):
    r = client.post(URL, {"samples": [SAMPLE], "iblinkinfo": (DATA / "iblinkinfo.txt").read_text()}, format="json")
    assert r.status_code == 201 and r.json()["ports"] == 1
    assert store.sweeps(client.config.fabric_id)[1]["id"] == r.json()["id"]


_LINKINFO = {p.name: p.read_text() for p in sorted(DATA.glob("iblinkinfo*.txt"))}


def test_fuzzed_pushes_are_201_or_400_and_only_valid_ones_are_stored(client):
    """Any body: never a 500; a 400 stores nothing; a 201 stores a sweep the engine can build a fabric from."""
    from fabric_engine.telemetry import read_discovery

    @settings(max_examples=40, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.fixed_dictionaries({"samples": SAMPLE_RECORDS | st.just([SAMPLE])}, optional={
        "iblinkinfo": mutated(_LINKINFO) | st.sampled_from(sorted(_LINKINFO.values()))}))
    def push(body):
        cache.clear()  # the per-token rate limit is not what this tests
        before = Sweep.objects.filter(config=client.config).count()
        r = client.post(URL, body, format="json")
        assert r.status_code in (201, 400), r.content[:300]
        after = Sweep.objects.filter(config=client.config).count()
        assert after == before + (r.status_code == 201)
        if r.status_code == 201:
            read_discovery(store.sweeps(client.config.fabric_id)[1]["linkinfo"])

    push()
