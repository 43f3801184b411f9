"""Requests that were 500s answer with a clear 400 or 405 (issue 14)."""

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from ibweb.fabrics.demo import ensure_demo
from tests.support.engine_fixtures import published
from tests.support.tenancy_fixtures import operator_api

pytestmark = pytest.mark.django_db


def test_path_with_a_non_ascii_digit_is_a_400():
    published(ensure_demo()[0])
    r = operator_api().get("/api/fabrics/fabrics/demo/path/?src=%C2%B2&dst=1")
    assert r.status_code == 400 and "src" in r.json()
    r = operator_api().get("/api/fabrics/fabrics/demo/path/", {"src": "9" * 40, "dst": "1"})
    assert r.status_code == 400 and "src" in r.json()


def test_the_path_from_a_host_to_itself_is_the_host_alone():
    """It once looped in the server for ever, its hop list growing, for anyone who may view (anonymous included)."""
    published(ensure_demo()[0])
    r = operator_api().get("/api/fabrics/fabrics/demo/path/", {"src": "gpu0001", "dst": "gpu0001"})
    assert r.status_code == 200, r.content
    assert [h["name"] for h in r.json()["hops"]] == ["gpu0001"] and r.json()["links"] == []


def test_members_filtered_by_a_partition_that_is_not_a_number_is_a_400():
    r = operator_api().get("/api/tenancy/members/?partition=abc")
    assert r.status_code == 400 and "partition" in r.json()
    assert operator_api().get("/api/tenancy/members/", {"partition": "9" * 30}).status_code == 400
    assert operator_api().get("/api/tenancy/members/", {"partition": "12"}).status_code == 200


@pytest.mark.parametrize("url", ["/api/fabrics/fabrics/demo/jobs/", "/api/fabrics/fabrics/demo/path/",
                                 "/api/fabrics/fabrics/demo/sharp/", "/api/fabrics/fabrics/demo/links/1/history/",
                                 "/metrics", "/api/tenancy/audit-entries/", "/api/tenancy/members/",
                                 "/api/telemetry/collectors/"])
def test_writing_to_a_read_only_view_is_a_405(url):
    ensure_demo()
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("root-405", password="pw-root-405"))
    for method in (client.post, client.put, client.patch, client.delete):
        assert method(url, {}, format="json").status_code == 405, (method, url)
