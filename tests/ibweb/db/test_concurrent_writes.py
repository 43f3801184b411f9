"""Concurrent writes on the embedded default (issue 26): ten clients writing to one partition or fabric at once.

The hostile run saw 7 of 10 concurrent writes to one partition answer 500 on SQLite (its write lock). The
real server takes the write lock when a transaction begins (``transaction_mode: IMMEDIATE``), so a writer
waits for the one before it: every write answers 200 and the last one wins, or 409 where a constraint says
that a concurrent writer got there first (two P_Keys of one value); never a 500.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.ibweb.access.test_isolation_crawl import PASSWORD, Session
from tests.support.server import running_server

pytestmark = pytest.mark.django_db(transaction=True)

WRITERS = 10

_ADMIN = f"""
from django.contrib.auth.models import User
User.objects.create_superuser("writer", password={PASSWORD!r})
"""


def _at_once(session_of, requests: list[tuple[str, str, dict]]) -> list[tuple[int, bytes]]:
    """Send ``requests`` (method, url, body) from one thread each, all at once; their statuses and bodies."""
    def send(args):
        method, url, body = args
        status, _, data = session_of().request(method, url, json.dumps(body).encode(),
                                               {"Content-Type": "application/json"})
        return status, data
    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(send, requests))


def test_ten_concurrent_writes_to_one_partition_and_one_fabric_all_succeed(tmp_path):
    with running_server(tmp_path, setup=_ADMIN) as server:
        signed_in = Session(server.port)
        signed_in.login("writer")

        def session_of() -> Session:
            clone = Session(server.port)
            clone.cookies = dict(signed_in.cookies)
            return clone

        status, _, body = signed_in.request("GET", "/api/tenancy/partitions/?fabric=demo")
        assert status == 200, body[:300]
        rows = json.loads(body)
        partition = (rows["results"] if isinstance(rows, dict) else rows)[0]["id"]

        answers = _at_once(session_of, [("PATCH", f"/api/tenancy/partitions/{partition}/", {"description": f"w{i}"})
                                        for i in range(WRITERS)])
        assert [s for s, _ in answers] == [200] * WRITERS, [(s, b[:200]) for s, b in answers if s != 200]
        status, _, body = signed_in.request("GET", f"/api/tenancy/partitions/{partition}/")
        assert json.loads(body)["description"] in {f"w{i}" for i in range(WRITERS)}

        answers = _at_once(session_of, [("PATCH", "/api/fabrics/fabrics/demo/", {"description": f"f{i}"})
                                        for i in range(WRITERS)])
        assert [s for s, _ in answers] == [200] * WRITERS, [(s, b[:200]) for s, b in answers if s != 200]

        # Ten adds of the same P_Key: one wins, the others learn why; none is a 500.
        answers = _at_once(session_of, [("POST", "/api/tenancy/fabrics/demo/pkeys/add/",
                                         {"pkey": "0x0777", "name": "race"}) for _ in range(WRITERS)])
        statuses = sorted(s for s, _ in answers)
        assert statuses.count(201) + statuses.count(200) == 1, answers
        assert all(s in (200, 201, 400, 409) for s in statuses), answers

        log = server.log.read_text()
        assert "database is locked" not in log and "Traceback" not in log, log[-3000:]
