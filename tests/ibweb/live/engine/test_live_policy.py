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


async def _credit_fabric(monkeypatch):
    """A 16-host fabric under the credit model running an all-to-all, and the frames' headers it publishes."""
    from ibweb.fabrics.models import Fabric

    spec = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8},
            "jobs": [{"name": "a2a", "tenant": "t", "hosts": 16, "pattern": "all_to_all", "buffer_gb": 1.0,
                      "compute_s": 0.01}]}
    fabric = await sync_to_async(Fabric.objects.create)(name="CC", slug="cc", spec=spec, congestion_model="credit")
    sent: list[dict] = []

    async def capture(fabric_id, seq, header, links):
        sent.append(header)

    monkeypatch.setattr("ibweb.live.feed.publisher.store_newest", capture)
    return fabric, sent


async def test_a_congestion_control_policy_reaches_the_credit_model_at_the_next_tick(monkeypatch):
    from fabric_engine.backpressure.cc_params import CongestionControl
    from ibweb.tenancy.cc_settings import to_json
    from ibweb.tenancy.models import CongestionControlPolicy

    fabric, sent = await _credit_fabric(monkeypatch)
    engine = FabricRunner(fabric)
    await engine.start()
    for _ in range(2):
        await engine.tick()
    assert "marking" not in sent[-1]["congestion_tree"], "no policy: congestion control off"
    cc = CongestionControl(enabled=True, sw_control_map=0x1F, threshold=8, ca_control_map=0xFFFF,
                           ccti_timer=(10,) * 16, ccti_increase=(1,) * 16, cct=((0, 0), (0, 1), (0, 3), (0, 7)))

    def save():
        CongestionControlPolicy.objects.create(fabric=fabric, enabled=True, settings=to_json(cc))

    await sync_to_async(retry_locked)(save, what="test congestion control policy")
    await engine.tick()
    assert engine.source.emulator.congestion_control == cc
    assert "marking" in sent[-1]["congestion_tree"]


async def test_congestion_control_the_credit_model_cannot_run_leaves_the_tick_running_without_it(monkeypatch, caplog):
    """Settings saved before the fabric outgrew the credit model's congestion control limit (or written to the
    database directly) are not applied: the tick runs on without congestion control, and says why."""
    from fabric_engine import credit_tick
    from fabric_engine.backpressure.cc_params import CongestionControl
    from ibweb.tenancy.cc_settings import to_json
    from ibweb.tenancy.models import CongestionControlPolicy

    fabric, sent = await _credit_fabric(monkeypatch)
    monkeypatch.setattr(credit_tick, "CREDIT_CC_MAX_HOSTS", 8)
    cc = CongestionControl.typical()
    await sync_to_async(retry_locked)(
        lambda: CongestionControlPolicy.objects.create(fabric=fabric, enabled=True, settings=to_json(cc)),
        what="test congestion control policy")
    engine = FabricRunner(fabric)
    await engine.start()
    for _ in range(2):
        await engine.tick()
    assert engine.source.emulator.congestion_control is None
    assert "marking" not in sent[-1]["congestion_tree"] and sent[-1]["congestion_tree"]["model"] == "credit"
    assert "congestion control not applied" in caplog.text and "at most 8 hosts" in caplog.text
