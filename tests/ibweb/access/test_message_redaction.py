"""No hidden host name survives in any message, for any role (issue 24).

Every message kind that can carry a node name goes through every role's view: analysis errors
(the analyses API), routing warnings (the routing API), events (the events API and page), twin
deviations and alerts (the twin API), live feed alerts (:class:`~ibweb.live.feed.view.FeedView`, free
texts and the engine's structured ones) and progress messages (:func:`ibweb.access.progress_message`).
The messages name hosts with every punctuation a message puts around a name (sentence ends, lists,
arrows, paths, brackets, quotes, ``=``), at the start and the end of the text, next to names of which
a hidden one is a prefix (``dgx01`` hidden, ``dgx010`` shown) or that join it with ``-``/``.`` into
another name (``gpu001-ib``, ``gpu001.cluster``), and names of two words (``gpu5 HCA-1``).

Each view's message must be exactly the text with each hidden host read as ``host-<index>`` (and a
node the fabric lacks as ``hidden node``), the view's own hosts and the switches still named; the whole
response must hold no hidden name nor GUID. Which hosts a role may name is written down here, from the
tenants' partitions, not asked of the code under test.

Hosts of two tenants that leave a telemetry fabric's discovery (and come back) are named by the routing event
only to their own tenant's users and ``ALL`` (issue 42): the events API, the events page and the feed.
"""
from __future__ import annotations

import html
import re
import shutil
import time
from dataclasses import dataclass

import numpy as np
import pytest
from django.contrib.auth.models import Permission, User
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from fabric_engine.formats.json_format import to_json
from fabric_engine.scenario import build_fabric
from fabric_engine.telemetry.alerts import named
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin.persistence import alert_of
from ibweb.access import progress_message, view_of
from ibweb.fabrics.models import Analysis, Fabric
from ibweb.live.feed import view as feedview
from ibweb.tenancy.models import Partition, PartitionMember, Tenant
from tests.support.engine_fixtures import published

pytestmark = pytest.mark.django_db(transaction=True)

#: Host rank -> (name, tenant). acme's users may name acme's hosts; the rest are hidden from them.
HOSTS = [("dgx010", "acme"), ("gpu001-ib", "acme"), ("gpu001.cluster", "acme"), ("node7", "acme"),
         ("dgx01", "globex"), ("gpu001", "globex"), ("gpu5 HCA-1", "globex"), ("n-7", "globex")]
#: Words that are no node's name: a hidden name joined into another name, which must stay as it is.
OTHER = ["gpu001-ibx", "dgx01.local", "xgpu001", "dgx011"]
#: Every punctuation a message puts next to a name.
PUNCTUATION = [".", ",", ";", ":", ")", "(", "->", "/", "=", "'", '"', "[", "]", " ", "-"]
#: role -> what it sees: every host ("all"), its tenant's ("acme"), none ("none").
ROLES = {"superuser": "all", "operator": "all", "acme-user": "acme", "viewer": "none", "anonymous": "none"}
GONE = "gone01"  # a node the fabric does not hold (structured alerts name it by index -1)


def topology() -> dict:
    """A 16-host fat tree in ibweb's JSON, its first hosts renamed as :data:`HOSTS` says."""
    f = fat_tree(hosts=16, radix=8, name="names")
    j = to_json(f)
    names = list(j["nodes"]["name"])
    for rank, (name, _) in enumerate(HOSTS):
        names[int(f.hosts[rank])] = name
    return {**j, "nodes": {**j["nodes"], "name": names}}


FABRIC = build_fabric({"fabric": topology()})
NODE = {str(n): i for i, n in enumerate(FABRIC.node_name)}
HOST_NAMES = [str(FABRIC.node_name[h]) for h in FABRIC.hosts]
SWITCH_NAMES = [str(FABRIC.node_name[s]) for s in FABRIC.switches[:2]]
#: Every word a message may name: hosts, two switches, other words.
WORDS = HOST_NAMES + SWITCH_NAMES + OTHER


def _port_guid(name: str) -> int:
    return int(FABRIC.port_guid[FABRIC.port_offset[NODE[name]]])


