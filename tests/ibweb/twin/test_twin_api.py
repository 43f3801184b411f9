"""The twin's web side (issue 17): job sources (Slurm through the collector's prefix, drop directory, push API),
the plan upload and report, and what each role sees of jobs, deviations and events."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import override_settings
from rest_framework.test import APIClient

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import write
from fabric_engine.topology.generate import fat_tree
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.models import CollectorConfig
from ibweb.twin import jobs, report_cache
from ibweb.twin.api import views
from ibweb.twin.choices import JobOrigin, JobSourceKind
from ibweb.twin.models import CablingPlan, JobSource, JobToken, ScheduledJob
from ibweb.twin.tasks import poll_job_source
from tests.support.tenancy_fixtures import tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
SLURM = Path(__file__).parents[2] / "data" / "slurm"


@pytest.fixture(autouse=True)
def clean_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def fabric(db) -> Fabric:
    return Fabric.objects.create(name="Real", slug="real", mode=FabricMode.TELEMETRY)


@pytest.fixture
def source(fabric) -> JobSource:
    return JobSource.objects.create(fabric=fabric, kind=JobSourceKind.PUSH, accounts={"llm-pretrain": "acme"})


def client_for(user=None, token: str | None = None) -> APIClient:
    c = APIClient()
    if user is not None:
        c.force_authenticate(user)
    if token is not None:
        c.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return c


# ----------------------------------------------------------------- push API
def test_push_needs_the_fabrics_token_and_stores_jobs(fabric, source, tenants):  # noqa: F811
    _, raw = JobToken.issue(source, "slurm-prolog")
    url = "/api/twin/fabrics/real/jobs/"
    body = {"jobs": [{"id": "4242", "tenant": "acme", "hosts": "gpu[0001-0002,0009-0010]", "start": 1733137200,
                      "end": "2024-12-04T11:00:00+00:00", "name": "pretrain", "user": "alice"},
                     {"id": 7, "account": "globex", "port_guids": ["0xb83fd20300000011", 0xB83FD20300000021]}]}
    assert client_for().post(url, body, format="json").status_code in (401, 403)
    assert client_for(token="nope").post(url, body, format="json").status_code == 401
    other = Fabric.objects.create(name="Other", slug="other", mode=FabricMode.TELEMETRY)
    _, foreign = JobToken.issue(JobSource.objects.create(fabric=other, kind=JobSourceKind.PUSH), "x")
    assert client_for(token=foreign).post(url, body, format="json").status_code == 403
    before = jobs.jobs_version(fabric.pk)
    r = client_for(token=raw).post(url, body, format="json")
    assert r.status_code == 201, r.content
    assert r.json() == {"fabric": "real", "stored": 2, "removed": 0}
    a, b = ScheduledJob.objects.filter(fabric=fabric).order_by("job_id")
    assert (a.job_id, a.origin, a.tenant, a.hosts) == ("4242", JobOrigin.PUSH, "acme",
                                                      ["gpu0001", "gpu0002", "gpu0009", "gpu0010"])
    assert a.start.timestamp() == 1733137200 and a.end.isoformat() == "2024-12-04T11:00:00+00:00"
    assert b.job_id == "7" and b.port_guids == ["0xb83fd20300000011", "0xb83fd20300000021"] and b.tenant == "globex"
    assert jobs.jobs_version(fabric.pk) != before
    assert JobToken.objects.get(source=source).last_used is not None
    # ended jobs go; replace keeps only the listed ones
    r = client_for(token=raw).post(url, {"ended": ["7"]}, format="json")
    assert r.json()["removed"] == 1 and ScheduledJob.objects.filter(fabric=fabric).count() == 1
    r = client_for(token=raw).post(url, {"jobs": [{"id": "9", "hosts": ["gpu0003"]}], "replace": True},
                                   format="json")
    assert r.json() == {"fabric": "real", "stored": 1, "removed": 1}
    assert list(ScheduledJob.objects.values_list("job_id", flat=True)) == ["9"]


@pytest.mark.parametrize(("job", "message"), [
    ({"id": "a b", "hosts": ["h1"]}, "jobs[1].id"),
    ({"id": "1"}, "jobs[1]: give hosts or port_guids"),
    ({"id": "1", "hosts": "n[1-100000]"}, "names more than 16 hosts"),
    ({"id": "1", "hosts": "n[1-3"}, "'[' is not closed"),
    ({"id": "1", "hosts": ["a", "a"]}, "listed twice"),
    ({"id": "1", "hosts": [5]}, "host names of 1..64 characters"),
    ({"id": "1", "port_guids": ["0xzz"]}, "is not a GUID"),
    ({"id": "1", "hosts": ["a"], "start": "2024-01-01T00:00:00"}, "time zone"),
    ({"id": "1", "hosts": ["a"], "start": 10, "end": 5}, "not after start"),
    ({"id": "1", "hosts": ["a"], "gpus": 8}, "unknown field 'gpus'"),
    ({"id": "1", "hosts": ["a"], "tenant": "x" * 300}, "at most 256"),
])
def test_push_errors_name_the_job_and_field_and_store_nothing(fabric, source, job, message, monkeypatch):
    monkeypatch.setattr(jobs, "host_limit", lambda fabric_id, fabric=None: 16)
    _, raw = JobToken.issue(source, "t")
    r = client_for(token=raw).post("/api/twin/fabrics/real/jobs/", {"jobs": [{"id": "ok", "hosts": ["h"]}, job]},
                                   format="json")
    assert r.status_code == 400 and message in json.dumps(r.json()), r.content
    assert not ScheduledJob.objects.exists()


def test_a_job_id_of_slurm_cannot_be_taken_by_a_push(fabric, source):
    jobs.store_jobs(fabric, [jobs.SchedulerJob("4242", "acme", ("gpu0001",))], JobOrigin.SLURM, replace=True)
    _, raw = JobToken.issue(source, "t")
    r = client_for(token=raw).post("/api/twin/fabrics/real/jobs/", {"jobs": [{"id": "4242", "hosts": ["x"]}]},
                                   format="json")
    assert r.status_code == 409 and "already reported by slurm" in r.json()["jobs"][0]
    with pytest.raises(FabricEngineError):
        jobs.store_jobs(fabric, [jobs.SchedulerJob("4242", "a", ("x",))], JobOrigin.PUSH, replace=False)


# ----------------------------------------------------------------- Slurm polls
def squeue_wrapper(tmp_path: Path, fixture: str) -> Path:
    """A command prefix standing in for ``ssh slurmctl``: it answers ``squeue --json ...`` with a recorded output."""
    wrapper = tmp_path / "at-slurmctl"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = squeue ] && [ "$2" = --json ] && exec cat {SLURM / fixture}\n'
                       'echo "unexpected: $*" >&2; exit 3\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return wrapper


def test_slurm_poll_runs_through_the_collectors_prefix(fabric, tmp_path):
    CollectorConfig.objects.create(fabric=fabric, command_prefix=[str(squeue_wrapper(tmp_path, "squeue-23.02.json"))])
    source = JobSource.objects.create(fabric=fabric, kind=JobSourceKind.SLURM, accounts={"vision": "globex"})
    assert poll_job_source.delay(source.pk).get() == {"stored": 2, "removed": 0}
    rows = {r.job_id: r for r in ScheduledJob.objects.filter(fabric=fabric)}
    assert set(rows) == {"4242", "4243"} and rows["4243"].tenant == "globex" and rows["4242"].tenant == "llm-pretrain"
    assert rows["4242"].user == "alice" and rows["4242"].origin == JobOrigin.SLURM
    source.refresh_from_db()
    assert source.last_poll is not None and source.last_error == ""
    engine_jobs = jobs.engine_jobs(fabric.pk)
    assert [j.job_id for j in engine_jobs] == ["4242", "4243"] and engine_jobs[1].account == "globex"
    # a failing scheduler changes nothing and says why
    source.command = ["squeue", "--yaml"]
    source.save()
    assert "unexpected: squeue --yaml" in poll_job_source.delay(source.pk).get()["error"]
    source.refresh_from_db()
    assert "exit 3" in source.last_error and ScheduledJob.objects.filter(fabric=fabric).count() == 2


def test_drop_directory_and_the_newest_listing(fabric, tmp_path):
    drop = tmp_path / "drop"
    drop.mkdir()
    shutil.copy(SLURM / "squeue-23.11.json", drop / "a-squeue.json")
    source = JobSource.objects.create(fabric=fabric, kind=JobSourceKind.DIRECTORY, drop_dir=str(drop))
    assert jobs.poll(source) == (2, 0)
    (drop / "a-squeue.json").write_text(json.dumps({"jobs": [{"job_id": 1, "job_state": "RUNNING", "nodes": "n1"}]}))
    assert jobs.poll(source) == (1, 2)
    (drop / "b.json").write_text("{broken")
    with pytest.raises(FabricEngineError, match="b.json:1: not JSON"):
        jobs.poll(source)
    source.refresh_from_db()
    assert "b.json:1" in source.last_error and ScheduledJob.objects.get(fabric=fabric).job_id == "1"


def test_job_source_validation(fabric):
    bad = JobSource(fabric=fabric, host_patterns=["{gpu}"])
    with pytest.raises(Exception, match="host pattern"):
        bad.full_clean()
    with pytest.raises(Exception, match="unknown pattern"):
        JobSource(fabric=fabric, patterns={"x": "gossip"}).full_clean()
    with pytest.raises(Exception, match="absolute path"):
        JobSource(fabric=fabric, kind=JobSourceKind.DIRECTORY, drop_dir="rel").full_clean()


# ----------------------------------------------------------------- plan
def test_plan_upload_needs_the_operator_and_names_bad_lines(fabric, tenants):  # noqa: F811
    design = fat_tree(hosts=8, radix=4)
    url = "/api/twin/fabrics/real/plan/"
    viewer = user_in("viewer", "v")
    operator = user_in("operator", "op")
    assert client_for(viewer).post(url, {"text": "a,1,b,1\n"}, format="json").status_code == 403
    assert client_for().post(url, {"text": "a,1,b,1\n"}, format="json").status_code in (401, 403)
    r = client_for(operator).post(url, {"text": "a,1,b,1\nc,x,d,1\n", "filename": "rack.csv"}, format="json")
    assert r.status_code == 400 and "rack.csv:2: port 'x'" in json.dumps(r.json())
    assert not CablingPlan.objects.exists()
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("design.topo", write(design, "ibnetdiscover").encode())
    r = client_for(operator).post(url, {"file": upload}, format="multipart")
    assert r.status_code == 201, r.content
    assert r.json()["plan"]["cables"] == design.num_links
    assert report_cache.config_version(fabric.pk) != "0"
    r = client_for(operator).get(url)
    assert r.json()["plan"]["filename"] == "design.topo" and r.json()["report"] is None


def test_plan_report_operators_see_differences_others_the_counts(fabric, tenants):  # noqa: F811
    acme, _ = tenants
    CablingPlan.objects.create(fabric=fabric, filename="p.csv", text="a,1,b,1\n", cables=1)
    report = {"ok": False, "counts": {"missing": 1}, "summary": "1 missing", "planned_cables": 1,
              "discovered_cables": 0, "issues": [{"kind": "missing", "message": "missing cable gpu0001 port 1 - "
                                                                                 "leaf01 port 1"}]}
    cache.set(f"ibweb:twin:{fabric.pk}:report", {"t": 1.0, "jobs": [], "deviations": [], "alerts": [],
                                                 "plan": report}, 60)
    op = client_for(user_in("operator", "op")).get("/api/twin/fabrics/real/plan/").json()
    assert op["report"]["issues"][0]["message"].startswith("missing cable gpu0001")
    member = client_for(user_in(None, "m", acme)).get("/api/twin/fabrics/real/plan/").json()
    assert member["report"] == {"ok": False, "counts": {"missing": 1}, "summary": "1 missing", "planned_cables": 1,
                                "discovered_cables": 0}


# ----------------------------------------------------------------- who sees what
def fake_report(fabric_id: int) -> None:
    host_a, host_b = "0x00000000000000a1", "0x00000000000000b1"
    jobs_ = [{"id": "1", "tenant": "acme", "observed_gbps": 100.0}, {"id": "2", "tenant": "globex",
                                                                     "observed_gbps": 50.0}]
    devs = [{"kind": "below", "key": "0x1/1", "link": 3, "label": "leaf01 port 5 -> spine01 port 1", "jobs": ["1", "2"],
             "hosts": []},
            {"kind": "unexplained", "key": "0xa1/1", "link": 0, "label": "gpu0001 port 1 -> leaf01 port 1",
             "jobs": ["1"], "hosts": [host_a]},
            {"kind": "below", "key": "0xb1/1", "link": 1, "label": "gpu0005 port 1 -> leaf02 port 1",
             "jobs": ["2"], "hosts": [host_b]}]
    alerts = [{"kind": "twin", "deviation": "below", "key": "0x1/1", "jobs": ["1", "2"], "hosts": [],
               "message": "leaf01 port 5 -> spine01 port 1 carries far less; jobs 1, 2"}]
    cache.set(f"ibweb:twin:{fabric_id}:report", {"t": 5.0, "jobs": jobs_, "problems": [], "deviations": devs,
                                                 "alerts": alerts, "links": 8, "plan": None}, 60)
    cache.set(f"ibweb:twin:{fabric_id}:job-links", {"1": {"links": [0, 3], "nodes": [0], "guids": [host_a]},
                                                    "2": {"links": [1, 3], "nodes": [4], "guids": [host_b]}}, 60)


def test_jobs_deviations_and_events_follow_the_users_view(fabric, tenants):  # noqa: F811
    acme, _ = tenants
    fake_report(fabric.pk)
    ScheduledJob.objects.create(fabric=fabric, job_id="3", origin=JobOrigin.PUSH, tenant="acme", hosts=["gpu9"])
    ScheduledJob.objects.create(fabric=fabric, job_id="4", origin=JobOrigin.PUSH, tenant="globex", hosts=["gpu8"])
    op = client_for(user_in("operator", "op"))
    member = client_for(user_in(None, "m", acme))
    nobody = client_for(user_in(None, "nobody"))

    def get(c, what):
        r = c.get(f"/api/twin/fabrics/real/{what}/")
        assert r.status_code == 200, r.content
        return r.json()

    assert [j["id"] for j in get(op, "jobs")["jobs"]] == ["1", "2"]
    assert [j["job_id"] for j in get(op, "jobs")["not_running"]] == ["3", "4"]
    assert {j["reason"] for j in get(op, "jobs")["not_running"]} == {views.NOT_YET_PLACED}
    mine = get(member, "jobs")
    assert [j["id"] for j in mine["jobs"]] == ["1"] and mine["jobs"][0]["links"] == [0, 3]
    assert [j["job_id"] for j in mine["not_running"]] == ["3"]
    assert get(nobody, "jobs")["jobs"] == [] and get(nobody, "jobs")["not_running"] == []

    assert len(get(op, "expected")["deviations"]) == 3
    seen = get(member, "expected")
    assert [(d["key"], d["jobs"]) for d in seen["deviations"]] == [("0x1/1", ["1"]), ("0xa1/1", ["1"])]
    assert seen["hidden"] == 1 and seen["alerts"][0]["message"].endswith("; jobs 1")
    agg = get(nobody, "expected")
    assert [(d["key"], d["jobs"]) for d in agg["deviations"]] == [("0x1/1", [])]
    assert "jobs" not in agg["alerts"][0]["message"]

    with override_settings(IBWEB_PUBLIC_READ=False):
        for what in ("jobs", "expected", "plan"):
            assert client_for().get(f"/api/twin/fabrics/real/{what}/").status_code == 404
    assert get(op, "expected")["t"] == 5.0
    JobSource.objects.create(fabric=fabric, kind=JobSourceKind.PUSH)
    assert len(op.get("/api/twin/sources/").json()["results"]) == 1
    assert member.get("/api/twin/sources/").json()["results"] == []  # commands and patterns: operators only


def test_plan_page_upload_and_report(fabric, tenants):  # noqa: F811
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    acme, _ = tenants
    operator, member = Client(), Client()
    operator.force_login(user_in("operator", "op"))
    member.force_login(user_in(None, "m", acme))
    page = operator.get("/fabrics/real/plan/")
    assert page.status_code == 200 and b"No cabling plan uploaded" in page.content and b"Upload a plan" in page.content
    assert b'href="/fabrics/real/plan/"' in page.content  # the fabric's navigation links the page
    bad = operator.post("/fabrics/real/plan/", {"file": SimpleUploadedFile("rack.csv", b"a,1,b,1\na,1,c,1\n")})
    assert bad.status_code == 400 and b"rack.csv:2: a port 1 is already cabled on line 1" in bad.content
    ok = operator.post("/fabrics/real/plan/", {"file": SimpleUploadedFile("rack.csv", b"leaf01,1,gpu0001,1\n")})
    assert ok.status_code == 302 and CablingPlan.objects.get(fabric=fabric).cables == 1
    assert member.post("/fabrics/real/plan/", {"file": SimpleUploadedFile("x.csv", b"a,1,b,1\n")}).status_code == 403
    cache.set(f"ibweb:twin:{fabric.pk}:report", {"plan": {
        "ok": False, "counts": {"missing": 1, "miswired": 0, "extra": 0, "wrong_speed": 0, "wrong_width": 0},
        "summary": "1 missing", "planned_cables": 1, "discovered_cables": 0, "unknown_nodes": [],
        "issues": [{"kind": "missing", "line": 1, "planned": "leaf01 port 1 - gpu0001 port 1",
                    "message": "missing cable leaf01 port 1 - gpu0001 port 1"}], "truncated": False}}, 60)
    full = operator.get("/fabrics/real/plan/").content.decode()
    assert "1 missing" in full and "leaf01 port 1 - gpu0001 port 1" in full and "not cabled" in full
    counts = member.get("/fabrics/real/plan/").content.decode()
    assert "1 missing" in counts and "gpu0001" not in counts and "Upload a plan" not in counts
    with override_settings(IBWEB_PUBLIC_READ=False):
        assert Client().get("/fabrics/real/plan/").status_code == 302  # to the login page


def test_a_job_not_counted_as_running_says_why(fabric, tenants):  # noqa: F811
    fake_report(fabric.pk)
    key = f"ibweb:twin:{fabric.pk}:report"
    ended = "job 3: not counted as running: its end time 2024-12-03 11:00 UTC has passed"
    cache.set(key, {**cache.get(key), "problems": [{"job": "3", "reason": "ended", "message": ended}]}, 60)
    ScheduledJob.objects.create(fabric=fabric, job_id="3", origin=JobOrigin.PUSH, tenant="acme", hosts=["gpu9"])
    r = client_for(user_in("operator", "op")).get("/api/twin/fabrics/real/jobs/")
    assert r.status_code == 200, r.content
    assert [(j["job_id"], j["reason"]) for j in r.json()["not_running"]] == [("3", ended)]
