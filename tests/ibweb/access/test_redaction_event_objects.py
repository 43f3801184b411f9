"""Stored events are rendered from the objects they name, for each view (issue 26, item 6).

A telemetry-fed fabric shared by acme (hosts gpu0001-0004) and globex (gpu0005-0008) raises,
through the engine's own code and the runner's signal receiver, a ``counter_reset`` (it names
link indices and ports, no host field), a ``link_down`` condition, a twin deviation naming a
globex host only by GUID with both tenants' jobs, one naming it by label, and a job alert of
each tenant; an operator comments on every event, naming hosts, jobs and tenants (free text:
only operators read it). Every page and API answer of the events is read by every role: none
may show a host name or GUID, job or tenant the role may not see, and the page, the API and
the live feed name hidden hosts alike.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from fabric_engine.scenario import build_fabric
from fabric_engine.telemetry import CounterSamples
from fabric_engine.telemetry.conditions import cabling_conditions
from fabric_engine.telemetry.observe import observe
from fabric_engine.twin.persistence import alert_of
from ibweb.access import alert_renderer, view_of
from ibweb.events.models import Event, EventComment
from ibweb.events.receivers import record_alerts
from ibweb.events.recorder import _RECORDERS
from ibweb.events.visibility import redact
from ibweb.fabrics.models import Fabric
from ibweb.live.feed.view import feed_view
from ibweb.runtime import record
from ibweb.tenancy.models import Partition, PartitionMember, Tenant
from tests.support.access_fixtures import role_permissions

pytestmark = pytest.mark.django_db

F = build_fabric({"generator": "fat_tree", "hosts": 16, "radix": 8, "name": "lab"})
HOSTS = [int(h) for h in F.hosts]
OWN = {"acme": HOSTS[0:4], "globex": HOSTS[4:8]}
JOBS = {"acme": "acme-train-101", "globex": "globex-secret-202"}
NAMES = {"acme": "Acme Corp", "globex": "Globex Inc"}
T0 = 1_780_000_000.0


def _guid(n: int) -> str:
    return f"0x{int(F.guid[n]):016x}"


def _reset_alert() -> dict:
    """The engine's ``counter_reset`` for the uplinks of gpu0004 (acme) and gpu0006-0008 (globex)."""
    ends = [OWN["acme"][3], *OWN["globex"][1:]]

    def sweep(t: float, words: int) -> CounterSamples:
        return CounterSamples.from_records([{"lid": int(F.lid[h]), "port": 1, "t": t, "extended": True,
                                             "counters": {"PortXmitData": words}} for h in ends])

    state = observe(F, sweep(T0, 10**9), sweep(T0 + 10.0, 1000), seq=2, t=T0 + 10.0, tick_s=10.0,
                    now=T0 + 10.0).state
    [alert] = [a for a in state.alerts if a["kind"] == "counter_reset"]
    assert "host" not in str(sorted(alert)) and str(F.node_name[ends[1]]) in alert["message"]
    return alert


def _alerts() -> list[dict]:
    g = OWN["globex"][0]
    cable = int(F.out_link(g, 1)) % F.num_links
    [down] = cabling_conditions(F, F.without_links([cable]))
    up = int(F.out_link(g, 1))
    by_guid = alert_of({"kind": "below", "key": f"{_guid(g)}/1", "link": up, "hosts": [_guid(g)],
                        "jobs": [JOBS["acme"], JOBS["globex"]], "expected_gbps": 80.0, "observed_gbps": 0.0})
    labelled = alert_of({"kind": "above", "key": f"{_guid(OWN['globex'][1])}/1", "link": -1,
                         "label": f"{F.node_name[OWN['globex'][1]]} port 1", "hosts": [_guid(OWN["globex"][1])],
                         "jobs": [JOBS["globex"]], "expected_gbps": 10.0, "observed_gbps": 90.0})
    jobs = [{"kind": "isolation", "job": JOBS[t], "partition": f"{t}-jobs", "reason": "not-in-partition",
             "flows": 2} for t in ("acme", "globex")]
    return [_reset_alert(), down, by_guid, labelled, *jobs]


