"""A real (telemetry-fed) fabric onboarded from /fabrics/add/: the collector's fields, tokens shown once, the test
sweep (POST /api/telemetry/trial-sweep/) that saves nothing, and who may run commands from a request."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, PushToken, Sweep
from ibweb.telemetry.trial import trial_sweep
from ibweb.twin.models import CablingPlan, JobSource, JobToken

DATA = Path(__file__).resolve().parents[2] / "data" / "telemetry"
TRIAL = "/api/telemetry/trial-sweep/"
pytestmark = pytest.mark.django_db

#: The fixture fabric (tests/data/telemetry): 4 leaves, 2 spines, 8 hosts, 16 cables.
SWITCHES, CAS, LINKS = 6, 8, 16


def base(**collector) -> dict:
    """A new-fabric POST of a real fabric with ``collector-<field>`` values."""
    fields = {"source": "commands", "command_prefix": "", "environment": "", "drop_dir": "", "lfts_path": "",
              "interval_s": "10", "timeout_s": "10", **collector}
    return {"name": "Lab", "slug": "lab", "routing_engine": "minhop", "tick_s": "1", "source": "telemetry",
            **{f"collector-{k}": v for k, v in fields.items()}}


def counts() -> tuple[int, ...]:
    return Fabric.objects.count(), CollectorConfig.objects.count(), Sweep.objects.count(), PushToken.objects.count()


@pytest.fixture
def root(client):
    client.force_login(User.objects.create_superuser("root", password="pw-root"))
    return client


@pytest.fixture
def api():
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("root-api", password="pw-root"))
    return client


def drop_dir(path: Path, lfts: bool = True) -> Path:
    """A drop directory as an external collector writes it: iblinkinfo.txt, perfquery*.txt, the LFT dump."""
    path.mkdir()
    shutil.copy(DATA / "iblinkinfo.txt", path / "iblinkinfo.txt")
    (path / "perfquery-2.txt").write_text("[root@mgmt01 ~]# perfquery -l 2 1,2,3,4\n" +
                                          (DATA / "perfquery_loop.txt").read_text())
    shutil.copy(DATA / "perfquery_ext_loop.txt", path / "perfquery-x-2.txt")
    if lfts:
        shutil.copy(DATA / "opensm-lfts.dump", path / "opensm-lfts.dump")
    return path


def test_form_errors_name_the_field_and_nothing_is_saved(root):
    before = counts()
    bad_env = root.post("/fabrics/add/", base(environment="SIM_HOST=gpu0001\n1BAD=x"))
    assert bad_env.status_code == 200
    errors = bad_env.context["collector"].errors
    assert errors["environment"] == ["line 2: '1BAD' is not a variable name (letters, digits and _, not starting "
                                     "with a digit)"]
    assert "SIM_HOST=gpu0001\n1BAD=x" in bad_env.content.decode(), "the lines are shown back as typed"
    no_sep = root.post("/fabrics/add/", base(environment="SIM_HOST gpu0001"))
    assert no_sep.context["collector"].errors["environment"] == ["line 1: 'SIM_HOST gpu0001' is not NAME=value"]
    relative = root.post("/fabrics/add/", base(lfts_path="var/opensm-lfts.dump"))
    assert relative.context["collector"].errors["lfts_path"] == ["an absolute path (the engine process reads it)"]
    missing = root.post("/fabrics/add/", base(source="directory"))
    assert missing.context["collector"].errors["drop_dir"] == ["needed when reading from a drop directory"]
    quotes = root.post("/fabrics/add/", base(command_prefix="ssh 'mgmt01"))
    assert "cannot split" in quotes.context["collector"].errors["command_prefix"][0]
    jobs = root.post("/fabrics/add/", {**base(), "twin-job_source": "directory", "twin-job_drop_dir": "jobs"})
    assert "absolute path" in jobs.context["twin"].errors["job_drop_dir"][0]
    short = SimpleUploadedFile("plan.csv", b"leaf01,1,gpu0001\n")
    plan = root.post("/fabrics/add/", {**base(), "twin-plan_file": short})
    assert plan.context["twin"].errors["plan_file"][0].startswith("plan.csv:1:")
    as_json = root.post("/fabrics/add/", base(environment="=x"), HTTP_ACCEPT="application/json")
    assert as_json.status_code == 400 and list(as_json.json()["errors"]) == ["collector-environment"]
    assert counts() == before and not JobSource.objects.exists() and not CablingPlan.objects.exists()


def test_a_commands_collector_fabric_from_the_form(root):
    plan = SimpleUploadedFile("plan.csv", b"node,port,remote node,remote port,speed,width\nleaf01,1,gpu0001,1,SDR,4x\n")
    response = root.post("/fabrics/add/", {
        **base(command_prefix="ssh mgmt01 -o 'BatchMode yes'", environment="# ibsim\nSIM_HOST = gpu0001\n"
                                                                          "IBSIM_SOCKNAME=lab sim\n",
               lfts_path="/var/cache/opensm/opensm-lfts.dump", interval_s="30", timeout_s="5", drop_dir="/ignored"),
        "twin-job_source": "slurm", "twin-job_command": "squeue --json --states=RUNNING", "twin-plan_file": plan})
    assert response.status_code == 302 and response.url == "/fabrics/lab/"
    fabric = Fabric.objects.get(slug="lab")
    assert fabric.mode == FabricMode.TELEMETRY and fabric.spec == {}
    config = fabric.collector
    assert config.source == CollectorSource.COMMANDS
    assert config.command_prefix == ["ssh", "mgmt01", "-o", "BatchMode yes"]
    assert config.environment == {"SIM_HOST": "gpu0001", "IBSIM_SOCKNAME": "lab sim"}
    assert (config.lfts_path, config.interval_s, config.timeout_s, config.drop_dir) == (
        "/var/cache/opensm/opensm-lfts.dump", 30.0, 5.0, "")
    assert config.stale_after_s == 90.0, "three intervals: a slow sweep is not stale at once"
    assert not PushToken.objects.exists()
    source = JobSource.objects.get(fabric=fabric)
    assert source.kind == "slurm" and source.command == ["squeue", "--json", "--states=RUNNING"]
    assert CablingPlan.objects.get(fabric=fabric).cables == 1


def test_a_push_collector_shows_its_token_once_and_stores_only_its_digest(root):
    response = root.post("/fabrics/add/", {**base(source="push", command_prefix="sudo", environment="A=b"),
                                           "twin-job_source": "push"})
    assert response.status_code == 201 and response["Cache-Control"] == "no-store"
    page = response.content.decode()
    token = PushToken.objects.get(config__fabric__slug="lab")
    key = response.context["push"]["key"]
    assert hashlib.sha256(key.encode()).hexdigest() == token.digest and key.startswith(token.prefix)
    assert page.count(key) == 2, "the key, and the curl line that pushes with it"
    assert "curl -X POST 'http://testserver/api/telemetry/fabrics/lab/samples/'" in page
    job_key = response.context["jobs"]["key"]
    assert hashlib.sha256(job_key.encode()).hexdigest() == JobToken.objects.get(source__fabric__slug="lab").digest
    config = CollectorConfig.objects.get(fabric__slug="lab")
    assert config.command_prefix == [] and config.environment == {}, "a push collector runs nothing"
    # the key is nowhere else: not stored, not shown again
    stored = repr(list(PushToken.objects.values_list())) + repr(list(CollectorConfig.objects.values_list()))
    assert key not in stored
    for url in ("/fabrics/lab/", "/fabrics/add/", f"/admin/telemetry/collectorconfig/{config.pk}/change/",
                f"/admin/telemetry/pushtoken/{token.pk}/change/"):
        assert key not in root.get(url).content.decode(), url
    # the key works for the push endpoint
    pushed = APIClient().post("/api/telemetry/fabrics/lab/samples/", {
        "samples": [{"lid": 2, "port": 1, "t": time.time(), "extended": True, "counters": {"PortXmitData": 1}}],
        "iblinkinfo": (DATA / "iblinkinfo.txt").read_text()}, format="json", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert pushed.status_code == 201


def test_the_trial_sweep_of_a_drop_directory_counts_and_saves_nothing(api, tmp_path):
    path = drop_dir(tmp_path / "drop")
    before = counts()
    r = api.post(TRIAL, {"source": "directory", "drop_dir": str(path), "routing_engine": "ftree"}, format="json")
    assert r.status_code == 200, r.content
    report = r.json()
    assert report["ok"] and not report["saved"] and report["errors"] == []
    d = report["discovery"]
    assert (d["switches"], d["cas"], d["links"], d["ports_not_up"]) == (SWITCHES, CAS, LINKS, 0)
    c = report["counters"]
    assert (c["files"], c["switches_total"], c["switches_read"], c["ports_read"]) == (2, SWITCHES, 1, 4)
    assert c["ports_expected"] == 2 * LINKS - CAS and c["ports_unknown"] == 0
    lft = report["lft"]
    assert lft["path"] == str(path / "opensm-lfts.dump") and lft["found"] and lft["read"]
    assert (lft["switches"], lft["switches_missing"], lft["dead_entries"]) == (SWITCHES, [], 0)
    assert lft["entries"] == SWITCHES * (SWITCHES + CAS)  # every switch routes every LID
    assert [(w["line"], w["reason"]) for w in report["warnings"]] == [(1, "shell prompt")]
    assert report["warnings"][0]["source"].endswith("perfquery-2.txt")
    assert counts() == before, "nothing saved"


def test_the_trial_sweep_reports_what_is_missing_or_broken(api, tmp_path):
    path = drop_dir(tmp_path / "drop", lfts=False)
    report = api.post(TRIAL, {"source": "directory", "drop_dir": str(path)}, format="json").json()
    assert report["ok"] and report["lft"]["found"] is False and "computed with minhop" in report["lft"]["note"]
    (path / "iblinkinfo.txt").write_text((DATA / "iblinkinfo.txt").read_text().replace("==>       5    2[  ]",
                                                                                        "==>       5    9[  ]", 1))
    broken = api.post(TRIAL, {"source": "directory", "drop_dir": str(path)}, format="json").json()
    assert not broken["ok"] and broken["counters"] is None
    error = broken["errors"][0]
    assert error["stage"] == "discovery" and error["line"] is not None
    assert "outside its listed ports" in error["message"]
    gone = api.post(TRIAL, {"source": "directory", "drop_dir": str(tmp_path / "nowhere")}, format="json").json()
    assert gone["discovery"] is None and gone["errors"][0]["message"].endswith("nowhere: no such directory")
    bad = api.post(TRIAL, {"source": "directory", "drop_dir": "relative/dir", "lfts_path": "x.dump"}, format="json")
    assert bad.status_code == 400 and set(bad.json()["errors"]) == {"drop_dir", "lfts_path"}
    assert api.post(TRIAL, {}, format="json").status_code == 400, "no source: nothing runs"


def fake_tools(tmp_path: Path) -> Path:
    """A command prefix standing in for ssh: answers iblinkinfo and perfquery from the fixtures, logs each call."""
    script = tmp_path / "fake-ssh"
    script.write_text(f"""#!/bin/sh
