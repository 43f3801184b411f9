"""Issue 41 through the push API: a sample's ``PortPktRcvFECN`` / ``PortPktRcvBECN`` (as ``perfquery --rcvcc`` reads
them) become the fabric's congestion readings, served by the port counters API and ``/metrics`` as the collector's
are; a bad value is a 400 naming the sample and the counter, and nothing of the push is kept; a push without them is
stored as before."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest
from django.core.cache import cache
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry import cc_readings, store
from ibweb.telemetry.cc_sweep import store_cc
from ibweb.telemetry.models import Sweep
from tests.support.engine_fixtures import settled_tick
from tests.support.fuzz import EDGE_NUMBERS
from tests.support.push_client import push_client
from tests.support.tenancy_fixtures import operator_api

DATA = Path(__file__).parents[2] / "data" / "telemetry"
URL = "/api/telemetry/fabrics/pushed/samples/"
LINKINFO = (DATA / "iblinkinfo.txt").read_text()
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client():
    yield from push_client()


def sample(port: int, t: float, **counters) -> dict:
    """A read of leaf01 (LID 2) port ``port``."""
    return {"lid": 2, "port": port, "t": t, "extended": True, "counters": {"PortXmitData": 1000, **counters}}


def push(client, *samples, linkinfo: bool = False):
    return client.post(URL, {"samples": list(samples), **({"iblinkinfo": LINKINFO} if linkinfo else {})},
                       format="json")


def two_pushes(client, now: float) -> None:
    """leaf01 port 1: 2000 FECN in 20 s, BECN unchanged; port 2: none; port 3: no congestion counters."""
    assert push(client, sample(1, now - 30.0, PortPktRcvFECN=1000, PortPktRcvBECN=3),
                sample(2, now - 30.0, PortPktRcvFECN=0, PortPktRcvBECN=0), sample(3, now - 30.0),
                linkinfo=True).status_code == 201
    assert push(client, sample(1, now - 10.0, PortPktRcvFECN=3000, PortPktRcvBECN=3),
                sample(2, now - 10.0, PortPktRcvFECN="0", PortPktRcvBECN="0"), sample(3, now - 10.0)).status_code == 201


def assert_nothing_stored(client) -> None:
    assert not Sweep.objects.filter(config=client.config).exists()
    assert store.sweeps(client.config.fabric_id) == (None, None)
    assert cc_readings.readings(client.config.fabric_id) is None


def test_pushed_fecn_and_becn_are_served_by_the_counters_api_and_metrics(client):
    now = time.time()
    two_pushes(client, now)
    assert Sweep.objects.filter(config=client.config).count() == 2
    runner = FabricRunner(client.config.fabric)
    asyncio.run(runner.start())
    asyncio.run(settled_tick(runner))  # the fabric's runtime record: nodes for the port names
    api = operator_api()
    body = api.get("/api/telemetry/fabrics/pushed/ports/leaf01/1/counters/").json()
    got = body["congestion"]
    assert got["fecn"] == 3000 and got["becn"] == 3 and got["fecn_per_s"] == pytest.approx(100.0)
    assert got["becn_per_s"] == 0.0 and got["t"] == pytest.approx(now - 10.0, abs=0.01)
    assert [c["value"] for c in body["counters"] if c["counter"] == "PortXmitDiscards"] == [None]  # as before
    none = api.get("/api/telemetry/fabrics/pushed/ports/leaf01/3/counters/").json()
    assert none["congestion"] is None and none["t"] is not None  # counters pushed, no congestion counters
    text = api.get("/metrics?fabric=pushed").content.decode()
    assert 'ibweb_port_fecn_per_second{fabric="pushed",node="leaf01",port="1"} 100' in text
    assert 'ibweb_port_becn_per_second{fabric="pushed",node="leaf01",port="1"} 0' in text
    assert 'ibweb_port_fecn_per_second{fabric="pushed",node="leaf01",port="2"} 0' in text
    assert "# TYPE ibweb_port_fecn_per_second gauge" in text and "# TYPE ibweb_port_becn_per_second gauge" in text
    assert text.count("ibweb_port_fecn_per_second{") == 2 and text.count("ibweb_port_becn_per_second{") == 2


def test_the_readings_are_those_of_the_collectors_read(client):
    """The same counters as a drop directory's ``perfquery --rcvcc`` blocks of those ports, read at those times."""
    def rcvcc(port: int, fecn: int, becn: int) -> str:
        return (f"# PortRcvConCtrl counters: Lid 2 port {port}\nPortSelect:......................{port}\n"
                f"CounterSelect:...................0x0000\nPortPktRcvFECN:..................{fecn}\n"
                f"PortPktRcvBECN:..................{becn}\n")

    now = time.time()
    two_pushes(client, now)
    pushed = cc_readings.readings(client.config.fabric_id)
    other = client.config.fabric_id + 1000
    for t, fecn in ((now - 30.0, 1000), (now - 10.0, 3000)):
        store_cc(other, [[rcvcc(1, fecn, 3) + rcvcc(2, 0, 0), t, "perfquery-cc-2.txt"]], [])
    read = cc_readings.readings(other)
    assert sorted(pushed) == sorted(read)
    for k in read:
        np.testing.assert_array_equal(pushed[k], read[k], err_msg=k)


