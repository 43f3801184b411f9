"""Issue 26, item 3: a ``partitions.conf`` of 3,000 partitions is imported in a bounded number of queries, exactly as
statement-by-statement would, and a larger one is refused before anything is written.

The import took 24 s because it made about a dozen queries per partition (checks, save, member delete with a
signal each, audit). The query count here is the regression check; ``tests/bench/bench_hostile_requests.py``
measures the time.
"""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from fabric_engine.errors import FormatError
from ibweb.tenancy.engine_policy import policy_version
from ibweb.tenancy.importers import MAX_IMPORT_PARTITIONS, import_partitions_conf
from ibweb.tenancy.models import AuditEntry, Partition, PartitionMember
from ibweb.tenancy.views import import_diff
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db

N = 3000


def conf(n: int = N, start: int = 0x10, auto: bool = True) -> str:
    """``n`` partitions, each with three of the fabric's 8 hosts (one of them limited), the last without a P_Key."""
    lines = [f"p{i}=0x{start + i:04x},ipoib,sl={i % 16} : {host_guid(i % 8)}, {host_guid((i + 1) % 8)}=full, "
             f"{host_guid((i + 3) % 8)}=limited ;" for i in range(n - 1 if auto else n)]
    if auto:
        lines.append(f"auto : {host_guid(0)}=both ;")
    return "\n".join(lines) + "\n"


def test_3000_partitions_in_a_bounded_number_of_queries(partitions):
    admin = user_in("policy admin", "imp")
    version = policy_version(partitions[0].fabric_id)
    with CaptureQueriesContext(connection) as queries:
        result = import_partitions_conf(partitions[0].fabric, conf(), admin)
    assert len(queries) < N // 20, len(queries)  # a dozen per partition before: about 36,000
    assert len(result.created) == N and result.members == 3 * (N - 1) + 1 and not result.updated
    rows = {p.pkey: p for p in Partition.objects.filter(fabric=partitions[0].fabric)}
    assert len(rows) == N + 2 and rows[0x10 + 17].sl == 1 and rows[0x10 + 17].name == "p17" and rows[3].name == "auto"
    members = dict(rows[0x10 + 5].members.values_list("guid", "membership"))
    assert members == {host_guid(5): "limited", host_guid(6): "full", host_guid(0): "limited"}  # default: limited
    assert PartitionMember.objects.filter(partition__fabric=partitions[0].fabric).count() == 3 * (N - 1) + 1 + 3
    audit = AuditEntry.objects.filter(action="import", via="import")
    assert audit.count() == N and audit.get(object_id=str(rows[3].pk)).after["members"] == {host_guid(0): "both"}
    assert policy_version(partitions[0].fabric_id) != version


def test_reimport_updates_merges_and_renames_in_file_order(partitions):
    fabric = partitions[0].fabric
    import_partitions_conf(fabric, conf(), None)
    # p1 becomes "acme2" and p2 takes p1's old name: each statement sees the ones before it
    text = (f"acme2=0x0001 : {host_guid(7)} ;\nacme=0x0002,sl=9 : {host_guid(6)}=full ;\n" + conf(200, auto=False))
    before = AuditEntry.objects.count()
    with CaptureQueriesContext(connection) as queries:
        result = import_partitions_conf(fabric, text, None, replace_members=False)
    assert len(queries) < N // 20, len(queries)
    assert len(result.updated) == 202 and not result.created
    a, g = Partition.objects.get(fabric=fabric, pkey=1), Partition.objects.get(fabric=fabric, pkey=2)
    assert (a.name, g.name, g.sl) == ("acme2", "acme", 9)
    assert dict(a.members.values_list("guid", "membership")) == {host_guid(0): "full", host_guid(1): "limited",
                                                                 host_guid(7): "limited"}  # merged
    assert AuditEntry.objects.count() == before + 202
    entry = AuditEntry.objects.filter(action="update", object_id=str(a.pk)).latest("id")
    assert entry.before["name"] == "acme" and entry.after["name"] == "acme2"
    assert set(entry.after["members"]) == {host_guid(0), host_guid(1), host_guid(7)}


def test_a_clash_late_in_the_file_saves_nothing(partitions):
    fabric = partitions[0].fabric
    text = conf() + f"globex=0x7000 : {host_guid(1)} ;\n"  # the name of partition 0x0002
    before = (Partition.objects.count(), PartitionMember.objects.count(), AuditEntry.objects.count())
    with pytest.raises(FormatError, match="partition name 'globex' is already used in this fabric") as info:
        import_partitions_conf(fabric, text, None)
    assert info.value.line == N + 1
    assert (Partition.objects.count(), PartitionMember.objects.count(), AuditEntry.objects.count()) == before


def test_more_partitions_than_the_limit_are_refused_before_anything_is_read(fabric):
    text = "".join(f"p{i}=0x{i + 1:04x} : ALL=full ;\n" for i in range(MAX_IMPORT_PARTITIONS + 1))
    with CaptureQueriesContext(connection) as queries, pytest.raises(FormatError) as info:
        import_partitions_conf(fabric, text, None)
    assert f"{MAX_IMPORT_PARTITIONS + 1:,} partitions; an import may hold at most {MAX_IMPORT_PARTITIONS:,}" \
        in info.value.message
    assert not queries.captured_queries and not Partition.objects.exists()


def test_the_preview_of_3000_partitions_in_a_bounded_number_of_queries(partitions):
    with CaptureQueriesContext(connection) as queries:
        diff = import_diff(partitions[0].fabric, conf(), replace_members=True)
    assert len(queries) < N // 20, len(queries)
    assert len(diff["rows"]) == N and diff["unchanged"] == 2 and not Partition.objects.filter(pkey=0x10).exists()
