"""The policy version is the fabric row's column, bumped in the change's transaction; reads only read (issue 24,
item 3)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction

from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.models import Fabric
from ibweb.runtime import record
from ibweb.runtime.published import published_fabric
from ibweb.tenancy import services
from ibweb.tenancy.engine_policy import policy_version
from ibweb.tenancy.inventory import fabric_inventory
from ibweb.tenancy.models import Partition, PartitionMember, QosPolicy
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants  # noqa: F401

pytestmark = pytest.mark.django_db


def _column(fabric) -> int:
    return Fabric.objects.get(pk=fabric.pk).policy_version


def test_each_save_and_delete_of_a_partition_member_or_qos_bumps_the_column_by_one(fabric):
    steps = [
        lambda: Partition.objects.create(fabric=fabric, name="acme", pkey=0x0001),
        lambda: PartitionMember.objects.create(partition=Partition.objects.get(pkey=1), guid=host_guid(0)),
        lambda: PartitionMember.objects.filter(partition__pkey=1).get().save(),
        lambda: PartitionMember.objects.filter(partition__pkey=1).get().delete(),
        lambda: QosPolicy.objects.create(fabric=fabric),
        lambda: QosPolicy.objects.get(fabric=fabric).save(),
        lambda: QosPolicy.objects.get(fabric=fabric).delete(),
        lambda: Partition.objects.get(pkey=1).delete(),
    ]
    version = _column(fabric)
    for step in steps:
        step()
        assert _column(fabric) == policy_version(fabric.pk) == version + 1
        version += 1
    cache.clear()  # the version is not the cache's
    assert policy_version(fabric.pk) == version


def test_a_service_change_bumps_once(partitions):
    a, _ = partitions
    before = policy_version(a.fabric_id)
    services.add_members(a, [(host_guid(2), "full"), (host_guid(3), "full")])
    assert policy_version(a.fabric_id) == before + 1


def test_a_rolled_back_change_rolls_back_its_bump(fabric):
    before = policy_version(fabric.pk)
    with pytest.raises(RuntimeError), transaction.atomic():
        Partition.objects.create(fabric=fabric, name="acme", pkey=0x0001)
        assert policy_version(fabric.pk) == before + 1
        raise RuntimeError
    assert policy_version(fabric.pk) == before and not Partition.objects.filter(fabric=fabric).exists()


def test_a_stale_fabric_instance_saved_after_a_bump_keeps_the_bumped_version(fabric):
    stale = Fabric.objects.get(pk=fabric.pk)
    Partition.objects.create(fabric=fabric, name="acme", pkey=0x0001)
    bumped = policy_version(fabric.pk)
    assert bumped > stale.policy_version
    stale.description = "edited in the admin"
    stale.save()
    fresh = Fabric.objects.get(pk=fabric.pk)
    assert fresh.policy_version == bumped and fresh.description == "edited in the admin"
    assert policy_version(10**9) == 0  # no such fabric


def test_published_fabric_reads_the_current_record_and_never_writes_one(fabric):
    row = record.row_identity(fabric)
    assert published_fabric(fabric) is None and record.head(fabric.pk, row) is None
    built = fabric_inventory(fabric)  # a write's GUID check builds and publishes it
    assert record.head(fabric.pk, row)["info"]["source"] == "spec"
    assert published_fabric(fabric).num_nodes == built.num_nodes == 14

    fabric.spec = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8, "name": "tiny"}}
    fabric.save()
    assert published_fabric(fabric) is None  # built from the spec it had
    assert fabric_inventory(fabric).num_hosts == 16 and published_fabric(fabric).num_hosts == 16

    engine = fat_tree(hosts=4, radix=4)
    record.publish(fabric.pk, row, engine, None, [], {"source": "emulated"})
    assert published_fabric(fabric).num_hosts == 4  # the engine's own is current whatever the spec says


def test_a_telemetry_fabric_without_a_discovery_has_no_published_fabric():
    fabric = Fabric.objects.create(name="Real", slug="real", mode="telemetry")
    assert published_fabric(fabric) is None
    with pytest.raises(ValidationError):
        fabric_inventory(fabric)
    assert record.head_of(fabric) is None
