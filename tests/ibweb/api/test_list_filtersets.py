"""REST lists filtered by django-filter FilterSets: same parameters, same 400s, after the scoping, in the schema."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ibweb.events.choices import Severity
from ibweb.events.models import Event
from tests.support.tenancy_fixtures import fabric, operator_api, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
EVENTS = "/api/fabrics/fabrics/tiny/events/"


@pytest.fixture
def events(fabric, tenants):
    acme, globex = tenants
    now = {"first_seen": timezone.now(), "last_seen": timezone.now()}
    Event.objects.create(fabric=fabric, key="a", kind="errors", severity="warning", message="symbol errors", **now)
    Event.objects.create(fabric=fabric, key="b", kind="isolation", severity="critical", message="blocked",
                         tenant=acme, job="train", **now)
    Event.objects.create(fabric=fabric, key="c", kind="isolation", severity="critical", message="blocked",
                         tenant=globex, job="eval", **now)


@pytest.mark.parametrize(("params", "errors"), [
    ({"state": "bogus"}, {"state": ["'bogus' is not one of all, active, cleared, unacknowledged"]}),
    ({"severity": "warning,fatal"}, {"severity": [f"'fatal' is not one of {', '.join(Severity.values)}"]}),
    ({"kind": ",".join(f"k{i}" for i in range(21))}, {"kind": ["at most 20 values"]}),
    ({"kind": "x" * 33}, {"kind": ["kinds are at most 32 characters"]}),
    ({"since": "soon"}, {"since": ["'soon' is neither a date-time (2026-05-01T10:00Z) nor an age (30m, 2h, 7d)"]}),
    ({"until": "later", "state": "active"},
     {"until": ["'later' is neither a date-time (2026-05-01T10:00Z) nor an age (30m, 2h, 7d)"]}),
])
def test_a_bad_event_filter_is_a_400_naming_the_parameter(events, params, errors):
    r = operator_api().get(EVENTS, params)
    assert r.status_code == 400 and r.json() == errors


def test_event_filters_take_repeated_or_comma_separated_values(events):
    api = operator_api()
    assert api.get(EVENTS, {"severity": ["critical", "warning"]}).json()["count"] == 3
    assert api.get(EVENTS, {"severity": "critical,warning"}).json()["count"] == 3
    assert api.get(EVENTS, {"severity": " critical "}).json()["count"] == 2
    assert api.get(EVENTS, {"kind": ["isolation"], "tenant": "globex"}).json()["results"][0]["job"] == "eval"
    assert api.get(EVENTS, {"tenant": "none", "state": "active", "since": "1h"}).json()["count"] == 1


def test_event_filters_narrow_only_what_the_user_may_see(events, tenants):
    acme, _ = tenants
    client = APIClient()
    client.force_authenticate(user_in(None, "ann", acme))
    assert client.get(EVENTS, {"tenant": "globex"}).json()["count"] == 0
    assert client.get(EVENTS, {"q": "eval"}).json()["count"] == 0
    found = client.get(EVENTS, {"q": "train"}).json()  # a redacted view: the search runs on what ann reads
    assert [e["job"] for e in found["results"]] == ["train"] and found["count"] == 1


def test_members_with_a_partition_that_is_not_a_number_answer_as_before(partitions):
    r = operator_api().get("/api/tenancy/members/", {"partition": "abc"})
    assert r.status_code == 400 and r.json() == {"partition": ["expected a partition ID (a number), got 'abc'"]}
    a, _ = partitions
    rows = operator_api().get("/api/tenancy/members/", {"partition": str(a.pk)}).json()["results"]
    assert len(rows) == 2


def test_tenancy_filters_narrow_only_what_the_user_may_see(partitions, tenants):
    acme, _ = tenants
    client = APIClient()
    client.force_authenticate(user_in(None, "ann", acme))
    assert client.get("/api/tenancy/partitions/", {"tenant": "globex"}).json()["count"] == 0
    assert [p["name"] for p in client.get("/api/tenancy/partitions/", {"q": "AC"}).json()["results"]] == ["acme"]
    assert operator_api().get("/api/tenancy/partitions/", {"tenant": "globex"}).json()["count"] == 1
    assert operator_api().get("/api/tenancy/partitions/", {"fabric": " tiny"}).json()["count"] == 0, "not stripped"


@pytest.mark.parametrize(("path", "names"), [
    ("/api/fabrics/fabrics/{slug}/events/", {"severity", "kind", "tenant", "since", "until", "state", "q",
                                             "limit", "offset"}),
    ("/api/tenancy/tenants/", {"q"}),
    ("/api/tenancy/partitions/", {"fabric", "tenant", "q"}),
    ("/api/tenancy/qos-policies/", {"fabric"}),
    ("/api/tenancy/cc-policies/", {"fabric"}),
    ("/api/tenancy/audit-entries/", {"fabric", "action", "user"}),
    ("/api/tenancy/members/", {"fabric", "partition", "guid"}),
    ("/api/telemetry/sweeps/", {"fabric"}),
])
def test_the_schema_lists_each_lists_filter_parameters(client, path, names):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    listed = {p["name"] for p in schema["paths"][path]["get"].get("parameters", []) if p["in"] == "query"}
    assert names <= listed, names - listed