echo "$@" >> {tmp_path}/calls
case "$1" in
  iblinkinfo) exec cat {DATA}/iblinkinfo.txt;;
  perfquery) if [ "$2" = -x ]; then exec cat {DATA}/perfquery_ext_loop.txt; fi
             exec cat {DATA}/perfquery_loop.txt;;
esac
exit 3
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_the_trial_sweep_runs_the_commands_through_the_prefix_and_environment_bounded(api, tmp_path):
    script = fake_tools(tmp_path)
    before = counts()
    report = api.post(TRIAL, {"source": "commands", "command_prefix": f"{script}", "environment": "IBWEB_T=1",
                              "timeout_s": 5}, format="json").json()
    assert report["discovery"]["links"] == LINKS and report["discovery"]["source"] == f"{script} iblinkinfo"
    c = report["counters"]
    assert (c["switches_total"], c["switches_tried"], c["commands"]) == (SWITCHES, SWITCHES, 2 * SWITCHES)
    # the fixture's counters are leaf01's (LID 2) whatever is asked: the other switches' ports are missing
    assert (c["ports_read"], c["ports_expected"]) == (4, 2 * LINKS - CAS) and c["ports_missing"][0] == "leaf02 port 1"
    assert counts() == before
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[:3] == ["iblinkinfo", "perfquery -l 2 1,2,3,4", "perfquery -x -l 2 1,2,3,4"]
    bounded = trial_sweep(CollectorConfig(source="commands", command_prefix=[str(script)], timeout_s=5), max_switches=2)
    assert (bounded["counters"]["switches_tried"], bounded["counters"]["switches_limit"]) == (2, 2)
    failing = trial_sweep(CollectorConfig(source="commands", command_prefix=["/bin/false"], timeout_s=5))
    assert failing["discovery"] is None and "/bin/false iblinkinfo: exit 1" in failing["errors"][0]["message"]
    assert os.environ.get("IBWEB_T") is None, "the environment is the commands', not this process's"


