"""Credentials the API does not take answer 401, never an anonymous 200."""

from __future__ import annotations

import base64

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from ibweb.accounts.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("header", [
    "Basic " + base64.b64encode(b"alice:secret").decode(),  # curl -u alice:secret
    "Bearer abc",  # a push token's scheme on a read endpoint
    "Digest username=alice",
])
def test_an_unsupported_scheme_is_a_401_naming_what_works(header):
    User.objects.create_user("alice", password="secret")
    for path in ("/api/fabrics/fabrics/", "/metrics"):
        r = APIClient().get(path, HTTP_AUTHORIZATION=header)
        assert r.status_code == 401, path
        assert r["WWW-Authenticate"].startswith("Token")
        assert "Authorization: Token <key>" in r.json()["detail"]


def test_a_token_and_no_header_still_work():
    user = User.objects.create_user("alice", password="secret")
    _, key = ApiToken.issue(user, "script")
    assert APIClient().get("/api/fabrics/fabrics/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    assert APIClient().get("/api/fabrics/fabrics/").status_code == 200  # anonymous public read (tests' default)
    assert APIClient().get("/api/fabrics/fabrics/", HTTP_AUTHORIZATION="Token wrong").status_code == 401
