"""Events and alerts kept in the database: dedup, clear and reopen, retention, the tenant rules, API and page
(issue 18)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import override_settings

from fabric_engine.scenario import build_fabric
from ibweb.events.facts import fact_of
from ibweb.events.models import Event
from ibweb.events.recorder import EventRecorder, prune
from ibweb.tenancy.inventory import fabric_inventory
from ibweb.tenancy.models import PartitionMember
from tests.ibweb.access.test_message_redaction import telemetry_world  # noqa: F401
from tests.support.tenancy_fixtures import SPEC, fabric, host_guid, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
TINY = build_fabric(SPEC["topology"])
HOSTS = [str(TINY.node_name[h]) for h in TINY.hosts]


def port_alert(host: str, rate: float = 60.0) -> dict:
    return {"kind": "errors", "severity": "warning", "counter": "SymbolErrorCounter", "link": 0,
            "port": f"{host} port 1", "rate_per_min": rate,
            "message": f"{host} port 1: SymbolErrorCounter at {rate}/min"}


ISOLATED = {"kind": "isolation", "job": "train", "partition": "acme", "reason": "not-in-partition", "flows": 4}
JOBS = [{"id": "train", "tenant": "acme"}, {"id": "eval", "tenant": "globex"}]


def test_facts_name_kind_severity_subject_and_the_hosts_they_mention():
    f = fact_of(port_alert(HOSTS[0]), {}, lambda n: (7, 0xAB) if n == HOSTS[0] else None)
    assert (f.kind, f.severity, f.object_type, f.link, f.node) == ("errors", "warning", "port", 0, HOSTS[0])
    assert f.hosts == [[7, HOSTS[0], "0x00000000000000ab"]]
    assert f.key == f"errors|port={HOSTS[0]} port 1|counter=SymbolErrorCounter|link=0"
    j = fact_of(ISOLATED, {"train": "acme"})
    assert (j.severity, j.object_type, j.tenant, j.job) == ("critical", "job", "acme", "train")
    assert "4 flows blocked in partition acme (not in partition)" in j.message
    assert fact_of({"kind": "stale", "count": 3}).severity == "warning"
    assert fact_of({"kind": "x", "severity": "error"}).severity == "critical"
    moved = {**port_alert(HOSTS[0], rate=600.0), "message": "changed"}
    assert fact_of(moved).key == f.key, "the same subject is the same event, whatever its numbers say"


def test_an_alert_naming_one_job_is_its_tenants_unless_it_lists_the_jobs_a_down_hit():
    """A twin deviation on a link that one job crosses is that job's event; a long link down of a port lists the
    one job it hit but stays the fabric's, so every view that may see the port sees the event (issue 37)."""
    deviation = {"kind": "twin_deviation", "link": 4, "port": "leaf01 port 3", "b": "spine01 port 1",
                 "jobs": ["train"], "message": "leaf01 port 3: unexplained traffic; jobs train"}
    d = fact_of(deviation, {"train": "acme"})
    assert (d.object_type, d.job, d.tenant, d.jobs) == ("job", "train", "acme", [["train", "acme"]])
    down = {"kind": "link_down_long", "severity": "critical", "port": "leaf01 port 3", "jobs": ["train"],
            "message": "leaf01 port 3: link down longer than the job-killing time 7 s (9 .. 11 s); jobs train"}
    p = fact_of(down, {"train": "acme"})
    assert (p.object_type, p.object_id, p.job, p.tenant) == ("port", "leaf01 port 3", "", None)
    assert p.jobs == [["train", "acme"]] and not p.message.endswith("train")


def at(seconds: float) -> float:
    return (T0 + timedelta(seconds=seconds)).timestamp()


