"""Issue 42: JSON inside form fields, admin forms and model fields goes through the one checked parse.

Before: ``spec=`` or ``routing_options=`` nested 3,000 deep in a multipart or urlencoded fabric write was a 500
(``RecursionError`` in DRF's ``JSONField``), a spec carrying a 65-deep key was stored, the admin's JSON fields
were 500s on 3,000-deep text, and a fabric spec given as a JSON list was a 500 in the admin.
"""

from __future__ import annotations

import json

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import models
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework import serializers
from rest_framework.test import APIClient

from ibweb.fabrics.models import Cluster, Fabric
from ibweb.http.json_input import JSONField, JSONFormField, JSONModelField
from ibweb.telemetry.models import CollectorConfig
from ibweb.twin.choices import JobSourceKind
from ibweb.twin.models import JobSource
from tests.support.tenancy_fixtures import SPEC, fabric, partitions, tenants  # noqa: F401

from .test_json_limits import DEEP, FIELDS, FUZZED, _json, writers  # noqa: F401

DEEP_TEXT = "[" * DEEP + "]" * DEEP
TOO_DEEP = "JSON nested deeper than 64 levels at byte 64"


def _nested(levels: int) -> dict:
    """An object ``levels`` deep."""
    value: object = 1
    for _ in range(levels):
        value = {"k": value}
    return value


# ----------------------------------------------------------------- declared once, used everywhere
def test_every_model_json_field_declares_its_type_and_every_serializer_uses_the_checked_field():
    fields = [f for m in apps.get_models() for f in m._meta.get_fields() if isinstance(f, models.JSONField)]
    assert fields and all(type(f) is JSONModelField for f in fields), [f for f in fields
                                                                       if type(f) is not JSONModelField]
    assert {(f.model.__name__, f.name): f.kind for f in fields}[("Fabric", "spec")] is dict
    from ibweb.urls import urlpatterns  # noqa: F401  (imports every API's serializers)

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    plain = []
    for cls in subclasses(serializers.Serializer):
        if not cls.__module__.startswith("ibweb.") or getattr(getattr(cls, "Meta", None), "abstract", False):
            continue
        try:
            built = cls().fields
        except Exception:  # needs a context or arguments to build: its declared fields only
            built = cls._declared_fields
        plain += [f"{cls.__name__}.{n}" for n, f in built.items()
                  if isinstance(f, serializers.JSONField) and not isinstance(f, JSONField)]
    assert plain == []


def test_the_form_field_refuses_deep_text_and_the_wrong_type_with_a_message():
    field = JSONFormField(kind=dict)
    with pytest.raises(Exception, match=TOO_DEEP):
        field.clean(DEEP_TEXT)
    with pytest.raises(Exception, match="expected an object, not an array"):
        field.clean("[]")
    assert field.clean('{"a": [1]}') == {"a": [1]}
    assert field.bound_data(DEEP_TEXT, None) == DEEP_TEXT  # shown back as typed, no RecursionError


# ----------------------------------------------------------------- the API, as multipart and urlencoded
@pytest.fixture
def root_api(fabric):  # noqa: F811
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    return api


@pytest.mark.parametrize("fmt", ["multipart", "urlencoded"])
@pytest.mark.parametrize("name", ["spec", "routing_options"])
@pytest.mark.parametrize("method", ["patch", "post"])
def test_deep_json_in_a_form_field_is_a_400_naming_it(root_api, fmt, name, method):
    path = "/api/fabrics/fabrics/tiny/" if method == "patch" else "/api/fabrics/fabrics/"
    data = {"name": "New", "slug": "new", name: DEEP_TEXT}
    if fmt == "urlencoded":
        from urllib.parse import urlencode
        r = getattr(root_api, method)(path, urlencode(data), content_type="application/x-www-form-urlencoded")
    else:
        r = getattr(root_api, method)(path, data, format="multipart")
    assert r.status_code == 400, r.content[:300]
    assert r.json() == {name: [TOO_DEEP]}
    assert not Fabric.objects.filter(slug="new").exists()


def test_a_spec_with_a_65_deep_key_is_refused_and_64_is_the_bound(root_api):
    spec = {**SPEC, "extra": _nested(64)}  # the spec itself is one more level: 65
    r = root_api.patch("/api/fabrics/fabrics/tiny/", {"spec": json.dumps(spec)}, format="multipart")
    text = json.dumps(spec)
    at = text.rindex("{")  # the innermost object: the 65th level
    assert r.status_code == 400 and r.json() == {"spec": [f"JSON nested deeper than 64 levels at byte {at}"]}
    assert "extra" not in Fabric.objects.get(slug="tiny").spec
    spec = {**SPEC, "extra": _nested(63)}
    r = root_api.patch("/api/fabrics/fabrics/tiny/", {"spec": json.dumps(spec)}, format="multipart")
    assert r.status_code == 200, r.content


@pytest.mark.parametrize(("name", "value", "kind"), [("spec", "[]", "an object"),
                                                     ("routing_options", '"x"', "an object")])
def test_a_field_of_the_wrong_type_is_a_400_naming_it(root_api, name, value, kind):
    r = root_api.patch("/api/fabrics/fabrics/tiny/", {name: value}, format="multipart")
    assert r.status_code == 400 and r.json()[name][0].startswith(f"expected {kind}, not "), r.content


