"""The access layer the models inherit: each model declares its path to the tenant, ``restrict`` cuts to the view."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from ibweb.access import EVERYTHING, FABRIC_ONLY, NOTHING, Level, RestrictedQuerySet, View, view_of
from ibweb.events.models import Event
from ibweb.fabrics.models import Fabric
from ibweb.tenancy.models import AuditEntry, Partition, PartitionMember, QosPolicy, ServiceClass, Tenant
from tests.support.tenancy_fixtures import fabric, partitions, tenants, user_in  # noqa: F401


def _names(queryset, field: str = "pk") -> set:
    return set(queryset.values_list(field, flat=True))


@pytest.fixture
def world(fabric, tenants, partitions):  # noqa: F811
    acme, globex = tenants
    gold, bronze = ServiceClass.objects.create(name="gold", sl=1), ServiceClass.objects.create(name="bronze", sl=2)
    unused = ServiceClass.objects.create(name="unused", sl=3)
    acme.service_class = gold
    acme.save()
    Partition.objects.filter(tenant=globex).update(service_class=bronze)
    qos = QosPolicy.objects.create(fabric=fabric)
    kw = {"fabric": fabric, "first_seen": "2026-01-01T00:00Z", "last_seen": "2026-01-01T00:00Z", "message": "m"}
    events = {"wide": Event.objects.create(key="w", **kw),
              "acme": Event.objects.create(key="a", tenant=acme, job="acme-1", **kw),
              "globex": Event.objects.create(key="g", tenant=globex, job="globex-1", **kw),
              "job-no-tenant": Event.objects.create(key="j", job="orphan", **kw)}
    return {"acme": acme, "globex": globex, "classes": (gold, bronze, unused), "qos": qos, "events": events}


@pytest.mark.django_db
def test_each_model_is_cut_by_its_own_path_to_the_tenant(world, fabric):  # noqa: F811
    acme, globex = world["acme"], world["globex"]
    gold, bronze, unused = world["classes"]
    mine = View(Level.TENANTS, frozenset({acme.pk}))
    assert _names(Tenant.objects.restrict(mine)) == {acme.pk}
    assert _names(Partition.objects.restrict(mine), "tenant_id") == {acme.pk}
    assert _names(PartitionMember.objects.restrict(mine), "partition__tenant_id") == {acme.pk}
    assert list(ServiceClass.objects.restrict(mine)) == [gold], "used by the tenant, not by its neighbours"
    both = View(Level.TENANTS, frozenset({acme.pk, globex.pk}))
    assert ServiceClass.objects.restrict(both).count() == 2, "two paths to the tenant: each class once"
    assert unused not in ServiceClass.objects.restrict(both)
    assert _names(QosPolicy.objects.restrict(mine)) == {world["qos"].pk}, "configuration: tenants and up"
    assert _names(Fabric.objects.restrict(mine)) == {fabric.pk}
    ev = world["events"]
    assert _names(Event.objects.restrict(mine)) == {ev["wide"].pk, ev["acme"].pk}
    assert _names(Event.objects.restrict(FABRIC_ONLY)) == {ev["wide"].pk}, "a job's event is never fabric-wide"


@pytest.mark.django_db
@pytest.mark.parametrize("model", [Tenant, Partition, PartitionMember, ServiceClass, QosPolicy, Event])
def test_below_tenants_no_tenant_row_and_all_sees_every_row(world, model):
    wide = {world["events"]["wide"].pk} if model is Event else set()
    assert _names(model.objects.restrict(NOTHING)) == set()
    assert _names(model.objects.restrict(FABRIC_ONLY)) == wide
    assert _names(model.objects.restrict(EVERYTHING)) == _names(model.objects.all())
    assert _names(Fabric.objects.restrict(NOTHING)) == set()


@pytest.mark.django_db
def test_restrict_takes_a_user_as_its_view(world):
    acme = world["acme"]
    member = user_in(None, "member", acme)
    assert _names(Partition.objects.restrict(member)) == _names(Partition.objects.restrict(view_of(member)))
    assert _names(Partition.objects.restrict(None)) <= set(), "nobody signed in sees no tenant's partition"


@pytest.mark.django_db
def test_a_model_that_declares_no_path_is_refused():
    with pytest.raises(ImproperlyConfigured, match="AuditEntry declares no access_scope"):
        RestrictedQuerySet.restrict(AuditEntry.objects.all(), EVERYTHING)
