"""Link health of an emulated fabric end to end (issue 37): the demo's faults, sooner, graded by its runner into the
report the API and the Health page show, at the right ticks, redacted for views that may not name a host."""

from __future__ import annotations

import asyncio
import copy

import pytest
from django.contrib.auth.models import User

from fabric_engine.scenario import DEMO_SPEC
from ibweb.fabrics.demo import ensure_demo
from ibweb.live.engine.runner import FabricRunner
from ibweb.runtime import health as store
from ibweb.tenancy.models import Tenant
from tests.support.engine_fixtures import settled_tick

pytestmark = pytest.mark.django_db(transaction=True)

#: The demo's four faults, seconds after the start instead of minutes.
FAULTS = [
    {"kind": "ber_rising", "link": "leaf03 40", "from": 6e-5, "to": 3e-4, "over_s": 10, "start_s": 10},
    {"kind": "hot_module", "port": "spine07 12", "celsius": 78, "start_s": 5},
    {"kind": "flapping", "link": "gpu0512 1", "period_s": 6, "down_s": 2, "start_s": 3},
    {"kind": "cable_swap", "link": "leaf05 7", "at_s": 8},
]
TICKS = 22


def _port(report: dict, node: str, port: int) -> dict | None:
    return next((p for p in report["worst"] if p["node"] == node and p["port"] == port), None)


@pytest.fixture
def demo_run(settings):
    """The demo fabric with :data:`FAULTS`, graded every tick; the report after each tick ``{t0: report}``."""
    settings.IBWEB_HEALTH_INTERVAL_S = 0
    fabric, _ = ensure_demo()
    assert {f["kind"] for f in DEMO_SPEC["health"]} == {f["kind"] for f in FAULTS}
    fabric.spec = {**copy.deepcopy(fabric.spec), "health": FAULTS}
    fabric.save()
    reports = {}

    async def run():
        runner = FabricRunner(fabric)
        await runner.start()
        for t0 in range(TICKS):  # tick k reads the fabric at emulated second k
            await settled_tick(runner)
            reports[t0] = await asyncio.to_thread(store.read, fabric.pk)
        await runner.stop()

    asyncio.run(run())
    return fabric, reports


