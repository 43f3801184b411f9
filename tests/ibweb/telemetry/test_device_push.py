"""Issue 38: hosts push ``ibstat``, ``ibv_devinfo -v`` and ``ibswinfo`` output (and a push collector its ``sminfo``
and ``smpquery pkeys``) with the collector's token into the fabric's device readings; a capture a reader refuses is
a 400 naming the capture, its file and line, and nothing of the push is kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from rest_framework.test import APIClient

from fabric_engine.devices import summary
from ibweb.runtime import device_readings
from ibweb.telemetry.models import PushToken
from tests.support.push_client import push_client

DATA = Path(__file__).parents[2] / "data" / "devices"
URL = "/api/telemetry/fabrics/pushed/devices/"
IBSTAT = (DATA / "ibstat_two_cas.txt").read_text()
DEVINFO = (DATA / "ibv_devinfo_v.txt").read_text()
IBSWINFO = (DATA / "ibswinfo_full.txt").read_text()
#: ``ibstat`` run without a prompt in the capture: the push's ``host`` names the ports.
BARE = "CA 'mlx5_0'\n\tCA type: MT4129\n\tFirmware version: 28.39.2048\n\tNode GUID: 0x946dae03006c9990\n" \
       "\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 400\n"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client():
    yield from push_client()


def push(client, *captures):
    return client.post(URL, {"captures": list(captures)}, format="json")


def test_host_outputs_and_an_unmanaged_switch_are_kept_and_a_newer_push_wins(client):
    r = push(client, {"name": "gpu0042-ibstat.txt", "text": IBSTAT}, {"name": "gpu0107.txt", "text": DEVINFO},
             {"name": "leaf07.txt", "text": IBSWINFO}, {"name": "bare.txt", "text": BARE, "host": "gpu0300"})
    assert r.status_code == 200, r.json()
    body = r.json()
    assert [(c["name"], c["kind"]) for c in body["captures"]] == [
        ("gpu0042-ibstat.txt", "ibstat"), ("gpu0107.txt", "ibv_devinfo"), ("leaf07.txt", "ibswinfo"),
        ("bare.txt", "ibstat")]
    assert any(w["source"] == "gpu0042-ibstat.txt" and w["reason"] == "shell prompt" for w in body["warnings"])
    stored = device_readings.read(client.config.fabric_id)
    nodes = {p.node for p in stored.hca_ports}
    assert {"gpu0042/mlx5_0", "gpu0300/mlx5_0"} <= nodes and all("/" in n for n in nodes)
    assert stored.adapter_types["gpu0300/mlx5_0"] == "MT4129"
    assert [v.part_number for v in stored.vitals][:1] == ["MQM8790-HS2F"]
    s = summary(stored)
    assert s["fan_failures"] >= 1 and s["psu_failures"] == 1 and "MT4129" in s["firmware"]
    assert PushToken.objects.get(config=client.config).last_used is not None

    down = BARE.replace("State: Active", "State: Down").replace("LinkUp", "Polling")
    assert push(client, {"name": "bare.txt", "text": down, "host": "gpu0300"}).status_code == 200
    stored = device_readings.read(client.config.fabric_id)
    mine = [p for p in stored.hca_ports if p.node == "gpu0300/mlx5_0"]
    assert [(p.state, p.phys_state) for p in mine] == [("Down", "Polling")]  # replaced, not added
    assert len(stored.vitals) == 2 and "gpu0042/mlx5_0" in {p.node for p in stored.hca_ports}


def test_pushed_sminfo_and_pkeys_merge_with_other_hosts_pushes(client):
    """Each host pushes its own ports' tables: host B's push keeps host A's tables, a newer table of the same port
    wins, and a plain ``sminfo`` (the master alone) keeps the standby SM pushed before."""
    row = " 0x0000" * 6
    tables = (f"# smpquery pkeys 1 1\n   0: 0xffff 0x8001{row}\n8 pkeys capacity for this port\n"
              f"# smpquery pkeys 2 1\n   0: 0xffff 0x0000{row}\n8 pkeys capacity for this port\n")
    master = "sminfo: sm lid 2 sm guid 0x98039b0300000001, activity count 3 priority 15 state 3 SMINFO_MASTER\n"
    standby = "sminfo: sm lid 7 sm guid 0x98039b0300000002, activity count 3 priority 1 state 2 SMINFO_STANDBY\n"
    r = push(client, {"name": "sminfo.txt", "text": master + standby}, {"name": "pkeys.txt", "text": tables})
    assert [c["kind"] for c in r.json()["captures"]] == ["sminfo", "smpquery pkeys"]
    assert r.json()["records"] == 4
    other = f"# smpquery pkeys 3 1\n   0: 0xffff 0x8002{row}\n8 pkeys capacity for this port\n"
    newer = tables.split("# smpquery pkeys 2 1\n")[0].replace("0x8001", "0x8003")
    assert push(client, {"name": "hostb-pkeys.txt", "text": other}, {"name": "hosta-pkeys.txt", "text": newer},
                {"name": "sminfo.txt", "text": master.replace("count 3", "count 9")}).status_code == 200
    stored = device_readings.read(client.config.fabric_id)
    assert sorted((t.lid, t.keys) for t in stored.pkeys) == [
        (1, (0xFFFF, 0x8003)), (2, (0xFFFF,)), (3, (0xFFFF, 0x8002))]
    assert sorted((s.lid, s.activity, s.master) for s in stored.sms) == [(2, 9, True), (7, 3, False)]


def test_a_push_over_a_cap_is_a_400_naming_the_cap_and_nothing_is_stored(client, monkeypatch):
    monkeypatch.setattr(device_readings, "MAX_HCA_PORTS", 2)
    def host(k: int) -> dict:
        return {"name": f"gpu{k}.txt", "text": BARE.replace("9990", f"999{k}"), "host": f"gpu{k}"}

    ok = [host(1), host(2)]
    r = push(client, *ok, host(3))
    assert r.status_code == 400
    assert r.json()["captures"] == ["captures[2]: gpu3.txt: the push's hca_ports: 3 records exceed MAX_HCA_PORTS (2)"]
    assert device_readings.read(client.config.fabric_id) is None
    assert push(client, *ok).status_code == 200
    assert push(client, host(3)).status_code == 200  # the newest kept
    assert [p.node for p in device_readings.read(client.config.fabric_id).hca_ports] == [
        "gpu3/mlx5_0", "gpu1/mlx5_0"]


@pytest.mark.parametrize(("capture", "message"), [
    ({"name": "gpu1.txt", "text": BARE.replace("State: Active", "State: Up")},
     "captures[1]: gpu1.txt:6: State 'Up': ibstat prints one of Down, Initializing, Armed, Active"),
    ({"name": "gpu2.txt", "text": DEVINFO.replace("PORT_ACTIVE (4)", "PORT_ACTIVE (9)")},
     "captures[1]: gpu2.txt:{line}: state 'PORT_ACTIVE (9)': not one ibv_devinfo prints"),
    ({"name": "sw.txt", "text": IBSWINFO.replace("| 8470", "| fast")}, "captures[1]: sw.txt:{line}: "),
    ({"name": "pk.txt", "text": "# smpquery pkeys 1 1\n   0: 0xffff\n8 pkeys capacity for this port\n"},
     "captures[1]: pk.txt:2: not a line of 'smpquery pkeys'"),
    ({"name": "n.txt", "text": "hello\n"}, "captures[1]: n.txt: not a device health output this reader knows"),
    ({"name": "h.txt", "text": BARE, "host": "a b"}, "captures[1].host: a host name"),
    ({"name": "e.txt"}, "captures[1].text: This field is required."),
])
def test_a_bad_capture_is_a_400_naming_its_file_and_line_and_nothing_is_stored(client, capture, message):
    if "{line}" in message:
        marker = "PORT_ACTIVE (9)" if "gpu2" in capture["name"] else "| fast"
        line = next(i for i, ln in enumerate(capture["text"].splitlines(), 1) if marker in ln)
        message = message.format(line=line)
    r = push(client, {"name": "ok.txt", "text": BARE, "host": "gpu9"}, capture)
    assert r.status_code == 400
    assert r.json()["captures"][0].startswith(message), r.json()
    assert device_readings.read(client.config.fabric_id) is None


def test_only_the_fabrics_own_token_may_push(client):
    from ibweb.fabrics.choices import FabricMode
    from ibweb.fabrics.models import Fabric
    from ibweb.telemetry.choices import CollectorSource
    from ibweb.telemetry.models import CollectorConfig

    assert APIClient().post(URL, {"captures": [{"text": BARE}]}, format="json").status_code == 401
    other = Fabric.objects.create(name="other", slug="other", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=other, source=CollectorSource.PUSH)
    _, raw = PushToken.issue(config, "other's")
    theirs = APIClient()
    theirs.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    r = theirs.post(URL, {"captures": [{"text": BARE}]}, format="json")
    assert r.status_code == 403 and "another fabric" in r.json()["detail"]
    assert device_readings.read(client.config.fabric_id) is None
