"""Collector secrets are write-only in the API and the admin (issue 14)."""

import hashlib
import re

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from ibweb.fabrics.models import Fabric
from ibweb.telemetry.models import CollectorConfig, PushToken

pytestmark = pytest.mark.django_db

PREFIX = ["sshpass", "-p", "hunter2-prefix", "ssh", "mgmt01"]
ENV = {"IB_TOKEN": "hunter2-env"}


@pytest.fixture
def config():
    fabric = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry")
    return CollectorConfig.objects.create(fabric=fabric, command_prefix=PREFIX, environment=ENV)


@pytest.fixture
def root(client):
    client.force_login(User.objects.create_superuser("root", password="pw-root"))
    return client


def test_the_api_names_the_variables_but_never_shows_a_value(config):
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    body = api.get(f"/api/telemetry/collectors/{config.pk}/").json()
    assert "hunter2" not in str(body) and "command_prefix" not in body and "environment" not in body
    assert body["environment_keys"] == ["IB_TOKEN"] and body["command_prefix_length"] == 5


def test_the_admin_form_shows_them_empty_and_keeps_them_when_left_empty(root, config):
    url = f"/admin/telemetry/collectorconfig/{config.pk}/change/"
    page = root.get(url).content.decode()
    assert "hunter2" not in page and "IB_TOKEN" in page  # the names of the variables set, not their values
    form = {"fabric": config.fabric_id, "source": config.source, "enabled": "on", "command_prefix": "",
            "environment": "", "drop_dir": "", "lfts_path": "", "timeout_s": 10, "interval_s": 10,
            "stale_after_s": 60, "shard_size": 64, "tick_code": 0, "thresholds": "{}",
            "tokens-TOTAL_FORMS": 0, "tokens-INITIAL_FORMS": 0}
    assert root.post(url, form).status_code == 302
    config.refresh_from_db()
    assert config.command_prefix == PREFIX and config.environment == ENV
    assert root.post(url, {**form, "environment": '{"IB_TOKEN": "new"}', "command_prefix": "[]"}).status_code == 302
    config.refresh_from_db()
    assert config.environment == {"IB_TOKEN": "new"} and config.command_prefix == []


def test_a_token_added_in_the_collector_admin_shows_its_key_once(root, config):
    url = f"/admin/telemetry/collectorconfig/{config.pk}/change/"
    form = {"fabric": config.fabric_id, "source": config.source, "enabled": "on", "command_prefix": "",
            "environment": "", "drop_dir": "", "lfts_path": "", "timeout_s": 10, "interval_s": 10,
            "stale_after_s": 60, "shard_size": 64, "tick_code": 0, "thresholds": "{}",
            "tokens-TOTAL_FORMS": 1, "tokens-INITIAL_FORMS": 0, "tokens-0-name": "rack-7"}
    page = root.post(url, form, follow=True).content.decode()
    token = config.tokens.get()
    shown = re.search(r"Push token &#x27;rack-7&#x27;: (\S+) \(shown once", page)
    assert shown and token.prefix and shown.group(1).startswith(token.prefix)
    assert PushToken.objects.filter(digest=hashlib.sha256(shown.group(1).encode()).hexdigest()).exists()
    assert shown.group(1) not in root.get(url).content.decode()  # once
