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


def test_the_schema_generates_with_no_warning_or_error(tmp_path):
    """Issue 35: ``GET /api/schema/`` logged about 20 "unable to guess serializer" errors and a warning per view
    and authentication class; drf-spectacular's ``--fail-on-warn`` fails on any of them."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    out = tmp_path / "schema.yaml"
    result = subprocess.run([sys.executable, "manage.py", "spectacular", "--fail-on-warn", "--validate", "--file",
                             str(out)], cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stderr == "", result.stderr[-3000:]
    text = out.read_text()
    for path in ("/api/clusters/:", "/api/fabrics/fabrics/{slug}/routing/:", "/api/fabrics/preview/:",
                 "/api/fabrics/fabrics/{slug}/health/:", "/api/fabrics/fabrics/{slug}/tsdb/ports/:"):
        assert f"\n  {path}" in text, path
