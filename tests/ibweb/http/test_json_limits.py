"""Issue 26, item 2: one JSON parse with limits for every body and message; no 500 on input a client can send.

JSON nested 3,000 deep was a ``RecursionError`` (a 500) on every JSON write route, and a websocket message
nested 1,100 deep ended the socket without a close frame; analysis parameters of the wrong type were 500s.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from ibweb.events.models import Event
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.http.body_limits import max_json_values
from ibweb.http.json_input import MAX_DEPTH, JSONInputError, loads, shape
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, PushToken
from ibweb.twin.choices import JobSourceKind
from ibweb.twin.models import JobSource, JobToken
from tests.support.tenancy_fixtures import SPEC, fabric, partitions, tenants  # noqa: F401

DEEP = 3000
#: Every JSON write route of the URL conf: (method, path, who writes there). ``POST .../reference/`` reads no body.
ROUTES = [
    ("post", "/api/twin/fabrics/real/jobs/", "job-token"),
    ("post", "/api/telemetry/fabrics/real/samples/", "push-token"),
    ("post", "/api/fabrics/fabrics/tiny/analyses/", "root"),
    ("post", "/api/fabrics/fabrics/", "root"),
    ("patch", "/api/fabrics/fabrics/tiny/", "root"),
    ("put", "/api/fabrics/fabrics/tiny/", "root"),
    ("post", "/api/fabrics/preview/", "root"),
    ("post", "/api/fabrics/fabrics/tiny/events/{event}/comments/", "root"),
    ("post", "/api/fabrics/fabrics/tiny/events/{event}/acknowledge/", "root"),
    ("post", "/api/tenancy/tenants/", "root"),
    ("patch", "/api/tenancy/tenants/acme/", "root"),
    ("post", "/api/tenancy/service-classes/", "root"),
    ("post", "/api/tenancy/partitions/", "root"),
    ("post", "/api/tenancy/qos-policies/", "root"),
    ("post", "/api/tenancy/cc-policies/", "root"),
    ("post", "/api/tenancy/fabrics/tiny/pkeys/", "root"),
    ("post", "/api/tenancy/fabrics/tiny/pkeys/add/", "root"),
    ("post", "/api/tenancy/fabrics/tiny/pkeys/0x0001/guids/", "root"),
    ("put", "/api/tenancy/fabrics/tiny/pkeys/0x0001/guids/", "root"),
    ("post", "/api/tenancy/fabrics/tiny/pkeys/0x0001/guids/remove/", "root"),
    ("put", "/api/tenancy/fabrics/tiny/pkeys/0x0001/qos/", "root"),
    ("patch", "/api/tenancy/fabrics/tiny/pkeys/0x0001/qos/", "root"),
    ("post", "/api/tenancy/fabrics/tiny/opensm/partitions.conf", "root"),
    ("post", "/api/telemetry/trial-sweep/", "root"),
    ("post", "/api/twin/fabrics/real/plan/", "root"),
]
#: Field names of those routes, so that random bodies reach their validators too.
FIELDS = ["jobs", "replace", "ended", "samples", "iblinkinfo", "kind", "params", "engine", "patterns", "seed",
          "method", "pattern", "failed_cables", "failed_switches", "name", "slug", "spec", "text", "guids", "pkey",
          "tenant", "fabric", "membership", "sl", "mtu", "rate", "acknowledged", "comment", "source", "file",
          "topology", "generator", "hosts", "radix", "mode", "routing_engine", "routing_options", "tick_s",
          "command_prefix", "environment", "members", "guid", "qos", "settings"]


@pytest.fixture
def writers(db, partitions):  # noqa: F811
    """A client per writer of :data:`ROUTES`, and the id of an event to comment on."""
    cache.clear()
    real = Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY)
    config = CollectorConfig.objects.create(fabric=real, source=CollectorSource.PUSH)
    _, push = PushToken.issue(config, "collector-1")
    _, job = JobToken.issue(JobSource.objects.create(fabric=real, kind=JobSourceKind.PUSH), "slurm-prolog")
    now = timezone.now()
    event = Event.objects.create(fabric=Fabric.objects.get(slug="tiny"), key="k", kind="errors", message="m",
                                 first_seen=now, last_seen=now)
    clients = {"root": APIClient(), "push-token": APIClient(), "job-token": APIClient()}
    clients["root"].force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    clients["push-token"].credentials(HTTP_AUTHORIZATION=f"Bearer {push}")
    clients["job-token"].credentials(HTTP_AUTHORIZATION=f"Bearer {job}")
    yield clients, event.pk
    cache.clear()


def _send(writers, route, body: str):
    clients, event = writers
    method, path, who = route
    return getattr(clients[who], method)(path.format(event=event), body, content_type="application/json")


def deep(levels: int = DEEP) -> str:
    """A body nested ``levels`` deep inside an object, arrays and objects in turn."""
    inner = "".join("[" if i % 2 else '{"a":' for i in range(levels - 1)) + "1"
    closing = "".join("]" if i % 2 else "}" for i in reversed(range(levels - 1)))
    return '{"jobs": ' + inner + closing + "}"


# ----------------------------------------------------------------- the scan
def test_deep_text_is_refused_at_the_byte_that_goes_too_deep():
    text = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(JSONInputError, match=f"^JSON nested deeper than 64 levels at byte {MAX_DEPTH}$"):
        loads(text)
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) == json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(JSONInputError, match="at byte 200$"):
        loads(deep())


def test_brackets_inside_strings_and_escapes_do_not_count():
    inside = json.dumps(["[" * 500, "\\", '"[[[', "\\\\\"{{{", "}" * 10])
    assert shape(inside.encode()) == (1, 1, 6)
    assert loads(inside)[0] == "[" * 500
    assert loads(inside.encode()) == loads(inside)


@pytest.mark.parametrize("text", [b"NaN", b"[Infinity]", b"[1e999]", b"\xff[]", b"[1,]", b"9" * 5000, b'"\\"'])
def test_what_json_cannot_say_is_refused_too(text):
    with pytest.raises(JSONInputError):
        loads(text)


def test_the_value_bound_holds_a_full_counter_push():
    from django.conf import settings as django_settings

    from ibweb.telemetry.api.serializers import MAX_PUSH_SAMPLES

    # a sample: lid, port, t, extended and 22 counters, the sample and its counters object
    assert max_json_values(django_settings.IBWEB_MAX_PUSH_BYTES) >= 28 * MAX_PUSH_SAMPLES
    assert max_json_values(django_settings.IBWEB_MAX_BODY_BYTES) == django_settings.IBWEB_MAX_JSON_VALUES


# ----------------------------------------------------------------- every JSON write route
@pytest.mark.parametrize("route", ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_a_body_nested_3000_deep_is_a_400_on_every_write_route(writers, route):
    r = _send(writers, route, deep())
    assert r.status_code == 400, r.content
    assert r.json() == {"detail": "JSON nested deeper than 64 levels at byte 200"}


@override_settings(IBWEB_MAX_JSON_VALUES=1000)
def test_a_body_of_too_many_values_is_a_400(writers):
    r = _send(writers, ("post", "/api/tenancy/tenants/", "root"), json.dumps({"name": "n", "x": [0] * 2000}))
    assert r.status_code == 400 and r.json() == {"detail": "JSON body of 2,003 values; at most 1,000 here"}


def test_json_text_in_a_form_field_is_read_with_the_same_limits(writers):
    clients, _ = writers
    r = clients["root"].post("/api/fabrics/fabrics/tiny/analyses/", {"kind": "ebb", "params": "[" * DEEP})
    assert r.status_code == 400 and r.json()["params"] == ["JSON nested deeper than 64 levels at byte 64"]
    r = clients["job-token"].post("/api/twin/fabrics/real/jobs/", {"jobs": "[" * DEEP})
    assert r.status_code == 400 and r.json()["jobs"] == ["JSON nested deeper than 64 levels at byte 64"]


# ----------------------------------------------------------------- analysis parameters
@pytest.mark.parametrize(("kind", "params", "field"), [
    ("ebb", {"engine": ["minhop"]}, "engine"),
    ("ebb", {"engine": {"a": 1}}, "engine"),
    ("ebb", {"method": ["count"]}, "method"),
    ("ebb", {"pattern": {"bisection": 1}}, "pattern"),
    ("ebb", {"patterns": [1] * 10_000}, "patterns"),
    ("whatif_engine", {"engine": ["updn"]}, "engine"),
    ("whatif_links", {"failed_cables": [[0]]}, "failed_cables"),
    ("whatif_roce", {"same_seed": {"x": 1}}, "same_seed"),
])
def test_analysis_parameters_of_the_wrong_type_are_a_400_naming_the_field(writers, kind, params, field):
    clients, _ = writers
    r = clients["root"].post("/api/fabrics/fabrics/tiny/analyses/", {"kind": kind, "params": params}, format="json")
    assert r.status_code == 400, r.content
    errors = r.json()["params"]
    assert list(errors) == [field] and len(errors[field][0]) < 200  # the value is quoted short, never whole


# ----------------------------------------------------------------- random bodies
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.sampled_from(["ebb", "minhop", "0x0001", "acme", "tiny", "full", ""]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), children, max_size=5),
    max_leaves=24)


#: The trial sweep runs the commands a body names: its random bodies stay out.
FUZZED = [r for r in ROUTES if "trial-sweep" not in r[1]]


@pytest.mark.parametrize("route", FUZZED, ids=[f"{m} {p}" for m, p, _ in FUZZED])
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=st.dictionaries(st.sampled_from(FIELDS), _json, max_size=6) | _json)
def test_random_json_on_the_write_routes_is_never_a_5xx(writers, route, body):
    r = _send(writers, route, json.dumps(body))
    assert r.status_code < 500, (route, body, r.content[:300])


# ----------------------------------------------------------------- the websocket
@pytest.mark.django_db(transaction=True)
@override_settings(IBWEB_PUBLIC_READ=True)
async def test_a_deep_websocket_message_closes_the_socket_with_4400_and_one_short_log_line(caplog):
    from ibweb.asgi import application
    from ibweb.live.engine.runner import FabricRunner
    from ibweb.live.feed.consumers import CLOSE_BAD_MESSAGE

    row = await Fabric.objects.acreate(name="Tiny", slug="tiny", spec=SPEC)
    engine = FabricRunner(row)
    await engine.start()
    await engine.tick()
    caplog.set_level(logging.INFO, logger="ibweb.live.feed.consumers")
    payload = "[" * 1100 + "]" * 1100
    comm = WebsocketCommunicator(application, "/ws/fabrics/tiny/live/")  # anonymous, public read
    try:
        connected, _ = await comm.connect()
        assert connected
        assert json.loads(await comm.receive_from(timeout=5))["type"] == "snapshot"
        await comm.send_to(text_data=json.dumps({"type": "ping"}))
        await comm.send_to(text_data=payload)
        await comm.send_to(text_data=payload)  # already on its way: no second line
        while (out := await comm.receive_output(timeout=5))["type"] != "websocket.close":
            pass
        assert out["code"] == CLOSE_BAD_MESSAGE
        await asyncio.sleep(0.1)
    finally:
        await comm.disconnect()
        await engine.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "ibweb.live.feed.consumers"]
    assert lines == [f"feed socket of fabric {row.pk} closed with 4400: JSON nested deeper than 64 levels at byte 64"]