#: GUIDs as OpenSM's words write them (node GUID in 16 digits, port GUID short) -> the host they are of.
GUIDS = {**{f"0x{int(FABRIC.guid[NODE[n]]):016x}": n for n, _ in HOSTS},
         **{f"0x{_port_guid(n):x}": n for n, _ in HOSTS}}


def shown_hosts(role: str) -> set[str]:
    """Names of the hosts ``role`` may name (written down, not asked of the code under test)."""
    sees = ROLES[role]
    if sees == "all":
        return set(HOST_NAMES)
    return {name for name, tenant in HOSTS if tenant == sees}


def hidden_hosts(role: str) -> list[str]:
    return [n for n in HOST_NAMES if n not in shown_hosts(role)]


def label(role: str, word: str) -> str:
    """What ``role`` reads for ``word``: a hidden host's ``host-<index>``, a gone node's ``hidden node``."""
    if word == GONE:
        return word if ROLES[role] == "all" else "hidden node"
    if word in HOST_NAMES and word not in shown_hosts(role):
        return f"host-{NODE[word]}"
    if word in GUIDS and GUIDS[word] not in shown_hosts(role):
        return "hidden"
    return word


@dataclass(frozen=True)
class Message:
    """A message as a template (``{0}``, ``{1}``... for :data:`WORDS` at ``slots``)."""

    template: str
    slots: tuple[str, ...]

    def text(self, role: str = "superuser") -> str:
        return self.template.format(*(label(role, w) for w in self.slots))

    def alert(self, **fields) -> dict:
        """The alert the engine makes of it: its nodes as parts (``text``, ``nodes``), other words in the text."""
        nodes = [w for w in self.slots if w in NODE or w == GONE]
        at = iter(range(len(nodes)))
        template = self.template.format(*(f"{{{next(at)}}}" if w in NODE or w == GONE else w for w in self.slots))
        return {**fields, **named(template, [NODE.get(w, -1) for w in nodes], nodes)}


def message(parts: list[tuple[str, str]], tail: str) -> Message:
    """``parts``: (punctuation before, word); two words are never joined by nothing, ``-`` or ``.`` alone (that
    makes one other name)."""
    template, slots = "", []
    for k, (before, word) in enumerate(parts):
        if k and before in ("", "-", "."):
            before += " "
        template += before + "{" + str(k) + "}"
        slots.append(word)
    return Message(template + tail, tuple(slots))


#: Every punctuation on both sides of every word, at the start and at the end of a text.
CORPUS = [message([(p, w) for w in WORDS], p) for p in PUNCTUATION] + [
    message([("", w) for w in WORDS], ""),
    message([("", "dgx01"), (" next to ", "dgx010")], "."),
    message([("path ", "gpu001"), ("->", SWITCH_NAMES[0]), ("->", "dgx010")], ""),
    message([("failed switch next to ", "gpu001")], "."),
    message([("(", "gpu5 HCA-1")], ")"),
]
#: The same with GUIDs (routing warnings, OpenSM's words, name hosts by them).
GUID_CORPUS = [message([(p, w) for w in GUIDS], p) for p in PUNCTUATION]
PUNCT = st.lists(st.sampled_from(PUNCTUATION), max_size=3).map("".join)
MESSAGES = st.builds(message, st.lists(st.tuples(PUNCT, st.sampled_from(WORDS)), min_size=1, max_size=6), PUNCT)
FREE_MESSAGES = st.builds(message, st.lists(st.tuples(PUNCT, st.sampled_from(WORDS + list(GUIDS))), min_size=1,
                                            max_size=6), PUNCT)


def leaks(role: str, text: str) -> list[str]:
    """The hidden names and GUIDs of ``role`` that stand whole in ``text`` (``gpu001`` is not in ``gpu001-ib``)."""
    found = []
    for name in hidden_hosts(role):
        if re.search(rf"(?<![\w])(?<![\w][.-]){re.escape(name)}(?![\w])(?![.-]\w)", text):
            found.append(name)
        node = NODE[name]
        guids = [int(FABRIC.guid[node])] + [int(g) for g in FABRIC.port_guid[FABRIC.port_node == node]]
        found += [f"{g:016x}" for g in guids if f"{g:016x}" in text.lower()]
    if ROLES[role] != "all" and re.search(rf"\b{GONE}\b", text):
        found.append(GONE)
    return found


