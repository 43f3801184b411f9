"""Issue 37: a collector's link health settings (``health_counters``, ``opensm_log_path``) outside the admin: set from
the new-fabric form (and checked there), read back by the collectors API."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from ibweb.fabrics.models import Fabric
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.forms import CollectorForm

from .test_onboarding import base

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(client):
    client.force_login(User.objects.create_superuser("root", password="pw-root"))
    return client


def test_the_new_fabric_form_sets_health_counters_and_the_opensm_log(root):
    page = root.get("/fabrics/add/").content.decode()
    assert 'name="collector-health_counters"' in page and 'name="collector-opensm_log_path"' in page
    response = root.post("/fabrics/add/", base(health_counters="on", opensm_log_path=" /var/log/opensm.log "))
    assert response.status_code == 302
    config = Fabric.objects.get(slug="lab").collector
    assert config.health_counters is True and config.opensm_log_path == "/var/log/opensm.log"
    assert config.opensm_log_file() == Path("/var/log/opensm.log")


def test_left_out_they_are_off_and_a_relative_log_path_is_refused(root):
    assert CollectorForm(base_data := {"source": "commands", "interval_s": "10", "timeout_s": "10"}).is_valid()
    form = CollectorForm({**base_data, "opensm_log_path": "log/opensm.log"})
    assert not form.is_valid() and form.errors["opensm_log_path"] == ["an absolute path (the collector reads it)"]
    response = root.post("/fabrics/add/", base())
    assert response.status_code == 302
    config = Fabric.objects.get(slug="lab").collector
    assert config.health_counters is False and config.opensm_log_path == ""
    assert config.opensm_log_file() is None


def test_a_drop_directory_collector_reads_the_opensm_log_it_holds(root):
    response = root.post("/fabrics/add/", base(source="directory", drop_dir="/srv/ib/drop"))
    assert response.status_code == 302
    config = Fabric.objects.get(slug="lab").collector
    assert config.source == CollectorSource.DIRECTORY and config.opensm_log_file() == Path("/srv/ib/drop/opensm.log")


def test_the_collectors_api_shows_them(root):
    root.post("/fabrics/add/", base(health_counters="on", opensm_log_path="/var/log/opensm.log"))
    api = APIClient()
    api.force_authenticate(User.objects.get(username="root"))
    config = Fabric.objects.get(slug="lab").collector
    body = api.get(f"/api/telemetry/collectors/{config.pk}/").json()
    assert body["health_counters"] is True and body["opensm_log_path"] == "/var/log/opensm.log"
    config.health_counters = False
    config.save()
    listed = api.get("/api/telemetry/collectors/").json()["results"]
    assert [c["health_counters"] for c in listed] == [False]


def test_a_relative_drop_directory_gets_one_error_saying_so():
    form = CollectorForm({"source": "directory", "interval_s": "10", "timeout_s": "10", "drop_dir": "drop/here"})
    assert not form.is_valid()
    assert form.errors["drop_dir"] == ["an absolute path (the collector reads it on the ibweb server)"]
    form = CollectorForm({"source": "directory", "interval_s": "10", "timeout_s": "10"})
    assert not form.is_valid() and form.errors["drop_dir"] == ["needed when reading from a drop directory"]
