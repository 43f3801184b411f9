"""ibweb's Prometheus rules and Grafana dashboards (deploy/): promtool accepts the rules and passes their unit
tests; a real Prometheus (Debian ``prometheus``) scraping a real ibweb server evaluates every rule without an
error and every dashboard query, with the key ones returning series; compose.yaml mounts what exists."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.support.prometheus import PROMTOOL, Prometheus, running_prometheus
from tests.support.server import running_server

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
RULES = DEPLOY / "prometheus" / "ibweb-rules.yml"
DASHBOARDS = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
#: Scrape and rule evaluation every 5 s (compose's Prometheus: 30 s), so rate()s over 1m have samples soon.
STEP_S = 5

#: Creates the scraper the README says (an operator's token sees every port) and writes its key to a file.
SCRAPER = """
import io as _io
_out = _io.StringIO()
_call_command("create_user", "prometheus", "--role", "operator", "--token", stdout=_out)
open({path!r}, "w").write(_out.getvalue().split()[-1])
"""

#: Recording rules that must return series for the demo fabric (all of them: every family is exported).
KEY_PANELS = {
    "ibweb-fabric": {"Counters age", "Ports down", "Ports graded error", "Fabric throughput (sent)",
                     "Worst congestion (PortXmitWait share)", "Errors per second", "Worst effective BER",
                     "Hottest ports", "Hottest module"},
    "ibweb-port": {"State", "Health grade", "Throughput", "Congestion (PortXmitWait share)",
                   "Error counters per second", "Bit error rate", "Module temperature"},
    "ibweb-job": {"Host ports", "Host links down", "Job throughput", "Throughput per host",
                  "Congestion on the job's links", "Errors on the job's links", "Slowest hosts (least sent)"},
}


def _rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def _tool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    from tests.conftest import require_tool

    require_tool(PROMTOOL)
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_promtool_checks_the_rules():
    result = _tool("check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in result.stdout


def test_promtool_unit_tests_of_the_alerts():
    """Every alert has a unit test that fires it (and the tests pass)."""
    tests = DEPLOY / "prometheus" / "ibweb-rules.test.yml"
    result = _tool("test", "rules", tests.name, cwd=tests.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    tested = {case["alertname"] for test in yaml.safe_load(tests.read_text())["tests"]
              for case in test.get("alert_rule_test", []) if case.get("exp_alerts")}
    assert tested == {rule["alert"] for rule in _rules() if "alert" in rule}


def test_promtool_checks_composes_prometheus_config(tmp_path):
    config = tmp_path / "prometheus.yml"
    shutil.copy(RULES, tmp_path / RULES.name)
    (tmp_path / "token").write_text("not-a-key")
    text = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
    config.write_text(text.replace("/run/secrets/ibweb_metrics_token", str(tmp_path / "token")))
    result = _tool("check", "config", str(config))
    assert result.returncode == 0, result.stdout + result.stderr


def _compose_mounts(service: dict) -> dict[str, Path]:
    """``{target: source}`` of a service's bind mounts (``./...``), sources made absolute."""
    out = {}
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("./"):
            out[target] = ROOT / source
    return out


