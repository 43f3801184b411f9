"""Conditions against the reference cabling: a cut cable stays a condition until relinked or accepted.

Real ``iblinkinfo`` captures of an ibsim fat tree (before, after ``Unlink``, after
``ReLink``) arrive through a drop directory; the fabric's runner compares each discovery
with the reference cabling (its last good discovery, or what an operator accepted).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry import store
from ibweb.telemetry.models import CollectorConfig
from ibweb.telemetry.sweeps import run_sweep
from ibweb.tenancy.models import AuditEntry

from .test_telemetry_routing import DATA, _clean_cache, drop, make  # noqa: F401 (autouse: a clean cache)

pytestmark = pytest.mark.django_db(transaction=True)


def conditions(engine: FabricRunner) -> list[dict]:
    asyncio.run(engine.tick())
    prev, newest = store.sweeps(engine.fabric_id)
    return [a for a in engine.source.state(prev, newest, time.time(), engine.seq).alerts if a.get("condition")]


def sweep(config: CollectorConfig, tmp_path: Path, linkinfo: str, t: float) -> None:
    drop(tmp_path / "drop", t, linkinfo=linkinfo, dump=None)
    run_sweep(config)


def operator(perms=("view_all_tenants", "change_fabric")) -> APIClient:
    user = User.objects.create_user("op", password="pw")
    user.user_permissions.add(*Permission.objects.filter(codename__in=perms))
    client = APIClient()
    client.force_authenticate(user)
    return client


def watched(tmp_path: Path) -> tuple[CollectorConfig, FabricRunner, float]:
    """A drop-directory fabric discovered once (the ibsim fat tree as built) and its started runner."""
    config = make("lab", tmp_path)
    t = time.time() - 100
    sweep(config, tmp_path, "iblinkinfo.txt", t)
    engine = FabricRunner(config.fabric)
    asyncio.run(engine.start())
    return config, engine, t


def test_a_cut_cable_stays_until_relinked_and_a_good_discovery_becomes_the_reference(tmp_path):
    config, engine, t = watched(tmp_path)
    config.refresh_from_db()
    assert config.reference == (DATA / "iblinkinfo.txt").read_text() and config.reference_by == ""
    assert conditions(engine) == []

    for k in range(3):  # the same cut seen by three sweeps: one condition, the same since
        sweep(config, tmp_path, "iblinkinfo_unlinked.txt", t + 10 + k)
        found = conditions(engine)
        assert [(c["kind"], c["severity"], c["cable"]) for c in found] == [("link_down", "critical", -1)]
        if k == 0:
            first = found[0]
        assert found[0]["since"] == first["since"] and found[0]["a"] == first["a"]
    config.refresh_from_db()
    assert config.reference == (DATA / "iblinkinfo.txt").read_text(), "a discovery with a cable missing is not good"
    f = engine.source.fabric
    assert all(0 <= n < f.num_nodes for n in first["nodes"])
    assert {str(f.node_name[n]) for n in first["nodes"]} == {e.rsplit(" port ", 1)[0] for e in (first["a"],
                                                                                                 first["b"])}

    sweep(config, tmp_path, "iblinkinfo_relinked.txt", t + 20)
    assert conditions(engine) == []
    config.refresh_from_db()  # nothing of the reference missing: the relinked discovery is the last good one
    assert config.reference == (DATA / "iblinkinfo_relinked.txt").read_text() and config.reference_by == ""


@pytest.mark.parametrize("swept_again", [False, True], ids=["next tick", "a sweep before the next tick"])
def test_accepting_the_current_cabling_ends_its_conditions_and_is_audited(tmp_path, swept_again):
    """Issue 35: a sweep arriving between the accept and the next tick re-read the row with its new reference
    (a new sweep refreshes the config) and the conditions were never judged against it: the cut stayed open."""
    config, engine, t = watched(tmp_path)
    sweep(config, tmp_path, "iblinkinfo_unlinked.txt", t + 10)
    assert [c["kind"] for c in conditions(engine)] == ["link_down"]
    url = "/api/telemetry/fabrics/lab/reference/"
    assert operator(perms=("view_all_tenants",)).post(url).status_code == 403
    User.objects.filter(username="op").delete()
    client = operator()
    before = client.get(url).json()
    assert before["cables"] == engine.source.fabric.num_links + 1 and before["by"] is None
    r = client.post(url)
    assert r.status_code == 200, r.content
    assert (r.json()["cables"], r.json()["by"]) == (engine.source.fabric.num_links, "op")
    entry = AuditEntry.objects.get(object_type="reference cabling")
    assert (entry.username, entry.via, entry.before["cables"], entry.after["cables"]) == (
        "op", "api", before["cables"], before["cables"] - 1)
    if swept_again:  # the same cut seen again: the config is re-read with the new sweep, not by the timer
        sweep(config, tmp_path, "iblinkinfo_unlinked.txt", t + 11)
        engine.source._config_read = time.time()
    else:
        engine.source._config_read = 0.0  # re-read now, not in five seconds
    assert conditions(engine) == []


def test_accept_without_a_discovery_is_a_400(tmp_path):
    make("lab", tmp_path)
    r = operator().post("/api/telemetry/fabrics/lab/reference/")
    assert r.status_code == 400 and "no discovery" in r.json()["detail"]
