"""Routing of telemetry-fed fabrics (issue 7): OpenSM's LFT dump, re-routing on topology events, the path API.

The fixtures are real: ``iblinkinfo*.txt``, ``opensm-lfts*.dump`` and ``ibtracert_1_11*.txt``
were captured from ibsim running ``fat-tree-8.net`` with OpenSM ``-D 0x47``, before and
after ``Unlink "leaf01"[3]`` (``tests/realtools/record_telemetry_lfts.py``).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from rest_framework.test import APIClient

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import opensm_lfts
from fabric_engine.routing import route
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.runtime import record
from ibweb.telemetry import source as source_module
from ibweb.telemetry import store
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.lft_tracker import RoutingTracker, dead_entries, read_dump
from ibweb.telemetry.models import CollectorConfig, Sweep
from ibweb.telemetry.sweeps import run_sweep
from tests.realtools.tracert import ibtracert_hops, switch_hops
from tests.support.engine_fixtures import newest_v1_frame
from tests.support.tenancy_fixtures import operator_api

DATA = Path(__file__).parents[2] / "data" / "telemetry"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()
    yield
    cache.clear()


def drop(dirpath: Path, t: float, linkinfo: str = "iblinkinfo.txt", dump: str | None = "opensm-lfts.dump") -> None:
    """An external collector's drop directory at time ``t`` (optionally with OpenSM's dump)."""
    dirpath.mkdir(exist_ok=True)
    shutil.copy(DATA / linkinfo, dirpath / "iblinkinfo.txt")
    shutil.copy(DATA / "perfquery_ext_loop.txt", dirpath / "perfquery-x-2.txt")
    shutil.copy(DATA / "perfquery_loop.txt", dirpath / "perfquery-2.txt")
    if dump is not None:
        put_dump(dirpath / "opensm-lfts.dump", dump, t)
    for p in dirpath.glob("perfquery*.txt"):
        os.utime(p, (t, t))


def put_dump(path: Path, fixture: str, t: float) -> None:
    shutil.copy(DATA / fixture, path)
    os.utime(path, (t, t))


def make(slug: str, tmp_path: Path, **kw) -> CollectorConfig:
    fabric = Fabric.objects.create(name=slug, slug=slug, mode=FabricMode.TELEMETRY, tick_s=1.0)
    kw.setdefault("source", CollectorSource.DIRECTORY)
    kw.setdefault("drop_dir", str(tmp_path / "drop"))
    return CollectorConfig.objects.create(fabric=fabric, stale_after_s=600.0, **kw)


def path_of(slug: str, src: str = "gpu0001", dst: str = "gpu0005") -> dict:
    r = operator_api().get(f"/api/fabrics/fabrics/{slug}/path/", {"src": src, "dst": dst})
    assert r.status_code == 200, r.content
    return r.json()


def traced(name: str) -> list[tuple[str, int, int]]:
    return ibtracert_hops((DATA / name).read_text())


def routing_of(fabric):
    """The routing the fabric's runtime record holds (as a web process reads it)."""
    return record.routing(fabric.pk, record.head(fabric.pk))


def discovered(name: str):
    return fabric_from_linkinfo(parse_iblinkinfo((DATA / name).read_text()), "lab")