def test_who_may_run_a_trial_sweep_or_watch_a_real_fabric(client, tmp_path):
    path = drop_dir(tmp_path / "drop")
    body = {"source": "directory", "drop_dir": str(path)}
    viewer = User.objects.create_user("viewer", password="pw")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    adder = User.objects.create_user("adder", password="pw")  # may add emulated fabrics, not configure collectors
    adder.user_permissions.add(*Permission.objects.filter(codename__in=["add_fabric", "view_all_tenants"]))
    operator = User.objects.create_user("operator", password="pw")
    operator.user_permissions.add(*Permission.objects.filter(codename__in=["add_fabric", "view_all_tenants",
                                                                           "add_collectorconfig"]))
    for user, expected in ((None, 403), (viewer, 403), (adder, 403), (operator, 200)):
        api = APIClient()
        if user is not None:
            api.force_authenticate(user)
        r = api.post(TRIAL, body, format="json")
        assert r.status_code == expected, (user, r.content)
    assert APIClient().get(TRIAL).status_code == 405
    client.force_login(adder)
    denied = client.post("/fabrics/add/", base())
    assert denied.status_code == 200 and "operators who may configure collectors" in denied.context["form"].errors[
        "source"][0]
    assert not Fabric.objects.exists()
    client.force_login(viewer)
    assert client.post("/fabrics/add/", base()).status_code == 302  # to the login page: no add_fabric
    client.force_login(operator)
    # what the chosen way of reaching the tools does not use (a bad line left in the environment) is ignored
    assert client.post("/fabrics/add/", base(source="directory", drop_dir=str(path),
                                             environment="SIM_HOST gpu0001")).status_code == 302
    config = Fabric.objects.get(slug="lab").collector
    assert config.drop_dir == str(path) and config.environment == {}


def test_the_page_and_the_admin_show_no_scenario_for_a_real_fabric(root):
    page = root.get("/fabrics/add/?source=telemetry").content.decode()
    assert re.search(r'<input type="radio" name="source" value="telemetry"[^>]* checked>', page)
    assert 'name="collector-environment"' in page and 'class="test-sweep"' in page
    fabric = Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY)
    change = root.get(f"/admin/fabrics/fabric/{fabric.pk}/change/").content.decode()
    assert 'name="spec"' not in change and "Scenario" not in change
    add = root.get("/admin/fabrics/fabric/add/").content.decode()
    assert 'name="spec"' in add and "Scenario:" not in add and "Telemetry-fed fabrics have none" in add
    emulated = Fabric.objects.create(name="Emu", slug="emu", spec={"topology": {"generator": "fat_tree", "hosts": 8,
                                                                                "radix": 4}})
    assert "Scenario: topology generator" in root.get(f"/admin/fabrics/fabric/{emulated.pk}/change/").content.decode()
