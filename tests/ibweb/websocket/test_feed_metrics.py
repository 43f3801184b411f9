"""``ibweb_feed_*`` in ``/metrics``: what each socket holds, for operators only, each family once (issue 27)."""

from __future__ import annotations

import asyncio
import re

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from ibweb.websocket.flow import HIGH_WATER_BYTES, SocketFlow, feed_socket_stats

pytestmark = pytest.mark.django_db


class Transport:
    """The one call :class:`SocketFlow` makes of a transport."""

    def __init__(self, buffered: int) -> None:
        self.buffered = buffered

    def get_write_buffer_size(self) -> int:
        return self.buffered


def flow(encoding: str, deflate: bool, buffered: int, paused: bool, backlog: int = 0) -> SocketFlow:
    writable = asyncio.Event()
    if not paused:
        writable.set()
    f = SocketFlow(Transport(buffered), writable)
    f.encoding, f.deflate, f.backlog = encoding, deflate, (lambda: backlog)
    return f


@pytest.fixture
def sockets():
    """Three live-feed sockets of this process (and one of another application, no encoding), closed afterwards."""
    flows = [flow("v1", True, 1000, False), flow("v2", True, HIGH_WATER_BYTES + 5000, True, backlog=2),
             flow("v2", True, 70, False), flow("", False, 99, False)]
    flows[1].sent(0)
    flows[1].sent(4)
    yield flows
    for f in flows:
        f.gone()


def metrics(client: APIClient, **query) -> str:
    response = client.get("/metrics", query)
    assert response.status_code == 200
    return response.content.decode()


def test_operators_see_each_sockets_holdings_per_kind(sockets):
    operator = User.objects.create_user("op")
    operator.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
    client = APIClient()
    client.force_authenticate(operator)
    text = metrics(client)
    pid = r'pid="\d+"'
    assert re.search(rf'^ibweb_feed_sockets\{{{pid},encoding="v2",deflate="on"\}} 2$', text, re.M)
    assert re.search(rf'^ibweb_feed_sockets_paused\{{{pid},encoding="v2",deflate="on"\}} 1$', text, re.M)
    assert re.search(rf'^ibweb_feed_socket_buffered_bytes_max\{{{pid},encoding="v2",deflate="on"\}} '
                     rf'{HIGH_WATER_BYTES + 5000}$', text, re.M)
    assert re.search(rf'^ibweb_feed_buffered_bytes\{{{pid},encoding="v2",deflate="on"\}} {HIGH_WATER_BYTES + 5070}$',
                     text, re.M)
    assert re.search(rf'^ibweb_feed_socket_backlog_max\{{{pid},encoding="v2",deflate="on"\}} 2$', text, re.M)
    assert re.search(rf'^ibweb_feed_sockets\{{{pid},encoding="v1",deflate="on"\}} 1$', text, re.M)
    assert 'encoding=""' not in text  # a socket of no feed is not reported
    assert re.search(r"^ibweb_feed_frames_skipped_total\{pid=\"\d+\"\} 4$", text, re.M)
    families = re.findall(r"^# TYPE (ibweb_feed_\w+) ", text, re.M)
    assert len(families) == len(set(families)) == 9
    assert "ibweb_feed_" not in metrics(client, fabric="demo")  # a fabric's metrics only


@pytest.mark.parametrize("role", ["anonymous", "viewer"])
def test_other_roles_see_no_feed_sockets(sockets, role):
    client = APIClient()
    if role == "viewer":
        client.force_authenticate(User.objects.create_user("viewer"))
    assert "ibweb_feed_" not in metrics(client)


def test_a_closed_sockets_counts_stay_in_the_totals():
    f = flow("v1", False, 0, False)
    before = feed_socket_stats()
    f.sent(0)
    f.sent(2)
    f.closed_stalled = True
    f.gone()
    f.gone()  # once only
    after = feed_socket_stats()
    assert (after.frames_sent - before.frames_sent, after.frames_skipped - before.frames_skipped,
            after.stalled_closes - before.stalled_closes) == (2, 2, 1)
    sockets = before.groups[("v1", False)]["sockets"]
    assert after.groups.get(("v1", False), {"sockets": 0})["sockets"] == sockets - 1