def test_dump_in_drop_directory_routes_the_path_api_like_ibtracert(tmp_path):
    config = make("lab", tmp_path)
    drop(tmp_path / "drop", time.time() - 5)
    sweep = run_sweep(config)
    engine = FabricRunner(config.fabric)
    asyncio.run(engine.start())
    assert engine.source.router.source == "opensm-dump" and engine.source.router.routing.engine == "opensm-dump"
    # the published routing, read in this (web) process, is OpenSM's dump on the discovered fabric, entry for entry
    routing = routing_of(config.fabric)
    want = opensm_lfts.read((DATA / "opensm-lfts.dump").read_text(), engine.source.fabric)
    assert np.array_equal(np.asarray(routing.lft), want.lft)
    assert routing.fabric.num_links == engine.source.fabric.num_links == 16
    assert routing_of(config.fabric) is routing  # cached per process and version
    body = path_of("lab")
    assert body["routing"] == "opensm-dump"
    assert switch_hops(body["hops"]) == traced("ibtracert_1_11.txt") == [("leaf01", 1, 3), ("spine01", 1, 3),
                                                                       ("leaf03", 3, 1)]
    # the engine says what it routes with: an event on the sweep record, an alert, the frame, the collector API
    sweep.refresh_from_db()
    loaded = [e for e in sweep.events if e["kind"] == "routing"]
    assert [e["action"] for e in loaded] == ["loaded"] and str(tmp_path / "drop") in loaded[0]["message"]
    drop(tmp_path / "drop", time.time(), dump=None)  # second sweep, same dump
    run_sweep(config)
    asyncio.run(engine.tick())
    frame = newest_v1_frame(config.fabric_id)
    assert frame["totals"]["routing"] == "opensm-dump"
    api = operator_api().get("/api/telemetry/collectors/").json()["results"][0]
    assert api["routing"]["source"] == "opensm-dump" and api["routing"]["dead_entries"] == 0
    assert api["lfts_path"] == ""
    # a telemetry-fed fabric has no jobs
    jobs = APIClient().get("/api/fabrics/fabrics/lab/jobs/")
    assert jobs.status_code == 200 and jobs.json() == {"fabric": "lab", "jobs": []}


def test_link_down_with_an_old_dump_reroutes_then_the_new_dump_is_loaded(tmp_path):
    config = make("lab", tmp_path)
    t0 = time.time() - 30
    drop(tmp_path / "drop", t0)
    run_sweep(config)
    engine = FabricRunner(config.fabric)
    asyncio.run(engine.start())
    v_dump = store.routing_status(config.fabric_id)["version"]
    # leaf01 port 3 - spine01 goes down; OpenSM has not re-routed yet, its dump is the old one
    drop(tmp_path / "drop", t0 + 10, linkinfo="iblinkinfo_unlinked.txt", dump=None)
    down = run_sweep(config)
    asyncio.run(engine.tick())
    assert engine.source.router.source == "computed" and engine.source.router.routing.engine == "minhop"
    down.refresh_from_db()
    assert [e["kind"] for e in down.events] == ["link_down", "routing"]
    event = down.events[-1]
    assert event["action"] == "rerouted" and event["severity"] == "warning"
    # judged by content (issue 35): what disagreed, where, and how often both were read
    for part in ("after link down:", "disagrees with this discovery", "the dump read 4 times, the discovery as often",
                 "11 entries lead out of ports without a cable (leaf01 port 3: 7, spine01 port 1: 4)",
                 "spine01 routes LID 1 (gpu0001) out of port 1, which has no cable"):
        assert part in event["message"]
    assert "older" not in event["message"] and "not changed" not in event["message"]
    prev, newest = store.sweeps(config.fabric_id)
    alerts = engine.source.state(prev, newest, time.time(), engine.seq).alerts
    assert any(a["kind"] == "routing" and a["action"] == "rerouted" for a in alerts)
    status = store.routing_status(config.fabric_id)
    assert status["source"] == "computed" and status["version"] != v_dump
    body = path_of("lab")
    assert body["routing"] == "minhop"
    f = engine.source.fabric
    assert np.array_equal(np.asarray(routing_of(config.fabric).lft), route(f, "minhop").lft)
    hops = switch_hops(body["hops"])
    assert hops[0][0] == "leaf01" and hops[0][2] == 4 and len(hops) == 3  # around the dead cable, via spine02
    # OpenSM re-routes and rewrites its dump: the next tick loads it (no new sweep needed)
    put_dump(tmp_path / "drop" / "opensm-lfts.dump", "opensm-lfts_unlinked.dump", t0 + 20)
    asyncio.run(engine.tick())
    assert engine.source.router.source == "opensm-dump"
    assert engine.source.router.status()["dead_entries"] == 0
    assert switch_hops(path_of("lab")["hops"]) == traced("ibtracert_1_11_unlinked.txt")
    down.refresh_from_db()
    assert [e.get("action") for e in down.events] == [None, "rerouted", "reloaded"]
    assert "the dump changed" in down.events[-1]["message"]
    asyncio.run(engine.tick())  # nothing changed: no new event
    down.refresh_from_db()
    assert len(down.events) == 3