def own_names(role: str, text: str) -> set[str]:
    """The view's own hosts that ``text`` names (it must still name them)."""
    return {n for n in shown_hosts(role) if n in text}


@dataclass
class World:
    row: Fabric
    users: dict[str, User | None]


def user(name: str, *, superuser: bool = False, all_tenants: bool = False, tenant: Tenant | None = None) -> User:
    u = User.objects.create_user(name, password="pw-" + name, is_superuser=superuser, is_staff=superuser)
    if all_tenants:
        u.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
    if tenant is not None:
        tenant.users.add(u)
    return u


@pytest.fixture
def world() -> World:
    """The fabric (its record published by its engine), acme's and globex's partitions, one user per role."""
    row = Fabric.objects.create(name="Names", slug="names", spec={"topology": {"fabric": topology()}, "jobs": [],
                                                                  "tick_s": 1.0})
    tenants = {}
    for k, slug in enumerate(("acme", "globex")):
        tenants[slug] = Tenant.objects.create(slug=slug, name=slug.title())
        part = Partition.objects.create(fabric=row, tenant=tenants[slug], name=slug, pkey=0x0A00 + k)
        for rank, (_, owner) in enumerate(HOSTS):
            if owner == slug:
                port_guid = int(FABRIC.port_guid[FABRIC.port_offset[int(FABRIC.hosts[rank])]])
                PartitionMember.objects.create(partition=part, guid=f"0x{port_guid:016x}", membership="full")
    published(row)
    users = {"superuser": user("root", superuser=True), "operator": user("olga", all_tenants=True),
             "acme-user": user("ann", tenant=tenants["acme"]), "viewer": user("vic"), "anonymous": None}
    return World(row, users)


def client(world: World, role: str) -> APIClient:
    c = APIClient()
    if world.users[role] is not None:
        c.force_login(world.users[role])
    return c


def get(world: World, role: str, url: str):
    r = client(world, role).get(url)
    assert r.status_code == 200, (role, url, r.status_code, r.content[:300])
    return r


def feed_views(world: World) -> dict[str, feedview.FeedView]:
    return {role: feedview.feed_view(view_of(u).key, world.row, FABRIC) for role, u in world.users.items()}


# ------------------------------------------------------------------ the live feed
@override_settings(IBWEB_PUBLIC_READ=True)
def test_feed_alerts_free_and_structured_name_no_hidden_host_for_any_role(world):
    views = feed_views(world)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(msg=MESSAGES, text=FREE_MESSAGES)
    def check(msg: Message, text: Message):
        free = {"kind": "sweep_failures", "severity": "warning", "message": text.text()}
        port = next((w for w in msg.slots if w in NODE), GONE)  # the node (or gone node) whose port it names
        structured = msg.alert(kind="errors", severity="warning", link=int(FABRIC.out_link(int(FABRIC.hosts[4]), 1)),
                               port=f"{port} port 1")
        for role, fv in views.items():
            out = fv.header({"jobs": [], "alerts": [free, structured]})["alerts"]
            assert out[0]["message"] == text.text(role), role
            assert out[1]["message"] == msg.text(role), role
            assert out[1]["port"] == f"{label(role, port)} port 1", role
            assert not leaks(role, repr(out)), (role, leaks(role, repr(out)))

    check()


@override_settings(IBWEB_PUBLIC_READ=True)
def test_a_structured_alert_names_a_node_the_fabric_lacks_as_hidden_node(world):
    views = feed_views(world)
    msg = message([("cable down: ", "dgx010"), (" port 1 - ", GONE)], " port 3")
    alert = msg.alert(kind="link_down", condition=True, a="dgx010 port 1", b=f"{GONE} port 3")
    for role, fv in views.items():
        out = fv.alert(alert)
        assert out["message"] == msg.text(role) and out["b"] == f"{label(role, GONE)} port 3", role
        assert not leaks(role, repr(out)), role


@override_settings(IBWEB_PUBLIC_READ=True)
def test_progress_messages_name_no_hidden_host_below_all(world):
    for msg in CORPUS:
        for role, u in world.users.items():
            view = view_of(u)
            for status in ("failed", "done"):
                payload = {"task": "analysis", "id": 1, "kind": "whatif_links", "status": status,
                           "fraction": 1.0, "message": msg.text()}
                out = progress_message(view, payload)
                assert not leaks(role, repr(out)), role
                if ROLES[role] == "all":
                    assert out == payload


