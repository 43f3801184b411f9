"""The OpenAPI schema at /api/schema/ covers every app's API."""

import pytest


@pytest.mark.django_db
def test_schema_lists_the_apis(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for prefix in ("/api/fabrics/fabrics/", "/api/tenancy/", "/api/telemetry/"):
        assert any(p.startswith(prefix) for p in paths), prefix
