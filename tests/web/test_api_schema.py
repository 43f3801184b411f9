"""The OpenAPI schema at /api/schema/ covers every app's API."""

import pytest


@pytest.mark.django_db
def test_schema_lists_the_apis(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for prefix in ("/api/fabrics/fabrics/", "/api/tenancy/", "/api/telemetry/"):
        assert any(p.startswith(prefix) for p in paths), prefix


@pytest.mark.django_db
def test_without_public_read_the_schema_needs_a_sign_in_as_the_api_does(client, settings):
    """Issue 26: in production the schema was served to anonymous visitors."""
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    from ibweb.accounts.models import ApiToken

    settings.IBWEB_PUBLIC_READ = False
    assert client.get("/api/schema/").status_code == 403
    assert client.get("/api/fabrics/fabrics/").status_code == 403
    user = User.objects.create_user("viewer")
    _, key = ApiToken.issue(user, "script")
    assert APIClient().get("/api/schema/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    client.force_login(user)
    assert client.get("/api/schema/").status_code == 200
