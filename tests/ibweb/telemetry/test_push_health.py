"""Issue 37 on a telemetry-fed fabric: link health captures pushed with the collector's token, graded by its runner
into the report the health API shows; a capture a reader refuses is a 400 naming it, and nothing is stored."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.live.engine.runner import FabricRunner
from ibweb.runtime import health as report_store
from ibweb.runtime import health_readings
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, PushToken
from tests.support.engine_fixtures import settled_tick
from tests.support.push_client import push_client

DATA = Path(__file__).parents[2] / "data"
URL = "/api/telemetry/fabrics/pushed/health/"
LINKINFO = (DATA / "telemetry" / "iblinkinfo.txt").read_text()
MLXLINK = (DATA / "health" / "mlxlink_ib_ndr.txt").read_text()  # BER normal, module temperature in alarm
UNKNOWN_GUID = "0x0002c90300ffff01"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client():
    for c in push_client():
        sample = {"lid": 14, "port": 1, "t": time.time(), "extended": True, "counters": {"PortXmitData": 1000}}
        assert c.post("/api/telemetry/fabrics/pushed/samples/", {"samples": [sample], "iblinkinfo": LINKINFO},
                      format="json").status_code == 201
        yield c


def ufm_csv(down: bool = True) -> str:
    """The UFM fixture's ports on this fabric: leaf01 1 (normal) and 2 (BER error, module at 82 C), spine01 3 (up
    20 min: BER not graded yet) and 4 (down; left out unless ``down``), and one row of a GUID the fabric has not."""
    text = (DATA / "health" / "ufm_low_freq_debug.csv").read_text()
    text = text.replace("0xb83fd20300a1b2c0", "0x98039b0300000001").replace("0xb83fd20300a1b2d0", "0x98039b0300000005")
    text = text.replace(",5,spine01,", ",3,spine01,").replace(",6,spine01,", ",4,spine01,")
    lines = [ln for ln in text.splitlines() if down or ",4,spine01," not in ln]
    return "\n".join([*lines, lines[1].replace("0x98039b0300000001", UNKNOWN_GUID)]) + "\n"


def push(client, *captures):
    return client.post(URL, {"captures": list(captures)}, format="json")


def graded(config: CollectorConfig, settings) -> dict:
    """The fabric's health report after its runner's first tick (graded at once)."""
    settings.IBWEB_HEALTH_INTERVAL_S = 0

    async def run():
        runner = FabricRunner(config.fabric)
        await runner.start()
        await settled_tick(runner)
        await runner.stop()

    asyncio.run(run())
    return report_store.read(config.fabric_id)


def _port(report: dict, node: str, port: int) -> dict | None:
    return next((p for p in report["worst"] if p["node"] == node and p["port"] == port), None)


def test_pushed_mlxlink_and_ufm_captures_are_graded_as_the_fixtures_say(client, settings):
    r = push(client, {"name": "gpu0005-mlx5_0.txt", "text": MLXLINK, "node": "gpu0005"},
             {"name": "ufm.csv", "text": ufm_csv()})
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["captures"] == [{"name": "gpu0005-mlx5_0.txt", "kind": "mlxlink", "ports": 1, "matched": 1},
                                {"name": "ufm.csv", "kind": "UFM telemetry CSV", "ports": 5, "matched": 4}]
    assert body["ports"] == body["ports_kept"] == 5 and body["unknown_ports"] == 1
    unknown = [w for w in body["warnings"] if w["capture"] == "ufm.csv" and w["line"] is None]
    assert unknown == [{"capture": "ufm.csv", "line": None, "text": f"{UNKNOWN_GUID}/1",
                        "reason": "1 port(s) of no node or port of the fabric's discovery"}]
    assert any(w["capture"] == "gpu0005-mlx5_0.txt" and "shell prompt" in w["reason"] for w in body["warnings"])

    report = graded(client.config, settings)
    assert report["summary"]["ports"] == 5 and report["summary"]["links_down"] == 1
    assert report["summary"]["ber"] == {"normal": 2, "warning": 0, "error": 1, "unknown": 2}
    assert report["summary"]["module_alarms"] == 2
    hca = _port(report, "gpu0005", 1)
    assert hca["grade"] == "error" and hca["ber"]["grade"] == "normal" and hca["module"]["status"] == "alarm"
    assert hca["ber"]["raw"] == pytest.approx(5e-8)  # the worst lane and hca["peer"]["node"] == "leaf03"
    bad = _port(report, "leaf01", 2)
    assert bad["grade"] == "error" and bad["ber"]["grade"] == "error" and bad["module"]["temperature_c"] == 82.0
    assert _port(report, "spine01", 4)["grade"] == "error"  # down now
    assert _port(report, "leaf01", 1) is None  # normal: not among the worst

    # a second push of the same port: its newest values win, the others stay
    hot = MLXLINK.replace("Raw Physical BER                   : 4E-8", "Raw Physical BER                   : 4E-5")
    assert "4E-5" in hot
    assert push(client, {"name": "again.txt", "text": hot, "node": "gpu0005", "port": 1}).json()["ports_kept"] == 5
    stored = health_readings.read(client.config.fabric_id)
    row = list(stored.keys()).index("0x" + format(int(_port(report, "gpu0005", 1)["guid"], 16), "016x") + "/1")
    assert stored["raw_ber"][row] == pytest.approx(4e-5) and stored["temp"][row] == hca["module"]["temperature_c"]


def test_the_health_api_shows_pushed_ports_and_hides_hosts_from_views_that_may_not_name_them(client, settings):
    r = push(client, {"name": "gpu0005-mlx5_0.txt", "text": MLXLINK, "node": "gpu0005"},
             {"name": "ufm.csv", "text": ufm_csv(down=False)})
    assert r.status_code == 200 and r.json()["ports"] == 4
    report = graded(client.config, settings)
    hca = _port(report, "gpu0005", 1)
    User.objects.create_superuser("root", password="pw")
    operator = APIClient()
    operator.login(username="root", password="pw")
    api = operator.get("/api/fabrics/fabrics/pushed/health/").json()
    assert api["summary"] == report["summary"] and api["summary"]["ports"] == 4
    assert _port(api, "gpu0005", 1)["grade"] == "error" and _port(api, "leaf01", 2)["grade"] == "error"
    text = APIClient().get("/api/fabrics/fabrics/pushed/health/").content.decode()  # public read: no tenant's hosts
    assert "gpu0005" not in text and hca["guid"] not in text and "leaf01" in text
    assert f'"host-{hca["node_index"]}"' in text


def test_a_port_down_at_its_first_reading_is_served_by_the_health_api(client, settings):
    assert push(client, {"name": "ufm.csv", "text": ufm_csv()}).status_code == 200
    graded(client.config, settings)
    User.objects.create_superuser("root", password="pw")
    operator = APIClient()
    operator.login(username="root", password="pw")
    assert operator.get("/api/fabrics/fabrics/pushed/health/").status_code == 200


@pytest.mark.parametrize(("capture", "message"), [
    ({"name": "w.txt", "text": MLXLINK.replace(": \x1b[32m4x", ": \x1b[32m5x")},
     "captures[1]: w.txt:{line}: Width '5x' is not a link width (1, 2, 4, 8 or 12 lanes)"),
    ({"name": "u.csv", "text": ufm_csv().replace(",2E-8,", ",2E-8x,", 1)},
     "captures[1]: u.csv:2: Total_Raw_BER: '2E-8x' is not a number"),
    ({"name": "n.txt", "text": "hello\n"}, "captures[1]: n.txt: not a link health output this reader knows"),
    ({"name": "e.txt"}, "captures[1].text: This field is required."),
    ({"text": MLXLINK, "port": 0}, "captures[1].port: Ensure this value is greater than or equal to 1."),
    ("x", "captures[1]: a capture is an object"),
])
def test_a_bad_capture_is_a_400_naming_it_and_nothing_is_stored(client, capture, message):
    if "{line}" in message:
        # the reader names the line of the section holding the port's operational values
        line = next(i for i, ln in enumerate(capture["text"].splitlines(), 1) if ln == "Operational Info")
        message = message.format(line=line)
    r = push(client, {"name": "good.txt", "text": MLXLINK, "node": "gpu0005"}, capture)
    assert r.status_code == 400
    [got] = r.json()["captures"]
    assert got.startswith(message), got
    assert health_readings.read(client.config.fabric_id) is None


def test_a_health_push_needs_the_fabrics_token_and_a_discovery(client):
    other = Fabric.objects.create(name="fresh", slug="fresh", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=other, source=CollectorSource.PUSH)
    body = {"captures": [{"text": MLXLINK, "node": "gpu0005"}]}
    assert client.post("/api/telemetry/fabrics/fresh/health/", body, format="json").status_code == 403
    assert APIClient().post(URL, body, format="json").status_code == 401
    _, raw = PushToken.issue(config, "collector-2")
    fresh = APIClient()
    fresh.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    r = fresh.post("/api/telemetry/fabrics/fresh/health/", body, format="json")
    assert r.status_code == 409 and "no discovery yet" in r.json()["captures"][0]
    assert health_readings.read(other.pk) is None


def test_a_health_push_has_the_counter_push_cap_checked_before_parsing(client, settings):
    from ibweb.http.body_limits import body_limit

    assert body_limit(URL) == body_limit("/api/telemetry/fabrics/pushed/samples/") == settings.IBWEB_MAX_PUSH_BYTES
    settings.IBWEB_MAX_PUSH_BYTES = 1 << 16
    big = {"captures": [{"text": MLXLINK * 40, "node": "gpu0005"}]}
    r = client.post(URL, big, format="json")
    assert r.status_code == 413 and "a link health push" in r.json()["detail"]
    assert health_readings.read(client.config.fabric_id) is None