@pytest.fixture
def lab():
    """The fabric, its record (topology and job catalog), the tenants' partitions, the events and comments."""
    row = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry")
    catalog = [{"id": JOBS[t], "tenant": t, "hosts": OWN[t], "links": []} for t in ("acme", "globex")]
    record.publish(row.pk, record.row_identity(row), F, None, catalog)
    tenants = {}
    for i, t in enumerate(("acme", "globex")):
        tenants[t] = Tenant.objects.create(slug=t, name=NAMES[t])
        p = Partition.objects.create(fabric=row, tenant=tenants[t], name=f"{t}-jobs", pkey=0x0A11 + i)
        for h in OWN[t]:
            PartitionMember.objects.create(partition=p, guid=f"0x{int(F.port_guid[F.port_offset[h]]):016x}",
                                           membership="full")
    _RECORDERS.pop(row.pk, None)  # this process's recorder of an earlier test's fabric of the same key
    record_alerts(None, fabric_id=row.pk, seq=2, t=T0 + 10.0, raised=_alerts(), cleared=[], first=True)
    g = str(F.node_name[OWN["globex"][0]])
    for event in Event.objects.filter(fabric=row):
        EventComment.objects.create(event=event, username="olga",
                                    text=f"{g} of Globex Inc ({JOBS['globex']}) and {F.node_name[OWN['acme'][0]]}"
                                         f" looked at")
    yield row, tenants
    record.forget(row.pk)
    _RECORDERS.pop(row.pk, None)


def _user(name: str, group: str | None, tenant: Tenant | None = None) -> User:
    user = User.objects.create_user(name, password=f"pw-{name}-0123")
    if group:
        user.user_permissions.add(*role_permissions(group))
    if tenant is not None:
        tenant.users.add(user)
    return user


def _words(hosts, tenants) -> list[re.Pattern]:
    words = []
    for h in hosts:
        words += [str(F.node_name[h]), f"{int(F.guid[h]):016x}"]
    for t in tenants:
        words += [t, NAMES[t], JOBS[t]]
    return [re.compile(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])", re.IGNORECASE) for w in words]


def _bodies(client: Client) -> dict[str, str]:
    """Every events page and API answer of the fabric, as text."""
    urls = ["/fabrics/lab/events/", "/fabrics/lab/events/?q=host", "/fabrics/lab/events/?state=active",
            "/api/fabrics/fabrics/lab/events/", "/api/fabrics/fabrics/lab/events/?q=port",
            "/api/fabrics/fabrics/lab/events/summary/", "/api/fabrics/fabrics/lab/events/?tenant=none"]
    urls += [f"/api/fabrics/fabrics/lab/events/{pk}/" for pk in Event.objects.values_list("pk", flat=True)]
    out = {}
    for url in urls:
        r = client.get(url)
        assert r.status_code in (200, 404), (url, r.status_code)
        out[url] = r.content.decode()
    return out


ROLES = {  # role -> (group, tenant, hosts it may see, tenants whose jobs and names it may see)
    "anonymous": (None, None, [], []),
    "viewer": ("viewer", None, [], []),
    "acme-user": ("viewer", "acme", OWN["acme"], ["acme"]),
    "globex-user": ("viewer", "globex", OWN["globex"], ["globex"]),
}


@override_settings(IBWEB_PUBLIC_READ=True)
@pytest.mark.parametrize("role", sorted(ROLES))
def test_no_view_reads_a_host_job_or_tenant_it_may_not_see(lab, role):
    row, tenants = lab
    group, tenant, hosts, mine = ROLES[role]
    client = Client()
    if role != "anonymous":
        client.force_login(_user(role, group, tenants.get(tenant)))
    forbidden = _words(sorted(set(HOSTS) - set(hosts)), sorted({"acme", "globex"} - set(mine)))
    bodies = _bodies(client)
    found = {url: sorted({m.group(0) for p in forbidden for m in [p.search(text)] if m})
             for url, text in bodies.items()}
    assert not {url: f for url, f in found.items() if f}, found
    listed = client.get("/api/fabrics/fabrics/lab/events/?limit=100").json()["results"]
    kinds = {e["kind"] for e in listed}
    assert {"counter_reset", "link_down", "twin"} <= kinds  # the fabric-wide events are shown, relabelled
    reset = next(e for e in listed if e["kind"] == "counter_reset")
    ends = [OWN["acme"][3], *OWN["globex"][1:]]
    assert all((str(F.node_name[h]) if h in hosts else f"host-{h}") + " port 1" in reset["message"] for h in ends[:3])
    assert {e["tenant"] for e in listed} == {None, *mine}
    for e in listed:  # operators' notes are free text: theirs alone
        assert client.get(f"/api/fabrics/fabrics/lab/events/{e['id']}/").json()["comments"] == []
        assert e["comments"] == 0
    assert "operators' notes" in bodies["/fabrics/lab/events/"] and "looked at" not in bodies["/fabrics/lab/events/"]