def test_without_a_dump_the_fabric_routing_engine_is_used(tmp_path):
    config = make("plain", tmp_path, source=CollectorSource.DIRECTORY)
    fabric = config.fabric
    fabric.routing_engine = "updn"
    fabric.save()
    drop(tmp_path / "drop", time.time(), dump=None)
    sweep = run_sweep(config)
    engine = FabricRunner(fabric)
    asyncio.run(engine.start())
    assert engine.source.router.source == "computed" and engine.source.router.routing.engine == "updn"
    sweep.refresh_from_db()
    event = sweep.events[-1]
    assert event["action"] == "computed" and "no LFT dump at" in event["message"] and event["severity"] == "warning"
    hops = path_of("plain", "gpu0001", "gpu0008")["hops"]
    assert hops[0]["name"] == "gpu0001" and hops[-1]["name"] == "gpu0008" and len(hops) == 5
    # an explicit path that appears later is picked up on the next tick, after the collector row is re-read
    dump = tmp_path / "osm" / "opensm-lfts.dump"
    dump.parent.mkdir()
    put_dump(dump, "opensm-lfts.dump", time.time())
    CollectorConfig.objects.filter(pk=config.pk).update(lfts_path=str(dump))
    drop(tmp_path / "drop", time.time() + 1, dump=None)
    run_sweep(config)
    asyncio.run(engine.tick())
    assert engine.source.router.source == "opensm-dump" and engine.source.router.path == dump
    assert switch_hops(path_of("plain")["hops"]) == traced("ibtracert_1_11.txt")


def test_path_api_before_routing_and_for_unknown_hosts(tmp_path):
    config = make("early", tmp_path, source=CollectorSource.PUSH, drop_dir="")
    r = APIClient().get("/api/fabrics/fabrics/early/path/", {"src": "gpu0001", "dst": "gpu0005"})
    assert r.status_code == 503 and "has not published" in r.json()["detail"]
    f = discovered("iblinkinfo.txt")
    record.publish(config.fabric_id, record.row_identity(config.fabric), f, route(f, "minhop"))
    r = operator_api().get("/api/fabrics/fabrics/early/path/", {"src": "gpu0001", "dst": "leaf01"})
    assert r.status_code == 400 and "not a host" in r.json()["dst"]
    assert path_of("early")["routing"] == "minhop"
    port = APIClient().get("/api/fabrics/fabrics/early/ports/leaf01/3/history/")
    assert port.status_code == 200 and port.json()["link"] == f.out_link(f.node("leaf01"), 3)


