"""A tenant's channel receives only what its users may see, rendered by the one alert renderer for its view: never
another tenant's host, job or tenant name (issue 39, part 4); the operators' channel gets everything."""

from __future__ import annotations

import json

import pytest

from fabric_engine.scenario import build_emulator
from tests.support.access_fixtures import build, identifiers, leaks, run_engine

from .helpers import Ticks, channel, rule

pytestmark = pytest.mark.django_db(transaction=True)


def test_tenant_channel_never_receives_another_tenants_names(webhook_receiver):
    shared = build()
    run_engine(shared.fabric)
    f = build_emulator(shared.fabric.scenario()).fabric
    g, a = shared.hosts["globex"][0], shared.hosts["acme"][0]
    gname, aname = str(f.node_name[g]), str(f.node_name[a])
    ops = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/ops")})
    acme = channel("webhook", {"url": webhook_receiver.url.replace("/hook", "/acme")}, name="acme",
                   tenant=shared.tenants["acme"])
    rule(ops)
    rule(acme, tenant=shared.tenants["acme"])  # no matcher: everything its view allows
    ticks = Ticks(shared.fabric, topology=f, jobs=[{"id": "acme-train", "tenant": "acme"},
                                                   {"id": "globex-secret", "tenant": "globex"}])
    raised = [{"kind": "link_down", "severity": "critical", "port": f"{name} port 1",
               "message": f"{name} port 1 is down"} for name in (gname, aname)]
    raised += [{"kind": "isolation", "job": job, "partition": None, "reason": "not-member", "flows": 3}
               for job in ("globex-secret", "acme-train")]
    raised.append({"kind": "link_down_long", "severity": "critical", "port": f"{gname} port 2",
                   "message": f"{gname} port 2 down for 9 s; jobs acme-train, globex-secret",
                   "jobs": ["acme-train", "globex-secret"], "t": ticks.t})
    ticks.tick(raised)
    ticks.tick([], raised[:1])

    def texts(path: str) -> str:
        return "\n".join(r.body.decode() for r in webhook_receiver.received if r.path == path)

    acme_text, ops_text = texts("/acme"), texts("/ops")
    assert acme_text and ops_text
    assert not leaks(acme_text, identifiers(shared, "globex")), leaks(acme_text, identifiers(shared, "globex"))
    assert "acme-train" in acme_text and aname in acme_text
    assert f"host-{g}" in acme_text  # the globex host it may not name, as the events page reads it
    notices = [n for r in webhook_receiver.received if r.path == "/acme" for n in json.loads(r.body)["notices"]]
    assert {n["labels"].get("tenant") for n in notices} <= {"acme", None}
    assert any(n["state"] == "resolved" for n in notices)  # the clear of a host it may not name: still no name
    # the operators' channel reads everything as raised
    assert leaks(ops_text, identifiers(shared, "globex")) and gname in ops_text and "globex-secret" in ops_text