def test_compose_provisions_prometheus_and_grafana_from_deploy():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    prometheus, grafana = _compose_mounts(services["prometheus"]), _compose_mounts(services["grafana"])
    for target, source in {**prometheus, **grafana}.items():
        assert source.exists(), f"compose.yaml mounts {source} at {target}: missing"
    config_path = "/etc/prometheus/prometheus.yml"
    assert f"--config.file={config_path}" in services["prometheus"]["command"]
    config = yaml.safe_load(prometheus[config_path].read_text())
    for rule_file in config["rule_files"]:  # relative to the config's folder, as Prometheus reads them
        assert str(Path(config_path).parent / rule_file) in prometheus, rule_file
    scrape = config["scrape_configs"][0]
    secret = scrape["authorization"]["credentials_file"]
    assert secret == f"/run/secrets/{services['prometheus']['secrets'][0]}"
    [sd] = scrape["http_sd_configs"]  # the targets /metrics/targets lists, read with the same token
    assert sd["url"] == "http://web:8000/metrics/targets" and "8000:8000" in services["web"]["ports"]
    assert sd["authorization"]["credentials_file"] == secret
    sources = {t: s for t, s in grafana.items() if t.startswith("/etc/grafana/provisioning/")}
    datasources = yaml.safe_load((sources["/etc/grafana/provisioning/datasources"] / "prometheus.yml").read_text())
    assert urllib.parse.urlsplit(datasources["datasources"][0]["url"]).hostname == "prometheus"
    providers = yaml.safe_load((sources["/etc/grafana/provisioning/dashboards"] / "ibweb.yml").read_text())
    folder = grafana[providers["providers"][0]["options"]["path"]]
    assert sorted(folder.glob("*.json")) == DASHBOARDS and len(DASHBOARDS) == 3
    home = services["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (folder / Path(home).name).exists()


def test_dashboards_are_grafana_models():
    uids = set()
    for path in DASHBOARDS:
        board = json.loads(path.read_text())
        uids.add(board["uid"])
        names = {v["name"] for v in board["templating"]["list"]}
        assert {"datasource", "fabric"} <= names, path.name
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), path.name
        for panel in board["panels"]:
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
            assert panel["targets"] and all(t["expr"].strip() for t in panel["targets"]), panel["title"]
            used = set(re.findall(r"\$\{?(\w+)", " ".join(t["expr"] for t in panel["targets"])))
            assert used - {"__rate_interval"} <= names, (path.name, panel["title"], used - names)
    assert uids == set(KEY_PANELS)


# -- a real Prometheus scraping a real ibweb ------------------------------------------------------------------


@dataclass
class Scraped:
    """A real ibweb server, the targets its ``/metrics/targets`` lists, and a real Prometheus scraping them."""

    prom: Prometheus
    url: str
    token: str
    groups: list[dict]

    def get(self, path: str) -> bytes:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.read()


@pytest.fixture(scope="module")
def scraped(tmp_path_factory):
    """Prometheus as compose's (HTTP service discovery at ``/metrics/targets``), with parts of 256 ports so that
    the demo is scraped as several targets."""
    tmp = tmp_path_factory.mktemp("prometheus")
    token = tmp / "token"
    auth = {"type": "Token", "credentials_file": str(token)}
    with running_server(tmp, extra_env={"IBWEB_METRICS_TARGET_PORTS": "256"},
                        setup=SCRAPER.format(path=str(token))) as server, running_prometheus(tmp / "prom", {
            "global": {"scrape_interval": f"{STEP_S}s", "scrape_timeout": f"{STEP_S}s",
                       "evaluation_interval": f"{STEP_S}s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [{"job_name": "ibweb", "authorization": auth, "http_sd_configs": [
                {"url": server.url + "/metrics/targets", "refresh_interval": "2s", "authorization": auth}]}]}) as prom:
        key = token.read_text().strip()
        out = Scraped(prom, server.url, key, [])
        out.groups = json.loads(out.get("/metrics/targets"))
        prom.wait(lambda p: _rules_evaluated(p, len(out.groups)), 120, "scrapes and every recording rule", every_s=1)
        yield out


@pytest.fixture(scope="module")
def prometheus(scraped):
    return scraped.prom


def _rules_evaluated(prom: Prometheus, targets: int) -> bool:
    """Whether every target is scraped and every recording rule was evaluated after two scrapes (rates have
    samples)."""
    records = [r["record"] for r in _rules() if "record" in r]
    up = prom.query('up{job="ibweb"}')["result"]
    scrapes = prom.query('min(count_over_time(up{job="ibweb"}[5m]))')["result"]
    have = {r["metric"]["__name__"] for r in prom.query("group by (__name__) ({__name__=~\"ibweb:.+\"})")["result"]}
    return bool(len(up) == targets and all(u["value"][1] == "1" for u in up) and scrapes
                and int(scrapes[0]["value"][1]) >= 3 and set(records) <= have)


