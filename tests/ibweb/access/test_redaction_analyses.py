"""Analyses of a telemetry-fed fabric as each view sees them (issue 14).

Their jobs are the twin's (the runtime record's catalog), not the fabric's scenario, and
the fabric's inventory may be gone: redaction decides by each row's tenant, and without
an inventory hides every cable end (fail-closed).
"""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import numpy as np
import pytest
from django.test import override_settings

from fabric_engine.analysis import whatif_report
from fabric_engine.routing import route
from fabric_engine.scenario import build_fabric
from fabric_engine.workload.job import Job
from ibweb.access import HIDDEN_NODE
from ibweb.fabrics.models import Analysis, Fabric
from tests.support.tenancy_fixtures import SPEC, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
TINY = build_fabric(SPEC["topology"])
HOSTS = [str(TINY.node_name[h]) for h in TINY.hosts]


@pytest.fixture
def lab_analysis(db):
    """A what-if of a telemetry fabric whose record is gone: its jobs the twin's (not in the spec), a host cable cut."""
    lab = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry", spec={})
    jobs = [Job("acme-train", "acme", TINY.hosts[:4], buffer_bytes=1e9),
            Job("globex-eval", "globex", TINY.hosts[4:], buffer_bytes=1e9)]
    host_cable = int(np.flatnonzero(TINY.kind[TINY.a_node] != TINY.kind[TINY.b_node])[0])
    result = whatif_report(route(TINY), jobs, failed_cables=[host_cable])
    host = next(e for e in (result["failed"][0]["a"], result["failed"][0]["b"]) if e.split("/")[0] in HOSTS)
    return Analysis.objects.create(fabric=lab, kind="whatif_links", status="done", result=result,
                                   params={"failed_cables": [host_cable]},
                                   error=f"partly failed: {host} did not answer"), host.split("/")[0]


def get(client, analysis) -> dict:
    r = client.get(f"/api/fabrics/fabrics/lab/analyses/{analysis.pk}/")
    assert r.status_code == 200, r.content
    return r.json()


def job_ids(body: dict) -> set[str]:
    res = body["result"]
    return {j["id"] for j in res["baseline"]["jobs"]} | {d["id"] for d in res["delta"]}


@override_settings(IBWEB_PUBLIC_READ=True)
def test_without_an_inventory_anonymous_visitors_read_no_host_name(client, lab_analysis):
    analysis, host = lab_analysis
    body = get(client, analysis)
    assert host not in str(body)
    assert {body["result"]["failed"][0]["a"], body["result"]["failed"][0]["b"]} == {HIDDEN_NODE}
    assert job_ids(body) == set()


def test_a_tenant_user_sees_their_twin_jobs_and_no_host_name_without_an_inventory(client, lab_analysis, tenants):
    analysis, host = lab_analysis
    client.force_login(user_in(None, "ann", tenants[0]))
    body = get(client, analysis)
    assert host not in str(body)
    assert job_ids(body) == {"acme-train"}
    assert "globex" not in str(body)


def test_operators_see_every_job_and_name(client, lab_analysis):
    analysis, host = lab_analysis
    client.force_login(user_in("operator", "olga"))
    body = get(client, analysis)
    assert host in str(body) and job_ids(body) == {"acme-train", "globex-eval"}