def test_tracker_waits_for_a_dump_being_written_and_refuses_a_foreign_one(tmp_path):
    f = discovered("iblinkinfo.txt")
    dump = tmp_path / "opensm-lfts.dump"
    text = (DATA / "opensm-lfts.dump").read_text()
    dump.write_text(text[: len(text) // 2])  # OpenSM writes in place; this is mid-write
    tracker = RoutingTracker(dump, "minhop", wait_s=0.01)
    event = tracker.on_topology(f)
    assert tracker.source == "computed" and "being written (read 4 times)" in event["message"]
    assert tracker.poll(f) is None  # still incomplete
    dump.write_text(text)
    event = tracker.poll(f)
    assert event["action"] == "reloaded" and tracker.source == "opensm-dump"
    # a dump of another subnet: the error names the file and line; the routing in use is kept
    dump.write_text(text.replace("'leaf02'", "'elsewhere'").replace("0x98039b0300000002 (", "0x0000000000000bad ("))
    os.utime(dump, (time.time() + 5, time.time() + 5))
    event = tracker.poll(f)
    assert event["action"] == "kept" and event["severity"] == "warning"
    assert f"{dump}:17" in event["message"] and tracker.source == "opensm-dump"
    assert tracker.poll(f) is None  # not retried until it changes again


def test_a_dump_made_for_other_cabling_is_flagged(tmp_path):
    """The full fabric's dump read onto the unlinked discovery: its entries through leaf01 port 3 are dead."""
    f = discovered("iblinkinfo_unlinked.txt")
    dump = tmp_path / "opensm-lfts.dump"
    put_dump(dump, "opensm-lfts.dump", time.time())
    tracker = RoutingTracker(dump, wait_s=0.01)
    event = tracker.on_topology(f)
    assert tracker.source == "computed"
    dead = dead_entries(read_dump(f, dump)[0])
    # every entry that used the dead cable: leaf01 out port 3, spine01 out port 1 (counted in the text)
    tables = re.split(r"^(?=Unicast lids)", (DATA / "opensm-lfts.dump").read_text(), flags=re.M)
    uses = {name: len(re.findall(rf"^0x[0-9a-f]+ {port:03d} ", t, flags=re.M))
            for t in tables for name, port in (("leaf01", 3), ("spine01", 1)) if f"('{name}')" in t}
    assert uses == {"leaf01": 7, "spine01": 4} and dead == 11
    assert event["severity"] == "warning" and f"{dead} entries lead out of ports without a cable" in event["message"]
    assert dead_entries(route(f, "minhop")) == 0


def test_config_lfts_path():
    fabric = Fabric.objects.create(name="v", slug="v", mode=FabricMode.TELEMETRY)
    with pytest.raises(ValidationError, match="lfts_path"):
        CollectorConfig(fabric=fabric, lfts_path="relative/opensm-lfts.dump").clean()
    assert CollectorConfig(fabric=fabric).lfts_file() is None
    assert CollectorConfig(fabric=fabric, source=CollectorSource.DIRECTORY, drop_dir="/d").lfts_file() == Path(
        "/d/opensm-lfts.dump")
    given = CollectorConfig(fabric=fabric, source=CollectorSource.DIRECTORY, drop_dir="/d", lfts_path="/osm/x.dump")
    given.clean()
    assert given.lfts_file() == Path("/osm/x.dump")


def test_admin_shows_the_dump_path_and_the_routing_in_use(tmp_path, admin_client):
    config = make("adm", tmp_path)
    drop(tmp_path / "drop", time.time())
    run_sweep(config)
    asyncio.run(FabricRunner(config.fabric).start())
    page = admin_client.get(f"/admin/telemetry/collectorconfig/{config.pk}/change/").content.decode()
    assert 'name="lfts_path"' in page and "LFT dump path" in page
    assert f"OpenSM LFT dump {tmp_path / 'drop' / 'opensm-lfts.dump'}" in page
    listing = admin_client.get("/admin/telemetry/collectorconfig/").content.decode()
    assert "OpenSM LFT dump" in listing


def test_a_stored_discovery_that_cannot_be_built_is_refused_once_not_every_tick_issue_14(tmp_path, monkeypatch):
    config = make("bad", tmp_path)
    drop(tmp_path / "drop", time.time() - 5, dump=None)
    run_sweep(config)
    engine = FabricRunner(config.fabric)
    asyncio.run(engine.start())
    good = engine.source.fabric
    # a discovery the engine cannot build reaches the store (stored before the push API checked them)
    bad = Sweep.objects.create(config=config, source=config.source)
    prev = store.sweeps(config.fabric_id)[1]
    store.put_sweep(config.fabric_id, bad.pk, time.time(), prev["linkinfo"] + "a line the parser refuses\n",
                    prev["samples"], [], [])
    parsed = []

    def refuse(*args, **kwargs):
        parsed.append(1)
        raise FabricEngineError("iblinkinfo line 3: not a port line")

    monkeypatch.setattr(source_module, "parse_iblinkinfo", refuse)
    seqs = [asyncio.run(engine.tick()) for _ in range(4)]
    assert seqs == sorted(seqs) and seqs[-1] > 0  # frames go on, on the fabric in use
    assert engine.source.fabric is good and parsed == [1]  # parsed once, not once per tick
    bad.refresh_from_db()
    assert bad.status == "failed" and "not a port line" in bad.failures[0]["error"]
    frame = newest_v1_frame(config.fabric_id)
    assert [a["kind"] for a in frame["alerts"] if a["kind"] == "discovery"] == ["discovery"]
