"""Progress messages on the feed as each view sees them (issue 14): below ALL an analysis that ended says
only its status (a what-if's summary names jobs, a failure's message may name hosts)."""

import asyncio
import json

import pytest
from channels.testing import WebsocketCommunicator

from ibweb.access import EVERYTHING, FABRIC_ONLY, progress_message
from ibweb.asgi import application
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed.frame_store import broadcast_progress

pytestmark = pytest.mark.django_db(transaction=True)
LEAK = "gpu0007 port 1 has no route to gpu0042"


async def progress_of(comm) -> dict:
    while True:
        msg = await comm.receive_from(timeout=10)
        if isinstance(msg, str) and json.loads(msg).get("type") == "progress":
            return json.loads(msg)


async def test_an_anonymous_socket_reads_no_host_in_a_failed_analysis(settings):
    settings.IBWEB_PUBLIC_READ = True
    fabric, _ = await asyncio.to_thread(ensure_demo)
    engine = FabricRunner(fabric)
    await engine.start()
    await engine.tick()
    comm = WebsocketCommunicator(application, "/ws/fabrics/demo/live/")
    assert (await comm.connect())[0]
    try:
        await comm.receive_from(timeout=5)  # the snapshot
        for kind in ("ebb", "whatif_links"):
            await broadcast_progress(fabric.pk, {"task": "analysis", "id": 7, "kind": kind, "fraction": 1.0,
                                                 "status": "failed", "message": LEAK})
            got = await progress_of(comm)
            assert got["status"] == "failed" and "gpu00" not in json.dumps(got), got
    finally:
        await comm.disconnect()
        await engine.stop()


def test_progress_message_below_all_keeps_running_steps_and_ebb_results_only():
    running = {"task": "analysis", "kind": "whatif_links", "status": "running", "message": "rerouting"}
    done = {"task": "analysis", "kind": "whatif_links", "status": "done", "message": "worst acme-train x1.4"}
    ebb = {"task": "analysis", "kind": "ebb", "status": "done", "message": "eBB 87.5% over 10 patterns"}
    engine = {"task": "engine", "status": "running", "message": "routing with ftree"}
    for p in (running, ebb, engine):
        assert progress_message(FABRIC_ONLY, p) == p
    assert progress_message(FABRIC_ONLY, done)["message"] == "analysis done"
    assert progress_message(EVERYTHING, done) == done