def test_an_alert_raised_for_many_ticks_is_one_event_with_first_last_and_count(fabric):
    rec = EventRecorder(fabric.pk)
    alert = port_alert(HOSTS[0])
    rec.apply([alert], [], seq=10, t=at(0), first=True, fabric=TINY)
    rec.apply([], [alert], seq=15, t=at(5), fabric=TINY)  # raised by ticks 10..14
    event = Event.objects.get()
    assert (event.count, event.first_seen, event.last_seen, event.active) == (5, T0, T0 + timedelta(seconds=5), False)
    assert event.cleared_at == T0 + timedelta(seconds=5)
    assert event.hosts == [[int(TINY.hosts[0]), HOSTS[0], f"0x{int(TINY.guid[TINY.hosts[0]]):016x}"]]
    # back within a minute: the same event reopens (a flapping port stays one row)
    rec.apply([alert], [], seq=40, t=at(30))
    event.refresh_from_db()
    assert event.active and event.cleared_at is None and Event.objects.count() == 1
    assert event.ticks(T0 + timedelta(seconds=32), 1.0) == 5 + 3
    rec.apply([], [alert], seq=42, t=at(32))
    event.refresh_from_db()
    assert event.count == 7 and not event.active
    # closed for longer: a new occurrence, numbered
    rec.apply([alert], [], seq=300, t=at(300))
    assert Event.objects.count() == 2 and Event.objects.filter(active=True).count() == 1
    assert list(Event.objects.order_by("first_seen").values_list("occurrence", flat=True)) == [1, 2]
    rec.apply([], [alert], seq=301, t=at(301))
    rec.apply([alert], [], seq=600, t=at(600))
    assert Event.objects.get(active=True).occurrence == 3


def test_a_new_runner_continues_what_it_raises_again_and_closes_the_rest(fabric):
    a, b = port_alert(HOSTS[0]), port_alert(HOSTS[1])
    EventRecorder(fabric.pk).apply([a, b], [], seq=1, t=at(0), first=True, fabric=TINY)
    # another process (a new leader) starts: its first tick raises only a
    EventRecorder(fabric.pk).apply([a], [], seq=50, t=at(50), first=True, fabric=TINY)
    assert Event.objects.count() == 2
    still = Event.objects.get(active=True)
    assert still.node == HOSTS[0] and still.first_seen == T0
    over = Event.objects.get(active=False)
    assert over.node == HOSTS[1] and over.count == 50  # ticks of 1 s from 0 to 50 (wall time)


def test_job_alerts_belong_to_the_job_tenant(fabric, tenants):
    EventRecorder(fabric.pk).apply([ISOLATED], [], seq=1, t=at(0), fabric=TINY, jobs=JOBS)
    event = Event.objects.get()
    assert event.tenant.slug == "acme" and event.severity == "critical" and event.rank == 2


def test_retention_deletes_old_cleared_events_and_caps_each_fabric(fabric):
    old = T0 - timedelta(days=40)
    Event.objects.create(fabric=fabric, key="a", kind="stale", message="old", first_seen=old, last_seen=old,
                         active=False)
    Event.objects.create(fabric=fabric, key="b", kind="stale", message="old but active", first_seen=old,
                         last_seen=old)
    for k in range(5):
        Event.objects.create(fabric=fabric, key=f"c{k}", kind="stale", message="recent", active=False,
                             first_seen=T0 - timedelta(minutes=k), last_seen=T0 - timedelta(minutes=k))
    assert prune(T0, days=30, max_rows=3) == 1 + 3
    assert sorted(Event.objects.values_list("key", flat=True)) == ["b", "c0", "c1"]


@pytest.fixture
def events(fabric, partitions):
    fabric_inventory(fabric)  # published, as the fabric's engine does: reads never build it
    rec = EventRecorder(fabric.pk)
    rec.apply([ISOLATED, {**ISOLATED, "job": "eval", "partition": "globex"}, port_alert(HOSTS[0]),
               port_alert(HOSTS[4])], [], seq=1, t=at(0), first=True, fabric=TINY, jobs=JOBS)
    return {e.job or e.node: e for e in Event.objects.all()}


def api(client, path="", **params):
    return client.get(f"/api/fabrics/fabrics/tiny/events/{path}", params)


def test_tenant_users_see_their_events_and_fabric_wide_ones_without_other_tenants_hosts(client, events, tenants):
    acme, _ = tenants
    client.force_login(user_in(None, "ann", acme))  # acme's partition holds hosts 0 and 1
    body = api(client).json()
    assert {e["job"] or e["node"] for e in body["results"]} == {"train", HOSTS[0], f"host-{int(TINY.hosts[4])}"}
    text = str(body)
    assert "eval" not in text and "globex" not in text and HOSTS[4] not in text and "details" not in text
    assert api(client, f"{events['eval'].pk}/").status_code == 404


