"""Tenant host sets in the runtime record: every process redacts from them, without the partition rows (issue 13).

The leader stores, per tenant with partitions on the fabric, the hosts its partitions hold on
the published fabric, stamped with the policy version; :func:`ibweb.access.redaction` reads them
while that version is current, reads the database otherwise, and hides every host when neither
can be read.
"""

import asyncio

import numpy as np
import pytest
from asgiref.sync import sync_to_async
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext

from fabric_engine.topology import KIND_HOST
from ibweb import access
from ibweb.access import Level, View, redaction
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed import view as feedview
from ibweb.runtime import record
from ibweb.tenancy import services
from ibweb.tenancy.engine_policy import bump_policy_version, policy_version
from tests.support.access_fixtures import build
from tests.support.engine_fixtures import settled_tick

pytestmark = pytest.mark.django_db(transaction=True)


def _started(fabric, ticks: int = 1) -> FabricRunner:
    async def run():
        runner = FabricRunner(fabric)
        await runner.start()
        for _ in range(ticks):
            await runner.tick()
        return runner

    return asyncio.run(run())


def _node_guids(f, nodes) -> frozenset[int]:
    return frozenset(int(g) for g in f.guid[np.asarray(nodes, dtype=np.int64)])


def test_the_record_carries_each_tenants_hosts_and_a_cold_reader_redacts_without_the_member_rows():
    shared = build()
    runner = _started(shared.fabric)
    f = runner.source.fabric
    h = record.head(shared.fabric.pk)
    sets = record.tenant_hosts(shared.fabric.pk, h, policy_version(shared.fabric.pk))
    assert sets is not None and set(sets) == {t.pk for t in shared.tenants.values()}
    for slug, tenant in shared.tenants.items():
        assert sets[tenant.pk].slug == slug and sorted(sets[tenant.pk].nodes.tolist()) == sorted(shared.hosts[slug])
        assert sets[tenant.pk].guids == _node_guids(f, shared.hosts[slug])
    acme = View(Level.TENANTS, frozenset({shared.tenants["acme"].pk}))

    record.forget_memo()  # as in another process: nothing decoded yet
    feedview._memo.clear()
    with CaptureQueriesContext(connection) as queries:
        shown = redaction(acme, shared.fabric)
        fv, names, _ = feedview.cached_feed_view(acme.key, shared.fabric)
    # no row but the fabric's policy version (a column: issue 24) is read
    assert all(q["sql"].startswith('SELECT "fabrics_fabric"."policy_version"') for q in queries.captured_queries), \
        queries.captured_queries
    assert shown.host_guids == _node_guids(f, shared.hosts["acme"])
    assert shown.tenants == frozenset({"acme", "Acme Corp"})
    hosts = np.flatnonzero(f.kind == KIND_HOST)
    assert sorted(i for i in hosts.tolist() if not fv.hidden[i]) == sorted(shared.hosts["acme"])
    assert names[shared.hosts["globex"][0]] == f"host-{shared.hosts['globex'][0]}"

    # the database's answer is the same
    bump_policy_version(shared.fabric.pk)  # the record's sets are now of an older policy version
    with CaptureQueriesContext(connection) as queries:
        from_rows = redaction(acme, shared.fabric)
    assert [q for q in queries.captured_queries if "tenancy_partitionmember" in q["sql"]]
    assert from_rows == shown


def test_a_membership_change_reaches_the_record_within_one_tick():
    shared = build()

    async def run():
        runner = FabricRunner(shared.fabric)
        await runner.start()
        await settled_tick(runner)
        fid = shared.fabric.pk
        acme = shared.tenants["acme"].pk
        version = await sync_to_async(policy_version)(fid)
        assert len(record.tenant_hosts(fid, record.head(fid), version)[acme].nodes) == 4

        def drop_two():
            partition = shared.partitions["acme"]
            guids = list(partition.members.order_by("guid").values_list("guid", flat=True))
            services.remove_members(partition, guids[:2], via="test")

        await sync_to_async(drop_two)()
        current = await sync_to_async(policy_version)(fid)
        assert record.tenant_hosts(fid, record.head(fid), current) is None  # stale until the leader's next tick
        await settled_tick(runner)
        sets = record.tenant_hosts(fid, record.head(fid), current)
        assert sets is not None and len(sets[acme].nodes) == 2
        assert set(sets[acme].nodes.tolist()) < set(shared.hosts["acme"])
        return sets

    asyncio.run(run())


def test_redaction_fails_closed_when_neither_record_nor_database_answers():
    shared = build()
    _started(shared.fabric)
    acme = View(Level.TENANTS, frozenset({shared.tenants["acme"].pk}))
    bump_policy_version(shared.fabric.pk)  # the record's sets are stale: the database must answer

    def down(execute, sql, params, many, context):
        if "tenancy_partitionmember" in sql:
            raise DatabaseError("database unreachable")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(down):
        shown = redaction(acme, shared.fabric)
    assert shown.tenants == frozenset() and shown.host_guids == frozenset()
    assert redaction(access.EVERYTHING, shared.fabric).shows_all  # ALL needs neither


def test_a_new_job_catalog_carries_the_tenant_host_sets_on_the_same_tick():
    shared = build()

    async def run():
        runner = FabricRunner(shared.fabric)
        await runner.start()
        await runner.tick()
        fid, before = shared.fabric.pk, runner.record_version
        runner.source.catalog_version = "scheduler's new jobs"  # what the twin's source says when its jobs change
        await runner.tick()
        assert runner.record_version != before
        return record.tenant_hosts(fid, record.head(fid), await sync_to_async(policy_version)(fid))

    sets = asyncio.run(run())
    assert sets is not None and sorted(sets[shared.tenants["acme"].pk].nodes.tolist()) == sorted(shared.hosts["acme"])
