"""API tokens of users are stored hashed and shown once (issue 26: DRF's tokens were kept and shown in clear)."""

from __future__ import annotations

import hashlib
import importlib
import io
import re
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from rest_framework.test import APIClient

from ibweb.accounts.models import ApiToken

pytestmark = pytest.mark.django_db


def _get(key: str, path: str = "/api/fabrics/fabrics/") -> int:
    return APIClient().get(path, HTTP_AUTHORIZATION=f"Token {key}").status_code


def test_drf_authtoken_is_gone():
    assert not apps.is_installed("rest_framework.authtoken")


def test_only_a_digest_and_a_prefix_are_stored(settings):
    settings.IBWEB_PUBLIC_READ = False
    user = User.objects.create_user("scraper")
    token, key = ApiToken.issue(user, "prometheus")
    row = ApiToken.objects.filter(pk=token.pk).values().get()
    assert key not in repr(row) and row["digest"] == hashlib.sha256(key.encode()).hexdigest()
    assert row["prefix"] == key[:8] and len(key) >= 40
    assert _get(key, "/metrics") == 200
    assert _get(key[:8] + "x" * (len(key) - 8), "/metrics") == 401  # same prefix, another key
    token.refresh_from_db()
    assert token.last_used is not None
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert _get(key) == 401


def test_the_admin_shows_a_new_key_once(client):
    root = User.objects.create_superuser("root", password="a-long-passphrase-42")
    user = User.objects.create_user("scraper")
    client.force_login(root)
    r = client.post("/admin/accounts/apitoken/add/", {"user": user.pk, "name": "prometheus"}, follow=True)
    assert r.status_code == 200
    key = re.search(r"API token &#x27;prometheus&#x27; of scraper: (\S+) \(shown once", r.content.decode()).group(1)
    token = ApiToken.objects.get(user=user)
    assert token.digest == hashlib.sha256(key.encode()).hexdigest() and _get(key) == 200
    for page in ("/admin/accounts/apitoken/", f"/admin/accounts/apitoken/{token.pk}/change/"):
        text = client.get(page).content.decode()
        assert token.prefix in text and key not in text and token.digest not in text


def test_the_command_prints_a_key_once():
    User.objects.create_user("scraper")
    out = io.StringIO()
    call_command("create_api_token", "scraper", "--name", "prometheus", stdout=out)
    key = out.getvalue().strip()
    assert _get(key) == 200 and ApiToken.objects.get().name == "prometheus"
    with pytest.raises(CommandError, match="username"):
        call_command("create_api_token", "nobody")


def test_keys_of_drf_tokens_are_hashed_by_the_migration_and_keep_working():
    user = User.objects.create_user("old-script")
    legacy = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"
    with connection.cursor() as cursor:
        cursor.execute('CREATE TABLE authtoken_token ("key" varchar(40) PRIMARY KEY, created timestamp, user_id int)')
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, %s)", [legacy, "2026-01-02 03:04:05", user.pk])
    migration = importlib.import_module("ibweb.accounts.migrations.0002_hash_drf_tokens")
    migration.hash_legacy_tokens(apps, SimpleNamespace(connection=connection, quote_name=connection.ops.quote_name))
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM authtoken_token")
        assert cursor.fetchone()[0] == 0
    token = ApiToken.objects.get(user=user)
    assert token.prefix == legacy[:8] and token.digest == hashlib.sha256(legacy.encode()).hexdigest()
    assert token.created.year == 2026 and token.created.month == 1
    assert _get(legacy) == 200