@override_settings(IBWEB_PUBLIC_READ=True)
def test_anonymous_visitors_see_fabric_wide_events_with_every_host_hidden(client, events):
    body = api(client).json()
    assert {e["kind"] for e in body["results"]} == {"errors"}
    assert not any(h in str(body) for h in HOSTS) and "train" not in str(body)


@override_settings(IBWEB_PUBLIC_READ=False)
def test_nobody_sees_events_without_a_view(client, events):
    assert api(client).status_code in (401, 403)
    assert client.get("/fabrics/tiny/events/").status_code == 302


def test_operators_see_everything_and_filter(client, events):
    client.force_login(user_in("operator", "op"))
    assert api(client).json()["count"] == 4
    assert {e["job"] for e in api(client, severity="critical").json()["results"]} == {"train", "eval"}
    assert api(client, tenant="globex").json()["results"][0]["job"] == "eval"
    assert api(client, tenant="none").json()["count"] == 2
    assert api(client, kind="errors", q=HOSTS[4]).json()["count"] == 1
    assert api(client, state="cleared").json()["count"] == 0
    assert api(client, since="1h").json()["count"] == 0  # T0 is long ago
    assert api(client, since="2026-05-01T11:59Z", until="2026-05-01T12:01Z").json()["count"] == 4
    bad = api(client, since="yesterday-ish")
    assert bad.status_code == 400 and "since" in bad.json()
    assert api(client, severity="fatal").status_code == 400
    summary = api(client, "summary/").json()
    assert summary["active"] == {"critical": 2, "warning": 2, "info": 0} and summary["unacknowledged"] == 4
    train = api(client, f"{events['train'].pk}/").json()
    assert train["map_url"] == "/fabrics/tiny/?focus=job:train" and train["details"]["reason"] == "not-in-partition"
    assert api(client, f"{events[HOSTS[0]].pk}/").json()["map_url"] == "/fabrics/tiny/?focus=link:0"


def test_acknowledge_and_comment_need_their_permissions(client, events, tenants):
    acme, _ = tenants
    pk = events["train"].pk
    url = f"/api/fabrics/fabrics/tiny/events/{pk}/"
    client.force_login(user_in("viewer", "vic"))
    assert client.post(url + "acknowledge/", {}, content_type="application/json").status_code == 404, "not theirs"
    wide = f"/api/fabrics/fabrics/tiny/events/{events[HOSTS[0]].pk}/acknowledge/"
    assert client.post(wide, {}, content_type="application/json").status_code == 403
    client.force_login(user_in(None, "ann", acme))
    assert client.post(url + "comments/", {"text": "hi"}, content_type="application/json").status_code == 403
    client.force_login(user_in("operator", "op"))
    answer = client.post(url + "acknowledge/", {"comment": "paged the owner"}, content_type="application/json")
    assert answer.status_code == 200
    body = answer.json()
    assert body["acknowledged"] and body["acknowledged_by"] == "op" and body["comments"][0]["text"] == "paged the owner"
    assert client.post(url + "comments/", {"text": ""}, content_type="application/json").status_code == 400
    assert client.post(url + "comments/", {"text": "fixed"}, content_type="application/json").status_code == 201
    assert api(client, state="unacknowledged").json()["count"] == 3
    again = client.post(url + "acknowledge/", {"acknowledged": False}, content_type="application/json").json()
    assert not again["acknowledged"] and len(again["comments"]) == 2


def test_events_page_filters_acknowledges_and_comments(client, events):
    client.force_login(user_in("operator", "op"))
    page = client.get("/fabrics/tiny/events/", {"severity": ["critical"]})
    body = page.content.decode()
    assert page.status_code == 200 and "2 events" in body and "not in partition" in body
    assert page.context["kinds"] == ["errors", "isolation"], "each kind once in the filter"
    assert 'href="/fabrics/tiny/?focus=job:train"' in body
    pk = events["train"].pk
    back = "/fabrics/tiny/events/?severity=critical"
    answer = client.post(f"/fabrics/tiny/events/{pk}/acknowledge/", {"next": back})
    assert answer.status_code == 302 and answer.url == f"{back}#event-{pk}"
    assert Event.objects.get(pk=pk).acknowledged_by.username == "op"
    client.post(f"/fabrics/tiny/events/{pk}/comment/", {"text": "drained the node", "next": "https://evil.example/"})
    assert Event.objects.get(pk=pk).comments.get().text == "drained the node"
    assert "drained the node" in client.get("/fabrics/tiny/events/").content.decode()
    bad = client.get("/fabrics/tiny/events/", {"since": "soon"})
    assert bad.status_code == 200 and "is neither a date-time" in bad.content.decode()