def test_operators_read_every_name_and_comment(lab):
    client = Client()
    client.force_login(_user("olga", "operator"))
    text = "".join(_bodies(client).values())
    words = [str(F.node_name[h]) for h in OWN["acme"][3:] + OWN["globex"][:3]] + [*JOBS.values(), *NAMES.values()]
    assert [w for w in words if w not in text] == []
    twin = next(e for e in Event.objects.filter(kind="twin", tenant__isnull=True))
    body = client.get(f"/api/fabrics/fabrics/lab/events/{twin.pk}/").json()
    assert body["message"].endswith(f"; jobs {JOBS['acme']}, {JOBS['globex']}") and len(body["comments"]) == 1


def test_events_store_the_hosts_and_jobs_they_name(lab):
    reset = Event.objects.get(kind="counter_reset")
    named = {e[1] for e in reset.hosts}
    assert {str(F.node_name[h]) for h in [OWN["acme"][3], *OWN["globex"][1:]]} <= named and reset.resolved
    twin = Event.objects.get(kind="twin", tenant__isnull=True)
    assert [e[:2] for e in twin.hosts] == [[OWN["globex"][0], str(F.node_name[OWN["globex"][0]])]]
    assert twin.jobs == [[JOBS["acme"], "acme"], [JOBS["globex"], "globex"]] and "; jobs" not in twin.message
    assert Event.objects.get(kind="twin", tenant__isnull=False).tenant.slug == "globex"


def test_acme_reads_its_job_of_a_shared_twin_deviation_only(lab, client):
    row, tenants = lab
    client.force_login(_user("ann", "viewer", tenants["acme"]))
    twin = Event.objects.get(kind="twin", tenant__isnull=True)
    body = client.get(f"/api/fabrics/fabrics/lab/events/{twin.pk}/").json()
    assert body["message"].endswith(f"; jobs {JOBS['acme']}")
    assert body["message"].startswith(f"host-{OWN['globex'][0]}/1 ")  # its key: GUID relabelled


@pytest.mark.parametrize("key", ["fabric", "acme"])
def test_the_page_the_api_and_the_feed_name_hidden_hosts_alike(lab, key):
    row, tenants = lab
    view_key = "fabric" if key == "fabric" else f"t-{tenants['acme'].pk}"
    user = None if key == "fabric" else _user("ann", "viewer", tenants["acme"])
    with override_settings(IBWEB_PUBLIC_READ=True):
        view = view_of(user)
    assert view.key == view_key
    feed = feed_view(view_key, row, F)
    hidden = alert_renderer(view, row)
    alert = _reset_alert()
    event = Event.objects.get(kind="counter_reset")
    assert redact(event, hidden)["message"] == feed.alert(alert)["message"]
    assert np.count_nonzero(feed.hidden) == len(HOSTS) - (0 if key == "fabric" else 4)


def test_events_recorded_without_a_topology_are_relabelled_or_withheld(lab):
    row, tenants = lab
    alert = _reset_alert()
    Event.objects.all().delete()
    from ibweb.events.recorder import EventRecorder

    EventRecorder(row.pk).apply([alert], [], seq=3, t=T0 + 20.0, first=True, fabric=None)
    event = Event.objects.get()
    assert not event.resolved and event.hosts == []
    with override_settings(IBWEB_PUBLIC_READ=True):
        shown = redact(event, alert_renderer(view_of(None), row))["message"]
    assert "gpu" not in shown and f"host-{OWN['globex'][1]}" in shown
    record.forget(row.pk)  # no topology known any more: nothing of the text is shown
    with override_settings(IBWEB_PUBLIC_READ=True):
        shown = redact(event, alert_renderer(view_of(None), row))["message"]
    assert shown.startswith("counter reset: details hidden") and "gpu" not in shown