# ------------------------------------------------------------------ the APIs
@override_settings(IBWEB_PUBLIC_READ=True)
def test_analysis_errors_name_no_hidden_host(world):
    ids = {Analysis.objects.create(fabric=world.row, kind="whatif_links", status="failed", params={},
                                   error=msg.text()).pk: msg for msg in CORPUS}
    for role in ROLES:
        for pk, msg in ids.items():
            body = get(world, role, f"/api/fabrics/fabrics/names/analyses/{pk}/").json()
            assert body["error"] == msg.text(role), role
            assert not leaks(role, str(body)), role


@override_settings(IBWEB_PUBLIC_READ=True)
def test_analysis_errors_name_no_hidden_host_guid(world):
    ids = {Analysis.objects.create(fabric=world.row, kind="whatif_links", status="failed", params={},
                                   error=msg.text()).pk: msg for msg in GUID_CORPUS}
    for role in ROLES:
        body = get(world, role, "/api/fabrics/fabrics/names/analyses/?limit=500").json()
        rows = body["results"] if isinstance(body, dict) else body
        assert {r["id"]: r["error"] for r in rows} == {pk: msg.text(role) for pk, msg in ids.items()}, role
        assert not leaks(role, str(body)), role


@override_settings(IBWEB_PUBLIC_READ=True)
def test_routing_warnings_name_no_hidden_host(world, monkeypatch):
    from ibweb.live.api import routing_views

    real = routing_views.record.routing_report

    corpus = CORPUS + GUID_CORPUS
    reason = message([("ERR AB0F: CA connected directly to another CA: ", "dgx01"), (" port 1 <-> ", "dgx010")],
                     " port 1")

    def with_warnings(*args, **kwargs):
        report = real(*args, **kwargs)
        return {**report, "warnings": [m.text() for m in corpus], "fallback": {"engine": "minhop",
                                                                                "reason": reason.text()}}

    monkeypatch.setattr(routing_views.record, "routing_report", with_warnings)
    for role in ROLES:
        r = get(world, role, "/api/fabrics/fabrics/names/routing/")
        assert r.json()["warnings"] == [m.text(role) for m in corpus], role
        assert r.json()["fallback"]["reason"] == reason.text(role), role
        assert not leaks(role, r.content.decode()), role


def _record_events(world: World) -> list[Message]:
    """The runner's alerts recorded as events: free texts and the engine's structured ones, one per message."""
    from ibweb.events.recorder import EventRecorder

    alerts = []
    for k, msg in enumerate(CORPUS):
        alerts.append({"kind": "sweep_failures", "severity": "warning", "counter": f"free{k}", "message": msg.text()})
        alerts.append(msg.alert(kind="errors", severity="warning", counter=f"parts{k}"))
    EventRecorder(world.row.pk).apply(alerts, [], seq=1, t=1.7e9, first=False, fabric=FABRIC, jobs=[])
    return CORPUS


@override_settings(IBWEB_PUBLIC_READ=True)
def test_events_name_no_hidden_host_in_the_api_and_the_page(world):
    corpus = _record_events(world)
    wrong = {}  # (role, where) -> what is wrong, for every role and both places at once
    for role in ROLES:
        body = get(world, role, "/api/fabrics/fabrics/names/events/?limit=500").json()
        rows = body["results"] if isinstance(body, dict) else body
        got = sorted(e["message"] for e in rows)
        missed = [m for m in got if m not in {c.text(role) for c in corpus}]
        if missed or len(got) != 2 * len(corpus):
            wrong[role, "api messages"] = missed[:3]
        if leaks(role, str(body)):
            wrong[role, "api"] = leaks(role, str(body))
        page = html.unescape(get(world, role, "/fabrics/names/events/").content.decode())
        if leaks(role, page):
            wrong[role, "page"] = leaks(role, page)
    assert not wrong, wrong