def test_tenant_user_page_and_writes_stay_within_their_view(client, events, tenants):
    acme, _ = tenants
    user = user_in(None, "ann", acme)
    user.user_permissions.add(Permission.objects.get(codename="change_event"))
    client.force_login(user)
    body = client.get("/fabrics/tiny/events/").content.decode()
    assert "train" in body and "eval" not in body and HOSTS[4] not in body and "Globex" not in body
    assert client.post(f"/fabrics/tiny/events/{events['eval'].pk}/acknowledge/").status_code == 404
    assert client.post(f"/fabrics/tiny/events/{events['train'].pk}/acknowledge/").status_code == 302


def test_member_changes_widen_what_a_tenant_user_sees(client, events, tenants, partitions):
    acme, _ = tenants
    client.force_login(user_in(None, "ann", acme))
    assert HOSTS[4] not in str(api(client).json())
    PartitionMember.objects.create(partition=partitions[0], guid=host_guid(4))
    assert HOSTS[4] in str(api(client).json())


def test_prune_events_command(fabric):
    from django.core.management import call_command

    old = datetime.now(tz=UTC) - timedelta(days=90)
    Event.objects.create(fabric=fabric, key="a", kind="stale", message="old", first_seen=old, last_seen=old,
                         active=False)
    call_command("prune_events", "--days", "30")
    assert not Event.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_runner_alerts_become_events_and_close_when_the_policy_is_fixed(tenants):
    """The runner's fabric_alerts signal, end to end: an isolated job opens an event, fixing the partition closes it."""
    import asyncio

    from ibweb.fabrics.models import Fabric
    from ibweb.live.engine.runner import FabricRunner
    from ibweb.tenancy import services
    from ibweb.tenancy.models import Partition

    acme, _ = tenants
    row = Fabric.objects.create(name="Iso", slug="iso", spec={**SPEC, "jobs": [
        {"name": "train", "tenant": "acme", "hosts": 4, "placement": "packed", "buffer_gb": 1, "compute_s": 0.1}]})
    part = Partition.objects.create(fabric=row, tenant=acme, name="acme", pkey=0x0011)
    services.add_members(part, [(host_guid(0), "full"), (host_guid(1), "full")])  # train also runs on hosts 2, 3

    async def run(ticks: int) -> FabricRunner:
        runner = FabricRunner(row)
        await runner.start()
        for _ in range(ticks):
            await runner.tick()
        await asyncio.gather(*runner.pending())  # the signal's receivers run in worker threads
        return runner

    asyncio.run(run(3))
    event = Event.objects.get(kind="isolation")
    assert event.active and event.job == "train" and event.tenant == acme and event.severity == "critical"
    services.add_members(part, [(host_guid(2), "full"), (host_guid(3), "full")])

    async def fixed() -> None:
        runner = await run(0)
        for _ in range(3):
            await runner.tick()
        await asyncio.gather(*runner.pending())

    asyncio.run(fixed())
    event.refresh_from_db()
    assert not event.active and event.cleared_at is not None and event.cleared_at >= event.first_seen
    # ticks from wall time (these ran back to back, not a second apart): at least the one that raised it
    assert event.count == max(1, round((event.cleared_at - event.first_seen).total_seconds() / row.tick_s))
    assert Event.objects.filter(kind="isolation").count() == 1