@pytest.mark.parametrize(("counters", "message"), [
    ({"PortPktRcvFECN": -1}, "samples[1]: PortPktRcvFECN: -1 does not fit in 32 bits"),
    ({"PortPktRcvBECN": 2**32}, "samples[1]: PortPktRcvBECN: 4294967296 does not fit in 32 bits"),
    ({"PortPktRcvFECN": 2.5}, "samples[1]: PortPktRcvFECN: '2.5' is not an integer"),
    ({"PortPktRcvBECN": "many"}, "samples[1]: PortPktRcvBECN: 'many' is not an integer"),
    ({"PortPktRcvFECN": False}, "samples[1]: PortPktRcvFECN: 'False' is not an integer"),
    ({"PortPktRcvFECN": [1]}, "samples[1]: PortPktRcvFECN: '[1]' is not an integer"),
    ({"PortSLRcvFECN0": 1}, "samples[1]: unknown counter 'PortSLRcvFECN0'"),  # not kept: refused, never dropped
])
def test_a_bad_value_is_a_400_naming_the_sample_and_the_counter_and_nothing_is_stored(client, counters, message):
    now = time.time()
    r = push(client, sample(1, now, PortPktRcvFECN=1), sample(2, now, **counters), linkinfo=True)
    assert r.status_code == 400 and r.json() == {"samples": [message]}
    assert_nothing_stored(client)


def test_a_sample_holding_only_them_is_checked_as_any_sample(client):
    now = time.time()
    only = {"lid": 2, "port": 1, "t": now + 3600.0, "counters": {"PortPktRcvFECN": 1}}
    r = push(client, sample(2, now), only, linkinfo=True)
    assert r.status_code == 400
    (message,) = r.json()["samples"]
    assert message.startswith(f"samples[1]: t: {now + 3600.0!r} is ") and "ahead of this server's clock" in message
    r = push(client, {**only, "lid": 0xC000, "t": now}, linkinfo=True)
    assert r.status_code == 400 and r.json() == {"samples": ["samples[0]: lid 49152 or port 1 out of range (LIDs "
                                                             "1..49151, ports 0..255)"]}
    assert_nothing_stored(client)
    r = push(client, {**only, "t": now}, linkinfo=True)  # as a sample with no port counters: a port, no rates
    assert r.status_code == 201 and r.json()["ports"] == 1
    assert cc_readings.readings(client.config.fabric_id)["fecn"].tolist() == [1.0]


def test_a_bad_push_after_good_ones_changes_nothing(client):
    now = time.time()
    two_pushes(client, now)
    before = cc_readings.readings(client.config.fabric_id)
    newest = store.sweeps(client.config.fabric_id)[1]["id"]
    r = push(client, sample(1, now, PortPktRcvFECN=5000, PortPktRcvBECN=4), sample(2, now, PortPktRcvBECN=-2))
    assert r.status_code == 400 and r.json() == {"samples": ["samples[1]: PortPktRcvBECN: -2 does not fit in 32 bits"]}
    assert Sweep.objects.filter(config=client.config).count() == 2
    assert store.sweeps(client.config.fabric_id)[1]["id"] == newest
    after = cc_readings.readings(client.config.fabric_id)
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=k)


def test_a_push_without_them_is_stored_as_before_and_ends_the_readings(client):
    now = time.time()
    r = push(client, sample(1, now - 40.0), sample(2, now - 40.0), linkinfo=True)
    assert r.status_code == 201 and r.json()["ports"] == 2 and r.json()["status"] == "ok"
    assert cc_readings.readings(client.config.fabric_id) is None
    two_pushes(client, now)
    assert cc_readings.readings(client.config.fabric_id) is not None
    r = push(client, sample(1, now), sample(2, now))
    assert r.status_code == 201 and r.json()["ports"] == 2
    assert cc_readings.readings(client.config.fabric_id) is None  # as a sweep without them (cc_counters off)


def test_with_cc_counters_on_a_push_without_them_leaves_no_rates(client):
    client.config.cc_counters = True
    client.config.save()
    now = time.time()
    two_pushes(client, now)
    assert cc_readings.port_reading(client.config.fabric_id, 2, 1)["fecn_per_s"] == pytest.approx(100.0)
    assert push(client, sample(1, now)).status_code == 201
    assert cc_readings.port_reading(client.config.fabric_id, 2, 1) is None


_VALUES = st.sampled_from(EDGE_NUMBERS) | st.integers(-2, 2**33) | st.floats() | st.text(max_size=12) | st.none() | \
    st.booleans() | st.integers(0, 2**32 - 1).map(str)


def test_any_fecn_or_becn_value_is_a_201_or_a_400_and_only_a_201_is_kept(client):
    """Never a 500; a 400 keeps nothing (sweeps and readings as they were); a 201 keeps what was pushed."""
    seen = set()

    @settings(max_examples=30, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.dictionaries(st.sampled_from(("PortPktRcvFECN", "PortPktRcvBECN")), _VALUES, min_size=1))
    def one(counters):
        cache.clear()  # the per-token rate limit and the readings of the example before
        Sweep.objects.filter(config=client.config).delete()
        r = push(client, sample(1, time.time(), **counters), linkinfo=True)
        assert r.status_code in (201, 400), r.content[:300]
        seen.add(r.status_code)
        got = cc_readings.readings(client.config.fabric_id)
        if r.status_code == 400:
            assert list(r.json()) == ["samples"] and r.json()["samples"][0].startswith("samples[0]: PortPktRcv")
            assert got is None and not Sweep.objects.filter(config=client.config).exists()
        else:
            for name, col in cc_readings.COUNTERS:
                want = [float(int(counters[col]))] if col in counters else [np.nan]
                np.testing.assert_array_equal(got[name], want, err_msg=name)

    one()
    assert seen == {201, 400}