def test_the_demo_faults_show_at_their_times_in_the_api_and_the_page(demo_run, client):
    fabric, reports = demo_run
    assert all(reports[t] is not None for t in range(TICKS))
    # the raw BER climbs from 10 s: normal before, a warning on the way, an error at its top (both ends)
    assert _port(reports[9], "leaf03", 40) is None
    assert _port(reports[12], "leaf03", 40)["ber"]["grade"] == "warning"
    hot_ber = _port(reports[TICKS - 1], "leaf03", 40)
    assert hot_ber["grade"] == "error" and hot_ber["ber"]["effective_grade"] == "error"
    assert hot_ber["ber"]["raw"] == pytest.approx(3e-4) and hot_ber["ber"]["window_s"] > 86400
    assert hot_ber["peer"]["node"].startswith("spine") and _port(reports[TICKS - 1], hot_ber["peer"]["node"],
                                                                  hot_ber["peer"]["port"])["grade"] == "error"
    # the module runs hot from 5 s: a warning (78 C, over the 70 C warning, under the 80 C alarm)
    assert _port(reports[4], "spine07", 12) is None
    hot = _port(reports[5], "spine07", 12)
    assert hot["module"] == {**hot["module"], "status": "warning", "temperature_c": 78.0,
                             "temperature_warning_c": 70.0, "temperature_alarm_c": 80.0}
    assert reports[5]["summary"]["module_warnings"] == 1 and reports[4]["summary"]["module_warnings"] == 0
    # the host cable flaps from 3 s, down 2 s every 6 s: down at 3, 9, 15, 21 (now)
    assert reports[2]["summary"]["links_down"] == 0 and reports[3]["summary"]["links_down"] == 2
    flap = _port(reports[20], "gpu0512", 1)
    assert flap["grade"] == "warning" and flap["downs"]["downs_24h"] == 3 and flap["downs"]["repeated"]
    assert [round(e["start"] - reports[0]["t"]) for e in flap["downs"]["episodes"]] == [15, 9, 3]
    assert all(e["duration_min_s"] >= 1 and e["duration_max_s"] <= 3 and not e["critical"]
               for e in flap["downs"]["episodes"])
    assert _port(reports[21], "gpu0512", 1)["downs"]["down"] and _port(reports[21], "gpu0512", 1)["grade"] == "error"
    # the cable at leaf05 7 is swapped at 8 s: both its ends' serials change once
    assert reports[7]["swaps"] == []
    swaps = reports[TICKS - 1]["swaps"]
    assert {(s["node"], s["port"]) for s in swaps} >= {("leaf05", 7)} and len(swaps) == 2
    assert all(s["to"] == s["from"] + "-R" and round(s["t"] - reports[0]["t"]) == 8 for s in swaps)
    summary = reports[TICKS - 1]["summary"]
    assert summary["modules"] == summary["ports"] > 2000 and summary["ber"]["error"] == 2
    assert summary["links_down"] == 2 and summary["module_warnings"] == 1 and summary["module_alarms"] == 0

    # the API and the page, as an operator sees them
    User.objects.create_superuser("root", password="pw")
    client.login(username="root", password="pw")
    body = client.get(f"/api/fabrics/fabrics/{fabric.slug}/health/").json()
    assert body["fabric"] == fabric.slug and body["summary"] == summary
    assert [(p["node"], p["port"]) for p in body["worst"][:2]] in ([("leaf03", 40), (hot_ber["peer"]["node"],
                                                                                     hot_ber["peer"]["port"])],
                                                                   [(hot_ber["peer"]["node"],
                                                                     hot_ber["peer"]["port"]), ("leaf03", 40)])
    page = client.get(f"/fabrics/{fabric.slug}/health/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-node="leaf03" data-port="40"' in html and 'data-node="spine07" data-port="12"' in html
    assert 'data-module="warning"' in html and "gpu0512 port 1" in html, html[html.find("<tbody"):][:6000]
    assert "4 downs" in html and "(down now)" in html
    assert f'href="/fabrics/{fabric.slug}/health/"' in client.get(f"/fabrics/{fabric.slug}/").content.decode()
    # /metrics: each family once, the fault ports' values
    metrics = client.get(f"/metrics?fabric={fabric.slug}").content.decode()
    for family in ("ibweb_port_ber", "ibweb_port_module_temperature_celsius", "ibweb_port_health_grade"):
        assert metrics.count(f"# TYPE {family} gauge\n") == 1 and metrics.count(f"# HELP {family} ") == 1
    assert f'ibweb_port_ber{{fabric="{fabric.slug}",node="leaf03",port="40",kind="raw"}} 0.0003\n' in metrics
    assert f'ibweb_port_module_temperature_celsius{{fabric="{fabric.slug}",node="spine07",port="12"}} 78\n' in metrics
    assert f'ibweb_port_health_grade{{fabric="{fabric.slug}",node="leaf03",port="40"}} 2\n' in metrics
    assert f'ibweb_port_health_grade{{fabric="{fabric.slug}",node="gpu0512",port="1"}} 2\n' in metrics
    assert metrics.count("ibweb_port_health_grade{") == summary["ports"]


def test_a_tenant_view_sees_hosts_of_other_tenants_as_host_labels(demo_run, client):
    fabric, reports = demo_run
    from ibweb.tenancy.demo import ensure_demo_policy

    ensure_demo_policy(fabric)
    user = User.objects.create_user("alice", password="pw")
    Tenant.objects.get(slug="acme").users.add(user)
    flap = _port(reports[TICKS - 1], "gpu0512", 1)
    label = f"host-{flap['node_index']}"
    for who in (None, user):  # anonymous (public read: the fabric view), then acme's user
        client.logout()
        if who is not None:
            client.force_login(who)
        api = client.get(f"/api/fabrics/fabrics/{fabric.slug}/health/")
        page = client.get(f"/fabrics/{fabric.slug}/health/")
        assert api.status_code == 200 and page.status_code == 200
        for text in (api.content.decode(), page.content.decode()):
            assert "gpu0512" not in text and flap["guid"] not in text
            assert "spine07" in text and "leaf03" in text  # switches are fabric-wide
        metrics = client.get(f"/metrics?fabric={fabric.slug}").content.decode()
        assert "gpu0512" not in metrics and 'node="spine07",port="12"} 78' in metrics
        assert 'ibweb_port_health_grade{fabric="demo",node="leaf03",port="40"} 2' in metrics
        shown = _port(api.json(), label, 1)
        assert shown["guid"] == "hidden" and shown["downs"]["downs_24h"] == flap["downs"]["downs_24h"]
        assert f"{label} port 1" in page.content.decode()


def test_without_a_report_the_api_answers_404_and_the_page_says_so(client):
    fabric, _ = ensure_demo()  # never run: nothing graded
    api = client.get(f"/api/fabrics/fabrics/{fabric.slug}/health/")
    assert api.status_code == 404 and "no link health report" in api.json()["detail"]
    page = client.get(f"/fabrics/{fabric.slug}/health/")
    assert page.status_code == 200 and 'id="health-none"' in page.content.decode()
