"""Partitions saved in the database reach the live emulation within one tick (issue 9)."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from ibweb.db.retry import retry_locked
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.tenancy import services
from ibweb.tenancy.demo import ensure_demo_policy
from ibweb.tenancy.models import Partition

pytestmark = pytest.mark.django_db(transaction=True)


async def test_removing_members_isolates_a_job_at_the_next_tick(monkeypatch):
    fabric, _ = await asyncio.to_thread(ensure_demo)
    assert await sync_to_async(ensure_demo_policy)(fabric) == 4  # three tenants and the storage partition
    sent: list[dict] = []

    async def capture(fabric_id, seq, header, links):
        sent.append(header)

    monkeypatch.setattr("ibweb.live.feed.publisher.store_newest", capture)
    engine = FabricRunner(fabric)
    await engine.start()
    for _ in range(3):
        await engine.tick()
    before = sent[-1]
    assert not [a for a in before["alerts"] if a.get("kind") == "isolation"]

    def drop_half_of_acme():
        partition = Partition.objects.get(fabric=fabric, pkey=0x0101)
        guids = list(partition.members.order_by("guid").values_list("guid", flat=True))
        services.remove_members(partition, guids[: len(guids) // 2], via="test")

    # the runner's threads (events, rollups) may hold SQLite's write lock a moment: retried as they retry theirs
    await sync_to_async(retry_locked)(drop_half_of_acme, what="test partition change")
    await engine.tick()
    after = sent[-1]
    isolation = [a for a in after["alerts"] if a.get("kind") == "isolation"]
    assert isolation, after["alerts"]
    assert {a["job"] for a in isolation} <= {"llama-70b", "moe-8x22b", "rlhf-7b"}  # acme's jobs only
    assert all(a["partition"] for a in isolation)
