"""One theme for every page, a favicon, and an admin partition page without thousands of inline rows (issue 18)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import pytest

from ibweb.tenancy.admin import INLINE_MEMBERS_MAX
from ibweb.tenancy.models import Partition, PartitionMember
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants  # noqa: F401

pytestmark = pytest.mark.django_db
BIG = {"topology": {"generator": "fat_tree", "hosts": 64, "radix": 16, "name": "big"}}


def test_favicon_is_named_by_every_page_and_served_at_the_root(client, admin_client, fabric):
    for url in ("/", "/accounts/login/", "/tenancy/", f"/fabrics/{fabric.slug}/"):
        body = client.get(url).content.decode()
        assert 'rel="icon" href="/static/ibweb/favicon.svg"' in body, url
    assert 'href="/static/ibweb/favicon.svg"' in admin_client.get("/admin/").content.decode()
    answer = client.get("/favicon.ico")
    assert answer.status_code == 301 and answer.url == "/static/ibweb/favicon.svg"


def test_admin_uses_the_dark_theme_and_offers_no_light_toggle(admin_client):
    body = admin_client.get("/admin/").content.decode()
    assert "/static/ibweb/admin.css" in body and "admin/css/dark_mode.css" not in body
    assert "theme-toggle" not in body


def test_login_form_is_labelled_and_themed(client):
    body = client.get("/accounts/login/").content.decode()
    assert '<label for="id_username">' in body and 'class="field' in body and 'class="primary"' in body


def test_admin_partition_page_lists_a_big_partition_through_the_member_search(admin_client, fabric):
    fabric.spec = BIG
    fabric.save()
    big = Partition.objects.create(fabric=fabric, name="big", pkey=0x0044)
    PartitionMember.objects.bulk_create([PartitionMember(partition=big, guid=host_guid(i)) for i in range(40)])
    body = admin_client.get(f"/admin/tenancy/partition/{big.pk}/change/").content.decode()
    assert host_guid(5) not in body, "members of a big partition are not inline rows"
    assert "40 members" in body and f"/tenancy/fabrics/{fabric.slug}/?partition=0x0044#members" in body
    assert 'name="members-INITIAL_FORMS" value="0"' in body
    # new rows still work and keep the others
    data = {"fabric": fabric.pk, "tenant": "", "name": "big", "pkey": "0x0044", "ipoib": "on",
            "default_membership": "full", "members-TOTAL_FORMS": "1", "members-INITIAL_FORMS": "0",
            "members-MIN_NUM_FORMS": "0", "members-MAX_NUM_FORMS": "1000",
            "members-0-guid": host_guid(50), "members-0-membership": "limited"}
    assert admin_client.post(f"/admin/tenancy/partition/{big.pk}/change/", data).status_code == 302
    assert big.members.count() == 41 and big.members.get(guid=host_guid(50)).membership == "limited"


def test_admin_partition_page_keeps_inline_rows_for_a_small_partition(admin_client, partitions):
    acme, _ = partitions
    assert acme.members.count() <= INLINE_MEMBERS_MAX
    body = admin_client.get(f"/admin/tenancy/partition/{acme.pk}/change/").content.decode()
    assert host_guid(0) in body and "2 members (listed below)" in body
