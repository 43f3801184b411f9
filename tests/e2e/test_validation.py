"""The Validation section of the Health page and a switch's device panel in headless Chromium (issue 38).

The demo gets a host cable whose raw BER climbs to an error in 2 s (grading every second): the one port advised for
isolation. A push collector on the demo sends ``ibswinfo`` output of that cable's leaf with a stopped fan. The
Health page's Validation section shows the KPIs, the checks, the fan finding with a link to the map and the advised
port with its ``ibportstate`` commands; the map link opens the map on the leaf, whose device panel shows its fans.
"""

import json
import time
import urllib.request

import pytest

from fabric_engine.scenario import DEMO_SPEC, build_fabric
from tests.support.browser import axe_violations, chromium_page, poll
from tests.support.server import running_server

pytestmark = pytest.mark.browser

DEMO = build_fabric(DEMO_SPEC["topology"])
HOST = int(DEMO.hosts[0])
CABLE = int(DEMO.out_link(HOST, 1)) % DEMO.num_links
LEAF = str(DEMO.node_name[int(DEMO.dl_dst[int(DEMO.out_link(HOST, 1))])])
HOST_NAME = str(DEMO.node_name[HOST])

SETUP = """
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, PushToken
f = Fabric.objects.get(slug="demo")
f.spec = {{**f.spec, "health": [*(f.spec.get("health") or []),
          {{"kind": "ber_rising", "link": "{host} 1", "from": 6e-5, "to": 3e-4, "over_s": 2}}]}}
f.save()
config = CollectorConfig.objects.create(fabric=f, source=CollectorSource.PUSH)
open({token!r}, "w").write(PushToken.issue(config, "e2e")[1])
"""

#: ``ibswinfo -o`` output of the leaf (its categories, as stanford-rc/ibswinfo prints them): fan 2 stopped.
IBSWINFO = f"""node_desription    : {LEAF}
part_number        : MQM8700-HS2F
serial             : MT2001X00417
fw_version         : 27.2008.2304
psu0.status        : OK
psu0.dc            : OK
fans               : OK
uptime (sec)       : 1209600
psu0.power (W)     : 188
cur.temp (C)       : 61
max.temp (C)       : 70
fan#1.speed (rpm)  : 11020
fan#2.speed (rpm)  : 0
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e-validation")
    token = tmp / "push-token"
    setup = SETUP.format(host=HOST_NAME, token=str(token))
    with running_server(tmp, setup=setup, extra_env={"IBWEB_HEALTH_INTERVAL_S": "1"}) as srv:
        srv.push_token = token.read_text().strip()
        yield srv


def _push(server) -> dict:
    body = json.dumps({"captures": [{"name": f"{LEAF}-ibswinfo.txt", "text": IBSWINFO}]}).encode()
    request = urllib.request.Request(f"{server.url}/api/telemetry/fabrics/demo/devices/", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {server.push_token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def _error_graded(server, timeout_s: float = 60.0) -> None:
    """Wait for the host's cable to be graded an error."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            worst = server.get_json("/api/fabrics/fabrics/demo/health/")["worst"]
            if any(e["node"] == HOST_NAME and e["grade"] == "error" for e in worst):
                return
        except OSError:  # 404 before the first grading
            pass
        assert time.monotonic() < deadline, "the host's cable was never graded an error"
        time.sleep(0.5)


