"""A real Prometheus finds ``/metrics``' parts through ``/metrics/targets`` (``http_sd_configs``) and scrapes them
all from a real ibweb server: every part up, and the ports it stores are the whole fabric's (issue 40)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.support.prometheus import running_prometheus
from tests.support.server import running_server

pytestmark = pytest.mark.server

TOKEN = """
from django.contrib.auth.models import Permission, User
from ibweb.accounts.models import ApiToken
_scraper, _ = User.objects.get_or_create(username="scraper")
_scraper.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
open({path!r}, "w").write(ApiToken.issue(_scraper, "prometheus")[1])
"""


def _get(url: str, token: str) -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}"})
    with urllib.request.urlopen(request, timeout=30) as r:
        return r.read()


def test_prometheus_scrapes_every_part_of_the_demo_through_http_sd(tmp_path):
    with running_server(tmp_path, extra_env={"IBWEB_METRICS_TARGET_PORTS": "256"},
                        setup=TOKEN.format(path=str(tmp_path / "token"))) as server:
        token = (tmp_path / "token").read_text().strip()
        groups = json.loads(_get(server.url + "/metrics/targets", token))
        demo = [g for g in groups if g["labels"].get("__param_fabric") == "demo"]
        assert len(demo) >= 2, f"the demo fits one part of 256 ports: {groups}"
        whole = _get(server.url + "/metrics?fabric=demo", token).decode()
        ports = sum(line.startswith("infiniband_port_transmit_data_bytes_total{") for line in whole.splitlines())
        auth = {"type": "Token", "credentials": token}
        config = {"global": {"scrape_interval": "2s", "evaluation_interval": "2s"},
                  "scrape_configs": [{"job_name": "ibweb", "scrape_interval": "2s", "authorization": auth,
                                      "http_sd_configs": [{"url": server.url + "/metrics/targets",
                                                           "refresh_interval": "5s", "authorization": auth}]}]}
        with running_prometheus(tmp_path / "prom", config) as prom:
            def all_up(p):
                active = p.get("/api/v1/targets", state="active")["data"]["activeTargets"]
                return len(active) == len(groups) and all(t["health"] == "up" for t in active) and active

            active = prom.wait(all_up, 90, f"{len(groups)} targets up")
            assert {t["labels"]["instance"] for t in active} == {g["labels"]["instance"] for g in groups}
            assert {t["scrapeUrl"].split("?", 1)[1] for t in active} >= {"fabric=demo&part=0", "process=1"}
            stored = prom.wait(lambda p: p.query('count(infiniband_port_transmit_data_bytes_total{fabric="demo"})')
                               ["result"], 30, "the demo's port series")
            assert int(float(stored[0]["value"][1])) == ports
            per_target = prom.query('max(scrape_samples_scraped{job="ibweb"})')["result"]
            assert 0 < float(per_target[0]["value"][1]) <= 23 * (256 + 64)  # families per port x the bound