def test_routing_events_are_each_their_own_occurrence_for_the_runner_and_the_store():
    """Two routing events with the same action (re-routed after a host vanished, then after it came back), or the same
    message made at another time, are two alerts to the runner and two events to the store; one event is one."""
    from ibweb.events.facts import alert_key
    from ibweb.live.engine.alerts import alert_key as _alert_key

    base = {"kind": "routing", "action": "rerouted", "severity": "info", "source": "computed", "engine": "minhop"}
    gone = {**base, "message": "re-routed with minhop after gpu0005 vanished", "t": 1.7e9}
    back = {**base, "message": "re-routed with minhop after gpu0005 appeared", "t": 1.7e9 + 20}
    again = {**gone, "t": 1.7e9 + 40}
    for key in (_alert_key, alert_key):
        assert len({key(gone), key(back), key(again)}) == 3, key
        assert key(gone) == key(dict(gone)), key


@pytest.mark.django_db(transaction=True)
def test_a_host_that_vanishes_and_returns_gives_two_routing_events_the_first_closed(telemetry_world):
    """The runner end to end (issue 42's scene): the event of the return is stored, and it closes the one before."""
    from tests.ibweb.access.test_message_redaction import _discovery, _tick, published

    world, config, tmp_path = telemetry_world
    t = datetime.now(UTC).timestamp() - 100
    _discovery(config, tmp_path, t)
    runner = published(world.row)
    _discovery(config, tmp_path, t + 10, without=("gpu0005",))
    _tick(runner)
    _discovery(config, tmp_path, t + 20)
    alerts = _tick(runner)
    assert any(a["kind"] == "routing" and "gpu0005 appeared" in a["message"] for a in alerts), alerts
    rows = list(Event.objects.filter(kind="routing", message__contains="gpu0005").order_by("first_seen", "pk"))
    assert [("vanished" in e.message, "appeared" in e.message, e.active) for e in rows] == [
        (True, False, False), (False, True, True)], [(e.message[:60], e.active) for e in rows]


@pytest.mark.django_db(transaction=True)
def test_the_runner_closes_routing_and_plan_events_by_its_clear_before_the_frame_check(fabric, monkeypatch, caplog):
    """A routing event and a plan alert raised on one tick and gone on the next are closed by the runner's clear, even
    when its signal is slow (a new fabric to read after a discovery): the frame's check of the open events runs after
    it and finds no clear lost (it warned ``1 open events no longer raised`` for each, on ibsim)."""
    import asyncio
    import dataclasses
    import logging
    import time

    from ibweb.events import recorder as recorder_module
    from ibweb.live.engine.runner import FabricRunner
    from tests.support.engine_fixtures import settled_tick

    monkeypatch.setattr(recorder_module, "RECONCILE_S", 0.0)  # every frame checks the open events
    recorder_module._RECORDERS.pop(fabric.pk, None)
    rec = recorder_module.recorder_for(fabric.pk)
    apply = rec.apply

    def slow_apply(*args, **kwargs):  # the receiver reading a new fabric from the record: the frame comes first
        time.sleep(0.3)
        return apply(*args, **kwargs)

    monkeypatch.setattr(rec, "apply", slow_apply)
    routed = {"kind": "routing", "action": "reloaded", "severity": "info", "source": "opensm", "engine": "ftree",
              "message": "routing reloaded from OpenSM: the dump changed", "t": round(time.time(), 3)}
    plan = {"kind": "plan", "deviation": "missing", "severity": "warning", "port": f"{HOSTS[0]} port 1",
            "a": f"{HOSTS[0]} port 1", "b": "leaf1 port 1",
            "message": f"cable {HOSTS[0]} port 1 - leaf1 port 1 missing"}
    script = [[routed, plan], [routed, plan], [], []]

    async def run() -> None:
        runner = FabricRunner(fabric)
        await runner.start()
        step = runner.source.step

        async def scripted(seq, t):
            state = await step(seq, t)
            return dataclasses.replace(state, alerts=script.pop(0))

        runner.source.step = scripted
        while script:
            await settled_tick(runner)

    with caplog.at_level(logging.WARNING, logger="ibweb.events"):
        asyncio.run(run())
    assert not [r.getMessage() for r in caplog.records if "no longer raised" in r.getMessage()]
    events = {e.kind: e for e in Event.objects.filter(kind__in=("routing", "plan"))}
    assert set(events) == {"routing", "plan"} and not any(e.active for e in events.values()), events
    assert all(e.cleared_at is not None and e.cleared_at >= e.first_seen for e in events.values())