def test_the_validation_section_and_a_switch_s_device_panel(server):
    _error_graded(server)
    assert _push(server)["records"] == 1  # new device readings: the report is computed again at its next read
    with chromium_page({"width": 1280, "height": 900}, signed_in=server) as page:
        page.goto(server.url + "/fabrics/demo/health/")
        poll(page, "document.querySelectorAll('#validation .validation-kpi').length === 3"
                   " && document.querySelector('#validation .validation-advice tbody tr') !== null", 60)
        kpis = page.evaluate("[...document.querySelectorAll('#validation .validation-kpi')]"
                             ".map((k) => [k.dataset.kpi, k.querySelector('strong').textContent])")
        assert [k for k, _ in kpis] == ["connected_endpoints", "topology_correctness", "healthy_links"]
        assert dict(kpis)["connected_endpoints"] == "100.0%"
        advice = page.locator(f'#validation .validation-advice tbody tr[data-node="{LEAF}"]')  # the host's cable
        assert advice.count() == 1
        port = advice.get_attribute("data-port")
        text = advice.inner_text()
        assert f"{LEAF} port {port}" in text and f" {port} disable" in text and f" {port} enable" in text
        fan = page.locator('#validation .validation-findings tbody tr[data-check="fan"]')
        assert fan.count() == 1 and f"{LEAF}: fan fan#2 failed" in fan.inner_text()  # 0 rpm: read as failed
        checks = page.evaluate("Object.fromEntries([...document.querySelectorAll('#validation .validation-checks "
                               "tbody tr')].map((r) => [r.cells[0].textContent, r.dataset.status]))")
        assert page.locator("#validation .validation-problems").is_checked()  # problems only: the failed checks
        assert checks["Fans, PSUs and temperatures"] == "fail" and set(checks.values()) == {"fail"}
        assert axe_violations(page) == []
        # every check, passed and skipped ones too
        page.locator("#validation .validation-problems").uncheck()
        poll(page, "[...document.querySelectorAll('#validation .validation-checks tbody tr')]"
                   ".some((r) => r.dataset.status === 'pass')", 15)
        checks = page.evaluate("Object.fromEntries([...document.querySelectorAll('#validation .validation-checks "
                               "tbody tr')].map((r) => [r.cells[0].textContent, r.dataset.status]))")
        assert checks["Subnet manager mastership"] == "skipped" and checks["Duplicate GUIDs and LIDs"] == "pass"
        # the finding's map link opens the map on the leaf, whose device panel shows its vitals
        fan.get_by_role("link", name="map").click()
        page.wait_for_url(f"{server.url}/fabrics/demo/?focus=node:{LEAF}")
        poll(page, "window.ibweb && window.ibweb.ready === true", 30)
        poll(page, "document.querySelector('.ibweb-detail-device table tr') !== null", 20)
        head = page.locator(".ibweb-detail-device summary").inner_text()
        assert head == f"Device: {LEAF}"
        rows = page.evaluate("Object.fromEntries([...document.querySelectorAll('.ibweb-detail-device tr')]"
                             ".map((r) => [r.cells[0].textContent, [r.cells[1].textContent, r.dataset.grade]]))")
        assert rows["fans"][1] == "error" and "1 of 2 good" in rows["fans"][0]
        assert rows["firmware"][0].startswith("27.2008.2304") and rows["uptime"][0] == "14 d 0 h"
        assert page.locator(".ibweb-detail-device").get_attribute("open") is not None  # a failure: unfolded


def _ibstat_disabled(guid: str, port: int) -> str:
    """``ibstat`` of an adapter whose Node GUID is ``guid``, its port ``port`` administratively disabled."""
    return (f"CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: {port}\n\tFirmware version: 20.35.1012\n"
            f"\tHardware version: 0\n\tNode GUID: {guid}\n\tSystem image GUID: {guid}\n\tPort {port}:\n"
            "\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 10\n\t\tBase lid: 0\n\t\tLMC: 0\n\t\tSM lid: 1\n"
            f"\t\tCapability mask: 0x2651e848\n\t\tPort GUID: {guid}\n\t\tLink layer: InfiniBand\n")


def test_a_port_failing_again_after_an_isolation_reads_replace(server):
    """The advised port was seen disabled before (a capture shows it so): failing again, the advice's row carries a
    "replace" badge instead of the disable command, and the port is listed among those isolated now."""
    _error_graded(server)
    (a,) = [x for x in server.get_json("/api/fabrics/fabrics/demo/validation/")["isolation"]["advised"]
            if x["node"] == LEAF]
    body = json.dumps({"captures": [{"name": f"{LEAF}-ibstat.txt",
                                     "text": _ibstat_disabled(a["guid"], a["port"])}]}).encode()
    request = urllib.request.Request(f"{server.url}/api/telemetry/fabrics/demo/devices/", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {server.push_token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200
    again = server.get_json("/api/fabrics/fabrics/demo/validation/?refresh=1&problems=1")
    assert [x["action"] for x in again["isolation"]["advised"] if x["node"] == LEAF] == ["replace"]
    with chromium_page({"width": 1280, "height": 900}, signed_in=server) as page:
        page.goto(server.url + "/fabrics/demo/health/")
        poll(page, "document.querySelector('#validation .validation-advice tr[data-action=\"replace\"]') !== null", 60)
        row = page.locator(f'#validation .validation-advice tbody tr[data-node="{LEAF}"]')
        badge = row.locator(".badge.validation-action")
        assert badge.inner_text() == "replace" and badge.get_attribute("data-action") == "replace"
        assert "replace the cable or transceiver" in (badge.get_attribute("title") or "")
        assert "replace first" in row.inner_text() and "ibportstate" not in row.inner_text()
        (listed,) = [x for x in again["isolated"] if x["guid"] == a["guid"] and x["port"] == a["port"]]
        assert page.locator("#validation .validation-isolated").is_visible()
        shown = page.locator(f'#validation .validation-isolated tbody tr[data-port="{a["port"]}"]')
        assert shown.count() == 1 and f'{listed["node"]} port {a["port"]}' in shown.inner_text()
        summary = page.locator("#validation .validation-isolated-summary").inner_text()
        assert summary.startswith("1 port is isolated now")
        assert axe_violations(page) == []
