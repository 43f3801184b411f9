"""The API's authentication classes are declared once (issue 35): a bogus credential is a 401 or 403 on every route.

``GET /api/twin/fabrics/<slug>/jobs/`` listed its own classes, DRF's ``TokenAuthentication`` among them, whose
model had moved: any ``Authorization: Token`` header there was a 500. Push and job tokens stay scoped to their
own routes (``ibweb.auth.bearer.BearerRoute``).
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator
from rest_framework.settings import api_settings
from rest_framework.test import APIClient
from rest_framework.views import APIView

from ibweb.accounts.models import ApiToken
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.models import CollectorConfig, PushToken
from ibweb.twin.models import JobSource, JobToken

pytestmark = pytest.mark.django_db

BOGUS = ("Token bogus-key-0123456789", "Bearer bogus-key-0123456789", "Token", "Bearer a b")


def _api_views(patterns):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _api_views(p.url_patterns)
        elif isinstance(p, URLPattern):
            cls = getattr(p.callback, "cls", None) or getattr(p.callback, "view_class", None)
            if isinstance(cls, type) and issubclass(cls, APIView):
                yield str(p.pattern), cls


def test_no_view_lists_its_own_authentication_classes():
    views = list(_api_views(get_resolver().url_patterns))
    assert len(views) > 20
    own = sorted({f"{route}: {cls.__name__}" for route, cls in views
                  if list(cls.authentication_classes) != list(api_settings.DEFAULT_AUTHENTICATION_CLASSES)})
    assert not own, own


def _schema_requests() -> list[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    out = []
    for path, operations in schema["paths"].items():
        url = re.sub(r"\{(\w+)\}", lambda m: "1" if m.group(1) in ("id", "pk", "link", "port") else "lab", path)
        out += [(method, url) for method in operations if method in ("get", "post", "put", "patch", "delete")]
    return out


def test_a_bogus_token_is_refused_on_every_route_of_the_schema():
    lab = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry")
    JobSource.objects.create(fabric=lab)
    CollectorConfig.objects.create(fabric=lab)
    calls = _schema_requests()
    assert ("get", "/api/twin/fabrics/lab/jobs/") in calls and len(calls) > 30
    failures = []
    for method, url in calls:
        for header in BOGUS:
            r = getattr(APIClient(), method)(url, HTTP_AUTHORIZATION=header)
            if r.status_code not in (401, 403):
                failures.append(f"{method.upper()} {url} with {header.split()[0]}: {r.status_code}")
    assert not failures, "\n".join(failures)
    _, key = ApiToken.issue(User.objects.create_user("script"), "jobs")  # a real token there: read as its user
    assert APIClient().get("/api/twin/fabrics/lab/jobs/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200


def test_push_and_job_tokens_work_on_their_own_routes_only():
    lab = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry")
    _, job_key = JobToken.issue(JobSource.objects.create(fabric=lab), "scheduler")
    _, push_key = PushToken.issue(CollectorConfig.objects.create(fabric=lab, source="push"), "collector")
    jobs, samples = "/api/twin/fabrics/lab/jobs/", "/api/telemetry/fabrics/lab/samples/"

    def post(url: str, key: str) -> int:
        return APIClient().post(url, {}, format="json", HTTP_AUTHORIZATION=f"Bearer {key}").status_code

    assert post(jobs, job_key) == 201 and post(samples, push_key) == 400  # authenticated (an empty push: bad body)
    assert post(jobs, push_key) == 401 and post(samples, job_key) == 401  # the other kind is unknown there
    assert APIClient().get("/api/fabrics/fabrics/", HTTP_AUTHORIZATION=f"Bearer {job_key}").status_code == 401
    r = APIClient().post(samples, {}, format="json")
    assert r.status_code == 401 and r["WWW-Authenticate"] == "Bearer"  # no credentials: the route's scheme named
