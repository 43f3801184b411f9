"""One frame per access view and tick (issue 13), and a feed that follows access changes (issue 14).

Sockets of users who see the same thing share one filter and one encode per tick; each view
sees only what :mod:`ibweb.access` lets it see; a changed grant, active flag or partition
membership reaches open sockets as a new snapshot; deactivation closes them with 4401 (signed out).
"""

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from fabric_engine import feed_v2
from ibweb.asgi import application
from ibweb.db.retry import retry_locked
from ibweb.live.engine.runner import FabricRunner
from ibweb.live.feed import encodings
from ibweb.live.feed import view as feedview
from ibweb.live.feed.consumers import CLOSE_SIGNED_OUT
from ibweb.tenancy import services
from ibweb.tenancy.models import Partition, Tenant
from tests.support.access_fixtures import build, identifiers, leaks, public_read, role_permissions

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/ws/fabrics/shared/live/"


async def connect(user, url: str = URL) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, url)
    if user is not None:
        comm.scope["user"] = user
    connected, _ = await comm.connect()
    assert connected
    return comm


async def receive(comm: WebsocketCommunicator, timeout: float = 10):
    """The next message: a dict (JSON text) or ``(header, arrays)`` of a binary v2 frame."""
    out = await comm.receive_output(timeout)
    if out["type"] == "websocket.close":
        return {"type": "closed", "code": out.get("code")}
    if out.get("bytes") is not None:
        return feed_v2.decode_frame(out["bytes"])
    return json.loads(out["text"])


async def next_of(comm, kind: str, timeout: float = 10) -> dict:
    while True:
        msg = await receive(comm, timeout)
        if isinstance(msg, dict) and msg["type"] in (kind, "closed"):
            return msg


@pytest.fixture
def shared():
    return build()


async def started(shared) -> FabricRunner:
    runner = FabricRunner(shared.fabric)
    await runner.start()
    await runner.tick()
    return runner


class Counter:
    """Counts calls of a method while wrapping it."""

    def __init__(self, monkeypatch, owner, name: str) -> None:
        self.calls: list = []
        real = getattr(owner, name)

        def wrapped(obj, *args, **kwargs):
            self.calls.append(getattr(obj, "key", getattr(obj, "name", None)))
            return real(obj, *args, **kwargs)

        monkeypatch.setattr(owner, name, wrapped)


async def written(fn):
    """A test's write while the runner's threads write too: retried while SQLite is locked, as they retry theirs."""
    return await sync_to_async(retry_locked)(fn, what="test write")


async def test_users_of_one_tenant_cost_one_filter_and_one_encode_per_tick_issue_13(shared, monkeypatch):
    acme = shared.tenants["acme"]

    def more_acme_users() -> list[User]:
        users = [shared.users["acme-user"]]
        for i in range(4):
            u = User.objects.create_user(f"acme-{i}", password="pw")
            acme.users.add(u)
            users.append(u)
        return users

    users = await sync_to_async(more_acme_users)()
    runner = await started(shared)
    socks = [await connect(u) for u in users]
    operator = await connect(shared.users["operator"])
    try:
        for comm in [*socks, operator]:
            assert (await receive(comm))["type"] == "snapshot"
        filters = Counter(monkeypatch, feedview.FeedView, "header")
        encodes = Counter(monkeypatch, encodings.JsonV1, "frame")
        for _ in range(3):
            await runner.tick()
            frames = [await next_of(comm, "frame") for comm in socks]
            assert all(f == frames[0] for f in frames)  # the same message for every socket of the view
            assert {j["tenant"] for j in frames[0]["jobs"]} == {"acme"}
            all_jobs = (await next_of(operator, "frame"))["jobs"]
            assert {j["tenant"] for j in all_jobs} == {"acme", "globex"}
        key = f"t-{acme.pk}"
        assert filters.calls == [key, "all"] * 3 or sorted(filters.calls) == sorted([key, "all"] * 3)
        assert sorted(encodes.calls) == ["v1"] * 6  # one encode per (view, encoding) and tick: 2 views x 3 ticks
    finally:
        for comm in [*socks, operator]:
            await comm.disconnect()


