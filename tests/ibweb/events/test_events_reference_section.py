"""The events page shows the reference-cabling section (a telemetry template) to operators of telemetry fabrics."""

import pytest
from django.contrib.auth.models import Permission, User

from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig

pytestmark = pytest.mark.django_db


def test_events_page_shows_the_reference_section_to_operators_and_posts_to_the_same_url(client, tmp_path):
    fabric = Fabric.objects.create(name="lab", slug="lab", mode=FabricMode.TELEMETRY, tick_s=1.0)
    CollectorConfig.objects.create(fabric=fabric, stale_after_s=600.0, source=CollectorSource.DIRECTORY,
                                   drop_dir=str(tmp_path))
    op = User.objects.create_user("op", password="pw")
    op.user_permissions.add(*Permission.objects.filter(codename__in=("view_all_tenants", "change_fabric")))
    client.force_login(op)
    page = client.get("/fabrics/lab/events/").content.decode()
    assert "measured against the reference cabling" in page and "none yet" in page
    assert 'action="/fabrics/lab/events/accept-cabling/"' in page
    r = client.post("/fabrics/lab/events/accept-cabling/")
    assert r.status_code == 302 and r["Location"] == "/fabrics/lab/events/"
    page = client.get("/fabrics/lab/events/").content.decode()
    assert "no discovery" in page  # the ValueError's message, as a message on the page


def test_events_page_has_no_reference_section_for_an_emulated_fabric_or_a_tenant_view(client):
    Fabric.objects.create(name="emu", slug="emu", spec={"topology": {"generator": "fat_tree", "hosts": 8}})
    op = User.objects.create_user("op", password="pw")
    op.user_permissions.add(*Permission.objects.filter(codename__in=("view_all_tenants", "change_fabric")))
    client.force_login(op)
    r = client.get("/fabrics/emu/events/")
    assert r.status_code == 200 and "reference cabling" not in r.content.decode()
