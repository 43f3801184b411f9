"""A fabric's congestion model (issue 41): chosen in the form and the API, passed to the engine, refused where the
credit model cannot run (too large a fabric, a telemetry-fed one) with the field named."""

import pytest

from fabric_engine import credit_tick
from ibweb.fabrics.models import Fabric

pytestmark = pytest.mark.django_db

#: The size guard's limit in these tests: the real one (32,768 hosts) would need a fabric past it.
CREDIT_MAX_HOSTS = 192


@pytest.fixture(autouse=True)
def _small_limit(monkeypatch):
    monkeypatch.setattr(credit_tick, "CREDIT_MAX_HOSTS", CREDIT_MAX_HOSTS)

SMALL = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8}}
LARGE = {"topology": {"generator": "fat_tree", "hosts": 256, "radix": 32}}


def test_api_round_trips_the_choice_and_the_engine_gets_it(operator):
    response = operator.post("/api/fabrics/fabrics/", {"name": "C", "slug": "c", "spec": SMALL,
                                                       "congestion_model": "credit"}, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["congestion_model"] == "credit"
    assert operator.get("/api/fabrics/fabrics/c/").json()["congestion_model"] == "credit"
    fabric = Fabric.objects.get(slug="c")
    assert fabric.scenario()["congestion"] == "credit"
    changed = operator.patch("/api/fabrics/fabrics/c/", {"congestion_model": "maxmin"},
                             content_type="application/json")
    assert changed.status_code == 200 and changed.json()["congestion_model"] == "maxmin"
    default = operator.post("/api/fabrics/fabrics/", {"name": "D", "slug": "d", "spec": SMALL},
                            content_type="application/json")
    assert default.json()["congestion_model"] == "maxmin"
    assert Fabric.objects.get(slug="d").scenario()["congestion"] == "maxmin"


def test_api_refuses_the_credit_model_on_a_large_fabric_naming_the_limit(operator):
    response = operator.post("/api/fabrics/fabrics/", {"name": "L", "slug": "l", "spec": LARGE,
                                                       "congestion_model": "credit"}, content_type="application/json")
    assert response.status_code == 400
    message = response.json()["congestion_model"][0]
    assert f"at most {CREDIT_MAX_HOSTS:,} hosts" in message and "256" in message
    assert not Fabric.objects.filter(slug="l").exists()
    bogus = operator.post("/api/fabrics/fabrics/", {"name": "B", "slug": "b", "spec": SMALL,
                                                    "congestion_model": "fair"}, content_type="application/json")
    assert bogus.status_code == 400 and "congestion_model" in bogus.json()
    ok = operator.post("/api/fabrics/fabrics/", {"name": "L", "slug": "l", "spec": LARGE},
                       content_type="application/json")
    assert ok.status_code == 201  # max-min runs at any size
    patched = operator.patch("/api/fabrics/fabrics/l/", {"congestion_model": "credit"}, content_type="application/json")
    assert patched.status_code == 400 and "congestion_model" in patched.json()


def test_form_saves_the_choice_and_shows_the_size_error_at_its_field(operator):
    base = {"name": "Gen", "slug": "gen", "routing_engine": "ftree", "tick_s": 1, "source": "generator",
            "generator": "fat_tree", "fat_tree__radix": "8", "fat_tree__levels": "2"}
    page = operator.get("/fabrics/add/")
    assert 'name="congestion_model"' in page.content.decode()
    response = operator.post("/fabrics/add/", {**base, "fat_tree__hosts": "16", "congestion_model": "credit"})
    assert response.status_code == 302, response.context["form"].errors
    assert Fabric.objects.get(slug="gen").congestion_model == "credit"
    big = {**base, "slug": "big", "fat_tree__hosts": "256", "fat_tree__radix": "32", "congestion_model": "credit"}
    response = operator.post("/fabrics/add/", big)
    assert response.status_code == 200
    assert f"at most {CREDIT_MAX_HOSTS:,} hosts" in response.context["form"].errors["congestion_model"][0]


def test_a_telemetry_fed_fabric_may_choose_the_model_of_its_twins_expected_values(db):
    fabric = Fabric(name="T", slug="t", mode="telemetry", congestion_model="credit")
    fabric.clean()  # its rates are measured; the model is the twin's (no size check: the twin's jobs are sparse)