@override_settings(IBWEB_PUBLIC_READ=True)
def test_twin_deviations_and_alerts_name_no_hidden_host(world, monkeypatch):
    from ibweb.twin.api import views as twin_views

    leaf = FABRIC.dl_dst
    devs = []
    for h in FABRIC.hosts[:8].tolist():  # a deviation on each named host's cable to its leaf
        d = int(FABRIC.out_link(h, 1))
        name = str(FABRIC.node_name[h])
        guid = f"0x{int(FABRIC.guid[h]):016x}"
        devs.append({"kind": "below", "key": f"{guid}/1", "link": d, "hosts": [guid],
                     "label": f"{name} port 1 -> {FABRIC.node_name[leaf[d]]} port {int(FABRIC.dl_dst_port[d])}",
                     "expected_gbps": 80.0, "observed_gbps": 0.0})
    report = {"t": 1.7e9, "jobs": [], "deviations": devs, "alerts": [alert_of(d) for d in devs], "links": None}
    monkeypatch.setattr(twin_views.report_cache, "report", lambda fabric_id: report)
    for role in ROLES:
        r = get(world, role, "/api/twin/fabrics/names/expected/")
        text = r.content.decode()
        assert not leaks(role, text), (role, leaks(role, text))
        assert own_names(role, text) == shown_hosts(role) & {n for n, _ in HOSTS}, role  # their deviations kept


def test_the_fabric_holds_the_names_the_messages_use():
    """The oracle's premise: the renamed hosts are hosts, ``dgx01`` a prefix of a shown name, the others not nodes."""
    assert {n for n, _ in HOSTS} <= set(HOST_NAMES) and not set(OTHER) & set(NODE)
    assert any(s != "dgx01" and s.startswith("dgx01") for s in shown_hosts("acme-user"))
    assert np.all(FABRIC.kind[[NODE[n] for n, _ in HOSTS]] == FABRIC.kind[FABRIC.hosts[0]])


# ------------------------------------------------------------------ hosts gone from a telemetry discovery (issue 42)
#: Hosts of the ibsim fat tree's ``iblinkinfo`` capture that leave the discovery -> their port GUID and tenant.
VANISHING = {"gpu0005": ("0xb83fd20300000051", "globex"), "gpu0003": ("0xb83fd20300000031", "acme")}
#: role -> the tenant whose vanished hosts it may name ("all": every one; None: none).
GONE_ROLES = {"superuser": "all", "operator": "all", "acme-user": "acme", "globex-user": "globex", "viewer": None,
              "anonymous": None}


def gone_label(role: str, name: str, index: int | None = None) -> str:
    """What ``role`` reads for a vanishing host (written down from the partitions, not asked of the code): its
    name, else ``host-<index>`` while in the fabric, ``hidden node`` once gone."""
    sees = GONE_ROLES[role]
    if sees == "all" or sees == VANISHING[name][1]:
        return name
    return "hidden node" if index is None else f"host-{index}"


def as_read_by(role: str, message: str, present: dict[str, int]) -> str:
    """``message`` as ``role`` reads it, the hosts of ``present`` in the fabric (by index), the others gone."""
    for name in VANISHING:
        message = re.sub(rf"(?<![\w.-]){name}(?![\w])", gone_label(role, name, present.get(name)), message)
    return message


def gone_leaks(role: str, text: str, identities: dict[str, list[str]]) -> list[str]:
    """The vanished hosts' names and GUIDs (hex digits) ``role`` may not read that stand in ``text``."""
    hidden = [n for n in VANISHING if gone_label(role, n) != n]
    found = [n for n in hidden if re.search(rf"(?<![\w.-]){n}(?![\w])", text)]
    return found + [g for n in hidden for g in identities[n] if g in text.lower()]