def test_model_serializers_check_the_declared_type(db):
    from ibweb.telemetry.api.serializers import CollectorConfigSerializer
    from ibweb.twin.api.serializers import JobSourceSerializer

    real = Fabric.objects.create(name="Real", slug="real", mode="telemetry")
    source = JobSource.objects.create(fabric=real, kind=JobSourceKind.PUSH)
    s = JobSourceSerializer(source, data={"accounts": ["a"], "host_patterns": {"a": 1}}, partial=True)
    assert not s.is_valid()
    assert s.errors == {"accounts": ["expected an object, not an array"],
                        "host_patterns": ["expected an array, not an object"]}
    s = CollectorConfigSerializer(data={"thresholds": DEEP_TEXT}, partial=True)
    s.fields["thresholds"].binary = True  # as a form field's text
    assert not s.is_valid() and s.errors["thresholds"] == [TOO_DEEP]


_FORM_VALUE = _json.map(json.dumps) | st.sampled_from([DEEP_TEXT, "[" * 65, "{" * 70, "[]", "{}", '"x"', "1e999",
                                                       "NaN", "", "{\"a\":"])


@pytest.mark.parametrize("fmt", ["multipart", "urlencoded"])
@pytest.mark.parametrize("route", FUZZED, ids=[f"{m} {p}" for m, p, _ in FUZZED])
@settings(max_examples=15, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=st.dictionaries(st.sampled_from(FIELDS), _FORM_VALUE, max_size=5))
def test_random_form_fields_on_the_write_routes_are_never_a_5xx(writers, fmt, route, body):  # noqa: F811
    clients, event = writers
    method, path, who = route
    if fmt == "urlencoded":
        from urllib.parse import urlencode
        r = getattr(clients[who], method)(path.format(event=event), urlencode(body),
                                          content_type="application/x-www-form-urlencoded")
    else:
        r = getattr(clients[who], method)(path.format(event=event), body, format="multipart")
    assert r.status_code < 500, (route, body, r.content[:300])


# ----------------------------------------------------------------- the admin
@pytest.fixture
def admin_client(client, db):
    client.force_login(User.objects.create_superuser("root", password="pw-root"))
    return client


def _form_data(client, url: str) -> dict:
    """The admin form at ``url`` as its page shows it, ready to post back (no inline rows)."""
    page = client.get(url)
    assert page.status_code == 200
    data = {}
    for bf in page.context["adminform"].form:
        value = bf.value()
        if isinstance(value, bool):
            if value:
                data[bf.html_name] = "on"
        else:
            data[bf.html_name] = "" if value is None else value
    for inline in page.context["inline_admin_formsets"]:
        prefix = inline.formset.prefix
        data |= {f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0}
    return data


@pytest.fixture
def admin_objects(db):
    """(admin change URL, its JSON fields) of a fabric, a cluster, a collector and a job source."""
    tiny = Fabric.objects.create(name="Tiny", slug="tiny", spec=SPEC)
    real = Fabric.objects.create(name="Real", slug="real", mode="telemetry")
    cluster = Cluster.objects.create(name="C", slug="c")
    config = CollectorConfig.objects.create(fabric=real)
    source = JobSource.objects.create(fabric=real, kind=JobSourceKind.SLURM)
    return [(f"/admin/fabrics/fabric/{tiny.pk}/change/", ("spec", "routing_options")),
            (f"/admin/fabrics/cluster/{cluster.pk}/change/", ("host_patterns",)),
            (f"/admin/telemetry/collectorconfig/{config.pk}/change/", ("thresholds",)),
            (f"/admin/twin/jobsource/{source.pk}/change/", ("accounts", "patterns", "host_patterns", "command"))]


def test_admin_json_fields_refuse_deep_json_with_a_form_error(admin_client, admin_objects):
    for url, names in admin_objects:
        data = _form_data(admin_client, url)
        assert admin_client.post(url, data).status_code == 302, url  # the form as shown saves
        for name in names:
            r = admin_client.post(url, {**data, name: DEEP_TEXT})
            assert r.status_code == 200, (url, name, r.status_code)
            errors = r.context["adminform"].form.errors
            assert errors[name] == [f"Enter valid JSON: {TOO_DEEP}"], (url, name, errors)


def test_admin_fabric_spec_as_a_list_is_a_form_error(admin_client, admin_objects):
    url = admin_objects[0][0]
    r = admin_client.post(url, {**_form_data(admin_client, url), "spec": "[1, 2]"})
    assert r.status_code == 200
    assert r.context["adminform"].form.errors["spec"] == ["expected an object, not an array"]
    assert Fabric.objects.get(slug="tiny").spec == SPEC


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(which=st.integers(0, 3), values=st.lists(_FORM_VALUE, min_size=1, max_size=4))
def test_random_json_in_the_admin_forms_is_never_a_5xx(admin_client, admin_objects, which, values):
    url, names = admin_objects[which]
    data = _form_data(admin_client, url)
    r = admin_client.post(url, {**data, **dict(zip(names, values, strict=False))})
    assert r.status_code in (200, 302), (url, values, r.status_code)


@pytest.mark.parametrize("topology", ["null", "[]", '"fat-tree"', "3"])
def test_a_spec_whose_topology_is_not_an_object_is_a_form_error(admin_client, admin_objects, topology):
    """Found by the fuzz above: ``{"topology": null}`` reached the engine's builder (a 500)."""
    url, _ = admin_objects[0]
    data = _form_data(admin_client, url)
    r = admin_client.post(url, {**data, "spec": '{"topology": ' + topology + '}'})
    assert r.status_code == 200
    assert "topology: expected an object" in str(r.context["adminform"].form.errors["spec"])