def test_prometheus_finds_every_part_of_the_demo_through_http_sd(scraped):
    """``/metrics/targets`` read by Prometheus' ``http_sd_configs``: every part a target of its own, up, and the
    ports it stores are the whole fabric's, each once (issue 40)."""
    demo = [g for g in scraped.groups if g["labels"].get("__param_fabric") == "demo"]
    assert len(demo) >= 2, f"the demo fits one part of 256 ports: {scraped.groups}"
    active = scraped.prom.get("/api/v1/targets", state="active")["data"]["activeTargets"]
    assert {t["labels"]["instance"] for t in active} == {g["labels"]["instance"] for g in scraped.groups}
    assert {t["scrapeUrl"].split("?", 1)[1] for t in active} >= {"fabric=demo&part=0", "process=1"}
    whole = scraped.get("/metrics?fabric=demo").decode()
    ports = sum(line.startswith("infiniband_port_transmit_data_bytes_total{") for line in whole.splitlines())
    stored = scraped.prom.query('count(infiniband_port_transmit_data_bytes_total{fabric="demo"})')["result"]
    assert int(float(stored[0]["value"][1])) == ports
    per_target = scraped.prom.query('max(scrape_samples_scraped{job="ibweb"})')["result"]
    assert 0 < float(per_target[0]["value"][1]) <= 23 * (256 + 64)  # families per port x the bound


def test_every_rule_is_evaluated_without_error(prometheus):
    groups = prometheus.get("/api/v1/rules")["data"]["groups"]
    loaded = {(r.get("name")): r for g in groups for r in g["rules"]}
    expected = {r.get("record") or r["alert"] for r in _rules()}
    assert set(loaded) == expected
    for name, rule in loaded.items():
        assert rule["health"] == "ok" and not rule.get("lastError"), (name, rule.get("lastError"))


def test_every_recording_rule_returns_series(prometheus):
    for rule in _rules():
        if "record" in rule:
            result = prometheus.query(rule["expr"])["result"]
            assert result, f"{rule['record']}: no series"
            assert prometheus.query(rule["record"])["result"], f"{rule['record']}: not recorded"
        else:
            prometheus.query(rule["expr"])  # evaluates; whether it fires depends on the demo
    throughput = prometheus.query('ibweb:fabric_transmit_bytes:rate1m{fabric="demo"}')["result"]
    assert float(throughput[0]["value"][1]) > 0  # the demo's jobs send


def _variables(prometheus: Prometheus, board: dict) -> dict[str, str]:
    """A value for each of the dashboard's variables, from their own queries (Grafana's ``label_values``)."""
    values = {"__rate_interval": "1m", "hosts": "gpu000[1-8]"}
    for var in board["templating"]["list"]:
        if var["type"] != "query":
            continue
        match = re.fullmatch(r"label_values\((.+), *(\w+)\)", var["definition"])
        assert match, var["definition"]
        selector = re.sub(r"\$(\w+)", lambda m: values[m.group(1)], match.group(1))
        found = prometheus.get(f"/api/v1/label/{match.group(2)}/values", **{"match[]": selector})["data"]
        assert found, f"{board['uid']}: variable {var['name']} ({selector}) has no values"
        values[var["name"]] = "demo" if var["name"] == "fabric" else \
            "leaf01" if "leaf01" in found else sorted(found)[0]
    return values


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_every_dashboard_query_evaluates(prometheus, path):
    board = json.loads(path.read_text())
    values = _variables(prometheus, board)
    empty = set()
    for panel in board["panels"]:
        for target in panel["targets"]:
            expr = re.sub(r"\$\{?(\w+)\}?", lambda m: values[m.group(1)], target["expr"])
            if not prometheus.query(expr)["result"]:
                empty.add(panel["title"])
    assert not empty & KEY_PANELS[board["uid"]], f"{board['uid']}: no series for {empty & KEY_PANELS[board['uid']]}"
    assert KEY_PANELS[board["uid"]] <= {p["title"] for p in board["panels"]}