@pytest.fixture
def telemetry_world(tmp_path):
    """The ``lab`` fabric fed by a drop directory (the capture as built, discovered and routed), acme holding
    gpu0003 and globex gpu0005 in their partitions, one user per role."""
    from django.core.cache import cache

    from ibweb.events.recorder import _RECORDERS
    from tests.ibweb.telemetry.test_telemetry_routing import make

    cache.clear()
    config = make("lab", tmp_path)
    row = config.fabric
    _RECORDERS.pop(row.pk, None)  # this process's recorder of an earlier test's fabric of the same key
    users = {"superuser": user("root", superuser=True), "operator": user("olga", all_tenants=True),
             "viewer": user("vic"), "anonymous": None}
    for k, (port_guid, slug) in enumerate(VANISHING.values()):
        tenant = Tenant.objects.create(slug=slug, name=slug.title())
        part = Partition.objects.create(fabric=row, tenant=tenant, name=slug, pkey=0x0A00 + k)
        PartitionMember.objects.create(partition=part, guid=port_guid, membership="full")
        users[f"{slug}-user"] = user(f"{slug}-u", tenant=tenant)
    yield World(row, users), config, tmp_path
    cache.clear()


def _discovery(config, tmp_path, t: float, without: tuple[str, ...] = (), capture: str = "iblinkinfo.txt",
               dump: str | None = None) -> None:
    """A sweep of ``capture`` with the hosts ``without`` left out (their blocks and the leaf ports to them), and
    OpenSM's ``dump`` (None: the one in the drop directory stays)."""
    from ibweb.telemetry.sweeps import run_sweep
    from tests.ibweb.telemetry.test_telemetry_routing import DATA, drop

    gone = [w for n in without for w in (n, VANISHING[n][0])]
    text = (DATA / capture).read_text().splitlines(keepends=True)
    path = tmp_path / f"iblinkinfo-{t:.0f}.txt"
    path.write_text("".join(line for line in text if not any(w in line for w in gone)))
    drop(tmp_path / "drop", t, linkinfo=str(path), dump=dump)
    run_sweep(config)


def _tick(runner) -> list[dict]:
    """One tick of the runner with its receivers done (the events recorded); the alerts of its frame."""
    import asyncio

    from ibweb.runtime.frames import newest_frame
    from tests.support.engine_fixtures import settled_tick

    asyncio.run(settled_tick(runner))
    return newest_frame(runner.fabric_id)["alerts"]


def _check_every_role(world: World, header_alerts: list[dict], identities: dict[str, list[str]],
                      present: dict[str, int], stored: str) -> dict:
    """The routing event ``stored`` (naming the hosts gone) in the events API (list and event) and page, and the
    frame's alerts in the feed (``present``: the vanishing hosts in its fabric, by index), as every role reads
    them; no role's response names a host it may not see."""
    from ibweb.live.feed.view import cached_feed_view

    wrong = {}
    routing = [a for a in header_alerts if a["kind"] == "routing"]
    assert routing, header_alerts
    for role in GONE_ROLES:
        body = get(world, role, "/api/fabrics/fabrics/lab/events/?limit=500").json()
        rows = body["results"]
        for r in rows:
            if r["kind"] == "routing":
                one = get(world, role, f"/api/fabrics/fabrics/lab/events/{r['id']}/").json()
                if one["message"] != r["message"]:
                    wrong[role, "event", r["id"]] = one["message"]
        page = html.unescape(get(world, role, "/fabrics/lab/events/").content.decode())
        fv, _, _ = cached_feed_view(view_of(world.users[role]).key, world.row)
        feed = fv.header({"jobs": [], "alerts": header_alerts})["alerts"]
        for where, text in (("api", str(body)), ("page", page), ("feed", repr(feed))):
            if gone_leaks(role, text, identities):
                wrong[role, where] = gone_leaks(role, text, identities)
        for alert, shown in zip(header_alerts, feed, strict=True):
            if alert["kind"] == "routing" and shown["message"] != as_read_by(role, alert["message"], present):
                wrong[role, "feed message"] = shown["message"]
        messages = [r["message"] for r in rows if r["kind"] == "routing"]
        if as_read_by(role, stored, {}) not in messages:
            wrong[role, "api message"] = messages
    return wrong


