"""A runtime record never answers for another fabric row with the same key: its readers pass the row's identity.

A fabric deleted and created again may get the same primary key while the cache still holds
the old row's record; the live what-if, the twin's plan page and job host limit, and the
runner's own check that its record is still in the cache all ask for their row's.
"""

import asyncio

import pytest

from fabric_engine.errors import FabricEngineError
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.runtime import record
from ibweb.twin import jobs as jobsvc
from ibweb.twin.analysis import run_live
from ibweb.twin.views import _discovered
from tests.support.access_fixtures import build

pytestmark = pytest.mark.django_db(transaction=True)


def _others_record(fabric_id: int) -> str:
    r = route(fat_tree(hosts=16, radix=8), "minhop")
    return record.publish(fabric_id, "another row:0", r.fabric, r, [])


def test_the_twin_reads_no_record_of_another_row():
    lab = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry")
    _others_record(lab.pk)
    with pytest.raises(FabricEngineError, match="has no routing yet"):
        run_live(lab, {"engine": "updn"}, lambda fraction, message: None)
    assert _discovered(lab) is None
    assert jobsvc.host_limit(lab.pk, lab) == jobsvc.DEFAULT_HOST_LIMIT
    assert jobsvc.host_limit(lab.pk) == 16  # without the row: whatever the key holds


def test_the_runner_keeps_its_record_across_restarts_and_replaces_another_rows():
    shared = build()

    async def run():
        runner = FabricRunner(shared.fabric)
        await runner.start()
        await runner.tick()
        mine = runner.record_version
        runner.records.checked = 0.0  # the check is due
        await runner.tick()
        assert runner.record_version == mine  # its own record: not published again

        again = FabricRunner(await Fabric.objects.aget(pk=shared.fabric.pk))  # a restart reads the row again
        assert record.head(shared.fabric.pk, record.row_identity(again.row))["version"] == mine

        _others_record(shared.fabric.pk)
        runner.records.checked = 0.0
        await runner.tick()
        return runner, mine

    runner, mine = asyncio.run(run())
    h = record.head_of(shared.fabric)
    assert h is not None and h["version"] == runner.record_version != mine  # its own again
