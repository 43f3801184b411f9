"""The fabric validation report on the web (issue 38): built from the record, the link-health grades and the device
readings, kept and computed again when new readings arrive, each finding with its evidence and a map link, the
isolation advice joined with the jobs and the cable what-if, JSON and CSV, problems only, a switch's device panel;
hosts hidden from a viewer below ALL as on the Health page, and the P_Keys of partitions the
viewer does not see."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import User

from fabric_engine.devices.vitals import DeviceReadings, DeviceVitals, Fan, Psu, Temperature
from fabric_engine.validation.pkeys import PKeyTable
from fabric_engine.validation.sminfo import SmInfo
from ibweb.fabrics.analyses import AnalysisKind, AnalysisStatus
from ibweb.fabrics.models import Analysis, Fabric
from ibweb.live.validation import store, tasks
from ibweb.runtime import device_readings
from tests.ibweb.live.api.graded import clear, publish_and_grade
from tests.support.cluster_spec import PLANE

pytestmark = pytest.mark.django_db

#: dgx0003's cable climbs to a raw BER of 3e-4 (graded error at both ends): the one port advised.
FAULTS = [{"kind": "ber_rising", "link": "dgx0003 1", "from": 6e-5, "to": 3e-4, "over_s": 2, "start_s": 0}]
URL = "/api/fabrics/fabrics/pod/validation/"


def _vitals(f, leaf: int, fan_rpm: int) -> DeviceVitals:
    return DeviceVitals(int(f.guid[leaf]), str(f.node_name[leaf]), "ibswinfo-leaf.txt:1", "MQM9700-NS2F", "MT0001",
                        "MT_0000000838", "31.2012.1068", None, 86400,
                        (Fan("1", 8000, True), Fan("2", fan_rpm, True)), (Psu("PSU1", True, True, 380.0),),
                        (Temperature("ASIC", 61.0, 70.0, 105.0, 120.0),), ())


def _readings(f, fan_rpm: int = 0) -> DeviceReadings:
    """The leaf of dgx0003 with a stopped fan (``fan_rpm`` 0); dgx0003's port holds P_Key 0x0001 its switch port
    lacks; one master SM."""
    host = f.node("dgx0003")
    d = int(f.out_link(host, 1))
    leaf, leaf_port = int(f.dl_dst[d]), int(f.dl_dst_port[d])
    ca_lid = int(f.port_lid[f.port_offset[host]])
    assert ca_lid > 0 and int(f.lid[leaf]) > 0, "the plane's nodes have LIDs"
    tables = [PKeyTable(ca_lid, None, 1, (0xFFFF, 0x8001), 128), PKeyTable(int(f.lid[leaf]), None, leaf_port,
                                                                           (0xFFFF,), 32)]
    return DeviceReadings(vitals=[_vitals(f, leaf, fan_rpm)], pkeys=tables,
                          sms=[SmInfo(int(f.lid[leaf]), int(f.guid[leaf]), 100, 14, 3)])


@pytest.fixture
def pod():
    row = Fabric.objects.create(name="Pod", slug="pod", spec={"topology": PLANE}, tick_s=1.0)
    f = publish_and_grade(row, PLANE, FAULTS, 4)
    store.forget(row.pk)
    device_readings.write(row.pk, _readings(f))
    yield row, f
    clear(row)
    store.forget(row.pk)
    device_readings.forget(row.pk)


@pytest.fixture
def root():
    return User.objects.create_superuser("root", password="pw-root")


@pytest.fixture
def viewer():
    return User.objects.create_user("viewer", password="pw-viewer")  # no tenant: every host hidden


def _by_check(body: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for x in body["report"]["findings"]:
        out.setdefault(x["check"], []).append(x)
    return out


def test_the_report_has_each_finding_with_its_evidence_and_map_link(pod, client, root):
    row, f = pod
    client.force_login(root)
    body = client.get(URL).json()
    found = _by_check(body)
    host = f.node("dgx0003")
    d = int(f.out_link(host, 1))
    leaf = str(f.node_name[int(f.dl_dst[d])])
    fan = found["fan"][0]
    assert fan["severity"] == "error" and fan["subject"] == f"{leaf} fan 2" and fan["evidence"]["rpm"] == 0
    assert fan["map_url"] == f"/fabrics/pod/?focus=node:{leaf}"
    pkey = found["pkey_mismatch"][0]
    assert pkey["severity"] == "error" and pkey["evidence"]["only_at_ca"] == ["0x0001"]
    assert pkey["map_url"] == f"/fabrics/pod/?focus=link:{d % f.num_links}"
    checks = body["report"]["checks"]
    assert checks["pkey_mismatch"]["status"] == "fail" and checks["sm_mastership"]["status"] == "pass"
    assert checks["duplicate_ids"]["status"] == "pass"
    k = body["report"]["kpis"]
    assert k["connected_endpoints"] == {"connected": len(f.hosts), "expected": len(f.hosts), "share": 1.0}
    assert k["topology_correctness"] is None  # no cabling plan
    assert k["healthy_links"]["healthy"] == f.num_links - 1 and k["healthy_links"]["graded"] == f.num_links
    assert body["inputs"]["vitals"] == 1 and body["inputs"]["pkey_tables"] == 2 and body["inputs"]["graded"]
    # the Health page's Validation section is drawn from this API; who may start analyses gets the what-if button
    html = client.get("/fabrics/pod/health/").content.decode()
    assert f'data-page="validation" data-api="{URL}" data-analyses="/api/fabrics/fabrics/pod/analyses/"' in html
    assert "ibweb-pages.js" in html


def test_the_isolation_advice_has_its_commands_jobs_and_what_if_and_runs_nothing(pod, client, root, viewer):
    row, f = pod
    client.force_login(root)
    iso = client.get(URL).json()["isolation"]
    assert iso["executed"] is False and iso["candidates"] == 1 and iso["cap"] == 10
    (a,) = iso["advised"]
    host = f.node("dgx0003")
    d = int(f.out_link(host, 1))
    leaf, port = int(f.dl_dst[d]), int(f.dl_dst_port[d])
    assert (a["node"], a["port"], a["cable"]) == (str(f.node_name[leaf]), port, d % f.num_links)
    assert a["commands"] == {"isolate": f"ibportstate {int(f.lid[leaf])} {port} disable",
                             "reenable": f"ibportstate {int(f.lid[leaf])} {port} enable"}
    assert a["disconnects"] == ["dgx0003"] and a["whatif"] is None
    assert a["whatif_request"] == {"kind": "whatif_links", "params": {"failed_cables": [a["cable"]],
                                                                      "ebb_patterns": 0}}
    assert a["map_url"] == f"/fabrics/pod/?focus=link:{int(f.out_link(leaf, port))}"  # from the port advised
    # a what-if cutting exactly that cable: its outcome, each job shown as the view may see it
    Analysis.objects.create(fabric=row, kind=AnalysisKind.WHATIF_LINKS, status=AnalysisStatus.DONE,
                            params={"failed_cables": [a["cable"]], "ebb_patterns": 0, "seed": 1},
                            result={"delta": [{"id": "globex-train", "tenant": "globex", "comm_ratio": 1.5}],
                                    "summary": {"jobs": 1, "jobs_slower": 1, "jobs_faster": 0, "jobs_broken": 0}})
    w = client.get(URL).json()["isolation"]["advised"][0]["whatif"]
    assert w["status"] == "done" and w["summary"]["jobs_slower"] == 1
    assert w["jobs"] == [{"id": "globex-train", "tenant": "globex", "comm_ratio": 1.5}]
    client.force_login(viewer)
    w = client.get(URL).json()["isolation"]["advised"][0]["whatif"]
    assert w["jobs"] == [] and w["summary"]["jobs"] == 1  # another tenant's job: counted, never named


def test_a_viewer_below_all_reads_hidden_hosts_and_p_keys_as_on_the_health_page(pod, client, viewer):
    row, f = pod
    client.force_login(viewer)
    text = client.get(URL).content.decode()
    host = f.node("dgx0003")
    assert "dgx0003" not in text and f"{int(f.guid[host]):016x}" not in text
    assert "0x0001" not in text and "0x8001" not in text  # a partition the viewer does not see
    body = json.loads(text)
    pkey = _by_check(body)["pkey_mismatch"][0]
    assert f"host-{host}/1" in pkey["subject"] and pkey["evidence"]["only_at_ca"] == ["hidden"]
    assert body["isolation"]["advised"][0]["disconnects"] == [f"host-{host}"]
    # the CSV alike
    rows = list(csv.DictReader(io.StringIO(client.get(URL + "findings.csv").content.decode())))
    assert rows and "dgx0003" not in json.dumps(rows) and {r["check"] for r in rows} >= {"fan", "pkey_mismatch"}
    # recomputing is for operators
    assert client.get(URL + "?refresh=1").status_code == 403
    html = client.get("/fabrics/pod/health/").content.decode()
    assert 'data-page="validation"' in html and "data-analyses" not in html  # a viewer starts no analysis


def test_problems_only_and_the_csv(pod, client, root):
    row, f = pod
    client.force_login(root)
    everything = client.get(URL).json()["report"]
    problems = client.get(URL + "?problems=1").json()["report"]
    assert problems["problems_only"] and not everything["problems_only"]
    assert {c["status"] for c in problems["checks"].values()} == {"fail"}
    assert set(everything["checks"]) > set(problems["checks"])
    assert all(x["severity"] != "info" for x in problems["findings"])
    answer = client.get(URL + "findings.csv?problems=1")
    assert answer["Content-Type"].startswith("text/csv") and "pod-validation-problems.csv" in answer[
        "Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(answer.content.decode())))
    assert len(rows) == len(problems["findings"])
    assert rows[0].keys() == {"check", "severity", "subject", "link", "message", "evidence", "map_url"}
    assert json.loads(rows[0]["evidence"]) == problems["findings"][0]["evidence"]


def test_new_device_readings_make_the_kept_report_stale_and_the_task_computes_it_again(pod, client, root, settings):
    row, f = pod
    client.force_login(root)
    first = client.get(URL).json()
    assert client.get(URL).json()["t"] == first["t"] and not first["stale"]  # kept within the interval
    device_readings.write(row.pk, DeviceReadings(vitals=[_readings(f, fan_rpm=7000).vitals[0]]))
    kept = client.get(URL).json()  # a request never computes it: the kept one, told stale
    assert kept["t"] == first["t"] and kept["stale"] and kept["age_s"] >= 0 and "fan" in _by_check(kept)
    assert tasks.validate_due() == 0  # new readings wait for the debounce (many hosts push together)
    settings.IBWEB_VALIDATION_DEBOUNCE_S = 0
    assert tasks.validate_due() == 1 and tasks.validate_due() == 0
    again = client.get(URL).json()
    assert again["t"] > first["t"] and not again["stale"] and "fan" not in _by_check(again)
    assert client.get(URL + "?refresh=1").json()["t"] > again["t"]


def test_the_device_panel_computes_no_report(pod, client, root):
    row, f = pod
    client.force_login(root)
    leaf = str(f.node_name[int(f.dl_dst[int(f.out_link(f.node("dgx0003"), 1))])])
    body = client.get(f"/api/fabrics/fabrics/pod/devices/{leaf}/").json()
    assert body["findings"] == [] and body["vitals"] and store.read(row.pk) is None  # none kept: none computed
    client.get(URL)  # the first read of the report computes it
    assert {x["check"] for x in client.get(f"/api/fabrics/fabrics/pod/devices/{leaf}/").json()["findings"]} >= {"fan"}


def test_a_switch_s_device_panel(pod, client, viewer):
    row, f = pod
    client.force_login(viewer)
    host = f.node("dgx0003")
    leaf = str(f.node_name[int(f.dl_dst[int(f.out_link(host, 1))])])
    client.get(URL)  # the report kept
    body = client.get(f"/api/fabrics/fabrics/pod/devices/{leaf}/").json()
    (v,) = body["vitals"]
    assert body["node"] == leaf and v["firmware"] == "31.2012.1068" and v["fans_failed"] == 1
    assert [x["rpm"] for x in v["fans"]] == [8000, 0] and v["psus_failed"] == 0 and v["uptime_s"] == 86400
    assert {x["check"] for x in body["findings"]} >= {"fan", "pkey_mismatch"}
    assert "dgx0003" not in json.dumps(body)
    assert client.get(f"/api/fabrics/fabrics/pod/devices/host-{host}/").status_code == 404  # not a switch
    assert client.get("/api/fabrics/fabrics/pod/devices/no-such-switch/").status_code == 404