@override_settings(IBWEB_PUBLIC_READ=True)
def test_hosts_gone_from_a_discovery_are_named_only_to_their_tenants_then(telemetry_world):
    """gpu0005 (globex) and gpu0003 (acme) leave the discovery, then come back: the routing event naming them
    reads each by name to its own tenant's users and ``ALL``, as ``hidden node`` to everyone else, in the events
    API, the events page and the feed, before and after they return."""
    from ibweb.events.models import Event

    world, config, tmp_path = telemetry_world
    t = time.time() - 100
    _discovery(config, tmp_path, t)
    runner = published(world.row)
    before = runner.source.fabric
    identities = {}
    for name in VANISHING:  # the hex digits of the node GUID and port GUIDs of each
        n = before.node(name)
        identities[name] = [f"{int(g):016x}" for g in [before.guid[n], *before.port_guid[before.port_node == n]]]

    _discovery(config, tmp_path, t + 10, without=tuple(VANISHING))
    alerts = _tick(runner)
    (gone,) = [a for a in alerts if a["kind"] == "routing"]
    assert gone["message"].startswith("re-routed with minhop after gpu0005 vanished; gpu0003 vanished; link down: "
                                      "gpu0005 port 1 - leaf03 port 1"), gone["message"]
    assert Event.objects.filter(kind="routing", message=gone["message"]).exists()
    assert not (wrong := _check_every_role(world, alerts, identities, {}, gone["message"])), wrong

    _discovery(config, tmp_path, t + 20)  # both back: what named them stays redacted, the new event too
    alerts = _tick(runner)
    assert any(a["kind"] == "routing" and "gpu0005 appeared" in a["message"] for a in alerts), alerts
    assert Event.objects.filter(kind="routing", message=gone["message"]).exists()
    back = runner.source.fabric
    present = {name: back.node(name) for name in VANISHING}
    assert not (wrong := _check_every_role(world, alerts, identities, present, gone["message"])), wrong


@override_settings(IBWEB_PUBLIC_READ=True)
def test_a_host_only_a_fresher_discovery_holds_is_named_only_to_its_tenant(telemetry_world):
    """The sweep in hand lacks gpu0005 (globex) and the cable leaf01 port 3; OpenSM's dump already routes both, and
    a fresh discovery (the tracker's second look) holds them: the dump is used, its event quoting that fresh
    discovery's changes. gpu0005 is in no fabric the views know, so only the parts can redact it: globex's users and
    ``ALL`` read it by name, everyone else as ``hidden node``, in the feed and the events API."""
    from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
    from ibweb.live.feed.view import cached_feed_view
    from tests.ibweb.telemetry.test_telemetry_routing import DATA

    world, config, tmp_path = telemetry_world
    t = time.time() - 100
    _discovery(config, tmp_path, t, without=("gpu0005",), dump="opensm-lfts.dump")
    runner = published(world.row)
    assert runner.source.router.source == "opensm-dump"
    _discovery(config, tmp_path, t + 10, without=("gpu0005",), capture="iblinkinfo_unlinked.txt")
    shutil.copy(DATA / "iblinkinfo.txt", tmp_path / "drop" / "iblinkinfo.txt")  # what a fresh look finds
    full = fabric_from_linkinfo(parse_iblinkinfo((DATA / "iblinkinfo.txt").read_text()), "lab")
    n = full.node("gpu0005")
    identities = {name: [] for name in VANISHING}
    identities["gpu0005"] = [f"{int(g):016x}" for g in [full.guid[n], *full.port_guid[full.port_node == n]]]

    alerts = _tick(runner)
    (event,) = [a for a in alerts if a["kind"] == "routing"]
    assert "the dump agrees with a fresh discovery (" in event["message"], event["message"]
    assert "gpu0005 appeared" in event["message"] and runner.source.fabric.node_name.tolist().count("gpu0005") == 0
    wrong = {}
    for role in GONE_ROLES:
        body = get(world, role, "/api/fabrics/fabrics/lab/events/?limit=500").json()
        stored = [r["message"] for r in body["results"] if r["kind"] == "routing" and "fresh discovery" in r["message"]]
        fv, _, _ = cached_feed_view(view_of(world.users[role]).key, world.row)
        feed = [a["message"] for a in fv.header({"jobs": [], "alerts": alerts})["alerts"] if a["kind"] == "routing"]
        named = f"{gone_label(role, 'gpu0005')} appeared"
        for where, text, messages in (("api", str(body), stored), ("feed", repr(feed), feed)):
            if gone_leaks(role, text, identities):
                wrong[role, where] = gone_leaks(role, text, identities)
            if len(messages) != 1 or named not in messages[0]:
                wrong[role, where, "message"] = messages
    assert not wrong, wrong
