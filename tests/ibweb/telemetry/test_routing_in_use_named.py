"""The overview card, the engine log, the frames and the routing panel name the same routing: the one in use.

A telemetry-fed fabric configured for ``ftree`` whose routing comes from OpenSM's LFT dump is routed by
``opensm-dump`` everywhere; the configured engine is named as such (issue 35).
"""

from __future__ import annotations

import asyncio
import logging
import time

import numpy as np
import pytest

from fabric_engine.routing import Routing
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry.sweeps import run_sweep
from tests.support.engine_fixtures import newest_v1_frame
from tests.support.tenancy_fixtures import operator_api

from .test_telemetry_routing import _clean_cache, drop, make  # noqa: F401 (autouse: a clean cache)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_dump_routed_fabric_is_named_opensm_dump_everywhere_and_ftree_as_configured(tmp_path, caplog):
    config = make("lab", tmp_path)
    Fabric.objects.filter(pk=config.fabric_id).update(routing_engine="ftree")
    drop(tmp_path / "drop", time.time() - 5)
    run_sweep(config)
    engine = FabricRunner(Fabric.objects.get(pk=config.fabric_id))
    with caplog.at_level(logging.INFO, logger="ibweb.live"):
        asyncio.run(engine.start())
    assert "fabric lab: engine started, routing in use: opensm-dump" in caplog.text
    drop(tmp_path / "drop", time.time(), dump=None)
    run_sweep(config)
    asyncio.run(engine.tick())

    api = operator_api()
    assert newest_v1_frame(config.fabric_id)["totals"]["routing"] == "opensm-dump"
    report = api.get("/api/fabrics/fabrics/lab/routing/").json()
    assert (report["engine_used"], report["requested_engine"]) == ("opensm-dump", "ftree")
    (card,) = [c for c in api.get("/api/fabrics/overview/").json()["fabrics"] if c["slug"] == "lab"]
    assert (card["routing"], card["routing_engine"]) == ("opensm-dump", "ftree")
    page = api.get("/").content.decode()
    assert "telemetry · opensm-dump (configured: ftree)" in page and "· ftree" not in page


def test_the_engine_used_is_the_fallbacks_when_the_engine_gave_the_fabric_up():
    f = fat_tree(hosts=8, radix=4)
    lft = np.zeros((f.num_switches, f.max_lid + 1), np.uint8)
    assert Routing(f, lft, "opensm-dump").engine_used == "opensm-dump"
    fell = Routing(f, lft, "ftree", {"fallback": {"engine": "minhop", "reason": "not a fat tree"}})
    assert fell.engine_used == "minhop"
