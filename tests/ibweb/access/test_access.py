"""The one access decision: levels from explicit grants, fail-closed (issue 14)."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import override_settings

from ibweb.access import Level, view_of
from tests.support.tenancy_fixtures import tenants, user_in  # noqa: F401


@pytest.mark.django_db
def test_levels_come_from_explicit_grants(tenants):  # noqa: F811
    acme, globex = tenants
    member = user_in(None, "member", acme)
    globex.users.add(member)
    assert view_of(member).level == Level.TENANTS
    assert view_of(member).tenant_ids == {acme.pk, globex.pk}
    assert view_of(member).key == f"t-{min(acme.pk, globex.pk)}-{max(acme.pk, globex.pk)}"
    assert view_of(user_in("operator", "op")).level == Level.ALL
    assert view_of(user_in("policy admin", "pa")).level == Level.ALL
    nobody = user_in("viewer", "nobody")
    assert view_of(nobody).level == Level.FABRIC, "no tenant and no grant: aggregates only, never everything"
    assert not view_of(nobody).sees_tenant(acme.pk)


@pytest.mark.django_db
def test_anonymous_and_deactivated_users_get_at_most_the_aggregates(tenants):  # noqa: F811
    acme, _ = tenants
    gone = user_in(None, "gone", acme)
    gone.is_active = False
    with override_settings(IBWEB_PUBLIC_READ=True):
        assert view_of(AnonymousUser()).level == Level.FABRIC
        assert view_of(gone).level == Level.FABRIC
    with override_settings(IBWEB_PUBLIC_READ=False):
        assert view_of(AnonymousUser()).level == Level.NONE
        assert view_of(None).level == Level.NONE
        assert not view_of(gone).may_view
