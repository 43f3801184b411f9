"""``/api/telemetry/fabrics/<slug>/ports/<node>/<port>/counters/``: a port's error counters, rates and thresholds."""

from __future__ import annotations

import asyncio
import os
import shutil
import time

import pytest
from rest_framework.test import APIClient

from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.sweeps import run_sweep
from tests.support.engine_fixtures import settled_tick
from tests.support.tenancy_fixtures import operator_api

from .test_telemetry_app import DATA, _clean_cache, bump, make_config  # noqa: F401 (_clean_cache: autouse)

pytestmark = pytest.mark.django_db(transaction=True)


def _drop(dirpath, t: float, symbol_errors: int) -> None:
    dirpath.mkdir(exist_ok=True)
    shutil.copy(DATA / "iblinkinfo.txt", dirpath / "iblinkinfo.txt")
    (dirpath / "perfquery-x-2.txt").write_text((DATA / "perfquery_ext_loop.txt").read_text())
    basic = bump((DATA / "perfquery_loop.txt").read_text(), "SymbolErrorCounter", 1, symbol_errors)
    (dirpath / "perfquery-2.txt").write_text(basic)
    for p in dirpath.glob("perfquery*.txt"):
        os.utime(p, (t, t))


@pytest.fixture
def fabric(tmp_path):
    config = make_config("pc", source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "d"),
                         thresholds={"SymbolErrorCounter": 50})
    now = time.time()
    _drop(tmp_path / "d", now - 30.0, 0)
    run_sweep(config)
    _drop(tmp_path / "d", now - 10.0, 100)  # 100 symbol errors in 20 s: 300 a minute
    run_sweep(config)
    runner = FabricRunner(config.fabric)
    asyncio.run(runner.start())
    asyncio.run(settled_tick(runner))  # the counter conditions become events
    return config.fabric


def _url(slug: str, node: str, port: int) -> str:
    return f"/api/telemetry/fabrics/{slug}/ports/{node}/{port}/counters/"


def test_a_port_shows_each_error_counter_its_rate_and_threshold(fabric):
    api = operator_api()
    body = api.get(_url(fabric.slug, "leaf01", 1)).json()
    assert body["node"] == "leaf01" and body["port"] == 1 and body["t"] is not None
    by = {c["counter"]: c for c in body["counters"]}
    symbol = by["SymbolErrorCounter"]
    assert symbol["value"] == 100 and symbol["rate_per_min"] == pytest.approx(300.0, rel=0.01)
    assert symbol["threshold_per_min"] == 50.0 and symbol["above"]  # the collector's override, not the default 10
    downed = by["LinkDownedCounter"]
    assert downed == {"counter": "LinkDownedCounter", "value": 0, "rate_per_min": 0.0, "threshold_per_min": 1.0,
                      "above": False}
    assert by["PortRcvErrors"]["rate_per_min"] == 0.0 and not by["PortRcvErrors"]["above"]
    [condition] = body["conditions"]  # the error_rate condition of this port, and only of it
    assert condition["kind"] == "error_rate" and condition["ends"] == ["leaf01 port 1"]
    same = api.get(_url(fabric.slug, body["guid"], 1)).json()  # by node GUID
    assert same["counters"] == body["counters"]
    second = api.get(_url(fabric.slug, "leaf01", 2)).json()
    assert second["conditions"] == []
    other = {c["counter"]: c for c in second["counters"]}
    assert other["SymbolErrorCounter"]["rate_per_min"] == 0.0 and not other["SymbolErrorCounter"]["above"]


def test_bad_ports_nodes_and_fabrics_are_404_naming_them(fabric):
    api = operator_api()
    r = api.get(_url(fabric.slug, "nosuch", 1))
    assert r.status_code == 404 and "nosuch" in r.json()["detail"]
    r = api.get(_url(fabric.slug, "leaf01", 40))
    assert r.status_code == 404 and "port 40" in r.json()["detail"]
    demo, _ = ensure_demo()  # emulated: no collector, no counters
    assert api.get(_url(demo.slug, "leaf01", 1)).status_code == 404
    unread = {c["counter"]: c for c in api.get(_url(fabric.slug, "gpu0008", 1)).json()["counters"]}
    assert unread["SymbolErrorCounter"]["value"] is None and unread["SymbolErrorCounter"]["rate_per_min"] is None


def test_a_host_the_view_may_not_see_is_no_such_node(fabric):
    assert operator_api().get(_url(fabric.slug, "gpu0008", 1)).status_code == 200
    anonymous = APIClient()  # public read: fabric-wide data, no tenant's hosts
    r = anonymous.get(_url(fabric.slug, "gpu0008", 1))
    assert r.status_code == 404 and "gpu0008" in r.json()["detail"]  # its own words, nothing more
    switch = anonymous.get(_url(fabric.slug, "leaf01", 1)).json()  # a switch port: fabric-wide data
    assert {c["counter"]: c["above"] for c in switch["counters"]}["SymbolErrorCounter"]