async def test_fabric_view_carries_aggregates_only_issue_14(shared):
    runner = await started(shared)
    secret = [*identifiers(shared, "acme"), *identifiers(shared, "globex")]
    with public_read(True):
        for user in (None, shared.users["viewer"]):  # anonymous, and a user of no tenant
            comm = await connect(user)
            try:
                snap = await receive(comm)
                assert snap["type"] == "snapshot"
                await runner.tick()
                frame = await next_of(comm, "frame")
                assert frame["jobs"] == [] and frame["sharp"]["jobs"] == [] and frame["sharp"]["allowed_tenants"] == []
                assert all(j["id"] in ("background", feedview.OTHER) for h in frame["hotspots"] for j in h["jobs"])
                nodes = snap["topology"]["nodes"]
                hosts = [i for i, k in enumerate(nodes["kind"]) if k == "host"]
                assert all(nodes["name"][i] == f"host-{i}" and nodes["guid"][i] == "hidden" for i in hosts)
                assert not leaks(json.dumps(snap) + json.dumps(frame), secret)
                assert len(frame["util"]) == 2 * len(snap["topology"]["links"]["a_node"])  # link loads stay whole
            finally:
                await comm.disconnect()


async def test_a_v2_socket_gets_its_views_binary_frames(shared):
    runner = await started(shared)
    comm = await connect(shared.users["acme-user"], URL + "?v=2")
    try:
        snap = await receive(comm)
        assert snap["type"] == "snapshot" and snap["frame"] is None
        await runner.tick()
        header, arrays = await receive(comm)
        assert header["v"] == 2 and header["type"] == "frame" and {j["tenant"] for j in header["jobs"]} == {"acme"}
        assert len(arrays["util"]) == 2 * len(snap["topology"]["links"]["a_node"])
        assert not leaks(json.dumps(header), identifiers(shared, "globex"))
    finally:
        await comm.disconnect()
    bad = await connect(None, URL + "?v=9")
    assert (await receive(bad))["code"] == 4400
    await bad.disconnect()


async def test_open_sockets_follow_membership_grants_and_the_active_flag_issue_14(shared):
    runner = await started(shared)
    user = shared.users["acme-user"]
    acme, globex = shared.tenants["acme"], shared.tenants["globex"]
    comm = await connect(user)
    try:
        await receive(comm)
        # moved from acme to globex: a new snapshot naming globex's hosts, then globex's jobs
        await written(lambda: (globex.users.add(user), acme.users.remove(user)))
        snap = await next_of(comm, "snapshot")
        assert {j["tenant"] for j in snap["frame"]["jobs"]} == {"globex"}
        await runner.tick()
        frame = await next_of(comm, "frame")
        assert {j["tenant"] for j in frame["jobs"]} == {"globex"}
        assert not leaks(json.dumps(frame) + json.dumps(snap), identifiers(shared, "acme"))
        # granted the operator role: sees every tenant
        await written(lambda: user.user_permissions.add(*role_permissions("operator")))
        snap = await next_of(comm, "snapshot")
        assert {j["tenant"] for j in snap["frame"]["jobs"]} == {"acme", "globex"}
        # deactivated: signed out, closed
        user.is_active = False
        await written(user.save)
        assert (await next_of(comm, "closed"))["code"] == CLOSE_SIGNED_OUT
    finally:
        await comm.disconnect()


async def test_partition_members_changed_reach_the_views_topology_within_a_tick_issue_14(shared):
    runner = await started(shared)
    comm = await connect(shared.users["acme-user"])
    try:
        snap = await receive(comm)
        nodes = snap["topology"]["nodes"]
        shown = {i for i, g in enumerate(nodes["guid"]) if nodes["kind"][i] == "host" and g != "hidden"}
        assert shown == set(shared.hosts["acme"])
        partition = shared.partitions["acme"]
        first = await sync_to_async(lambda: sorted(partition.members.values_list("guid", flat=True)))()
        await written(lambda: services.remove_members(partition, first[:1], via="test"))
        await runner.tick()  # the runner sees the policy change and sends the view a new snapshot
        snap = await next_of(comm, "snapshot")
        nodes = snap["topology"]["nodes"]
        now = {i for i, g in enumerate(nodes["guid"]) if nodes["kind"][i] == "host" and g != "hidden"}
        assert len(now) == len(shown) - 1 and now < shown
    finally:
        await comm.disconnect()


async def test_deleting_the_users_tenant_narrows_the_socket_to_aggregates(shared):
    await started(shared)
    with public_read(True):
        comm = await connect(shared.users["acme-user"])
        try:
            await receive(comm)
            def delete_acme() -> None:
                Partition.objects.filter(tenant__slug="acme").delete()
                Tenant.objects.filter(slug="acme").delete()

            await written(delete_acme)
            snap = await next_of(comm, "snapshot")
            assert snap["frame"]["jobs"] == []
        finally:
            await comm.disconnect()
