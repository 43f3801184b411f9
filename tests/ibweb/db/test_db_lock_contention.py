"""The embedded default under lock contention: background writers wait, nothing is lost.

Another connection takes SQLite's write lock again and again (as the engine, a job poll and
web requests do at once) while the event recorder, job polls, collector sweeps and partition
changes write from threads whose busy timeout is much shorter than the lock is held: each write
must wait and land. Every event, job, sweep and member written is counted at the end.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import pytest
from django.db import OperationalError, connection, connections

from ibweb.db.retry import is_transient, retry_locked
from ibweb.events.models import Event
from ibweb.events.receivers import record_alerts
from ibweb.fabrics.choices import FabricMode
from ibweb.fabrics.models import Fabric
from ibweb.telemetry.choices import CollectorSource, SweepStatus
from ibweb.telemetry.models import CollectorConfig, Sweep
from ibweb.telemetry.sweeps import run_sweep
from ibweb.tenancy import services
from ibweb.tenancy.models import Partition
from ibweb.twin import jobs
from ibweb.twin.choices import JobSourceKind
from ibweb.twin.models import JobSource, ScheduledJob
from tests.ibweb.telemetry.test_telemetry_routing import drop as fill_drop_dir
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants  # noqa: F401

sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's single write lock (embedded default)")

SIGNALS = 40
POLLS = 12
SWEEPS = 6
MEMBERS = 6  # hosts 2..7 of the fixture's 8-host fabric


class LockHolder(threading.Thread):
    """Holds the database's write lock for ``hold_s`` at a time, with short gaps, until stopped."""

    def __init__(self, path: str, hold_s: float = 0.25, gap_s: float = 0.03) -> None:
        super().__init__(daemon=True)
        self.path, self.hold_s, self.gap_s = path, hold_s, gap_s
        self.stop = threading.Event()
        self.taken = threading.Event()  # set once it holds the lock the first time
        self.held = 0

    def run(self) -> None:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            while not self.stop.is_set():
                db.execute("BEGIN IMMEDIATE")
                self.held += 1
                self.taken.set()
                time.sleep(self.hold_s)
                db.execute("COMMIT")
                time.sleep(self.gap_s)
        finally:
            db.close()


@pytest.fixture
def short_busy_timeout():
    """New connections (one per thread) begin IMMEDIATE, as shipped, and give up on a lock after 20 ms, not 20 s."""
    options = connections.settings["default"].setdefault("OPTIONS", {})
    before = options.get("timeout"), options.get("transaction_mode")
    options["timeout"], options["transaction_mode"] = 0.02, "IMMEDIATE"
    yield
    options["timeout"], options["transaction_mode"] = before


def in_thread(fn, errors: list) -> threading.Thread:
    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_retry_gives_up_on_other_errors_and_inside_a_transaction():
    calls = []

    def broken():
        calls.append(1)
        raise OperationalError("no such table: x")

    with pytest.raises(OperationalError, match="no such table"):
        retry_locked(broken, sleep=lambda s: None)
    assert len(calls) == 1 and not is_transient(OperationalError("no such table: x"))
    attempts = iter([OperationalError("database is locked")] * 3 + [None])

    def flaky():
        error = next(attempts)
        if error is not None:
            raise error
        return "written"

    assert retry_locked(flaky, sleep=lambda s: None) == "written"


@sqlite_only
@pytest.mark.django_db(transaction=True)
def test_writers_wait_out_a_locked_database_and_lose_nothing(tmp_path, short_busy_timeout, partitions):  # noqa: F811
    row = Fabric.objects.create(name="Busy", slug="busy", mode=FabricMode.TELEMETRY)
    drop = tmp_path / "jobs"
    drop.mkdir()
    source = JobSource.objects.create(fabric=row, kind=JobSourceKind.DIRECTORY, drop_dir=str(drop))
    partition = partitions[0]
    members_before = partition.members.count()
    config = CollectorConfig.objects.create(fabric=row, source=CollectorSource.DIRECTORY,
                                            drop_dir=str(tmp_path / "drop"), stale_after_s=600.0)
    fill_drop_dir(tmp_path / "drop", time.time(), dump=None)
    holder = LockHolder(connection.settings_dict["NAME"])
    holder.start()
    # the writers start while it holds the lock: their first writes wait (their busy timeout is 20 ms, a hold 250 ms)
    assert holder.taken.wait(10), "the lock holder never took the lock"
    errors: list[BaseException] = []

    def alerts() -> None:  # the runner's signals, one after the other, each raising one and clearing one
        for i in range(SIGNALS):
            raised = [{"kind": "errors", "severity": "warning", "port": f"leaf{i} 1", "counter": "SymbolErrorCounter",
                       "link": i, "message": f"leaf{i} 1: symbol errors"}]
            cleared = [{"kind": "errors", "severity": "warning", "port": f"leaf{i - 1} 1",
                        "counter": "SymbolErrorCounter", "link": i - 1, "message": ""}] if i else []
            record_alerts(None, fabric_id=row.pk, seq=i + 1, t=1_800_000_000.0 + i, raised=raised, cleared=cleared)

    def polls() -> None:  # the scheduler's listing grows by one job per poll
        for i in range(POLLS):
            listing = [{"job_id": 100 + k, "job_state": "RUNNING", "nodes": f"gpu{k:03d}"} for k in range(i + 1)]
            (drop / "squeue.json").write_text(json.dumps({"jobs": listing}))
            jobs.poll(JobSource.objects.get(pk=source.pk))

    def members() -> None:  # web writes: one member at a time, each through its audited transaction
        for i in range(MEMBERS):
            p = Partition.objects.get(pk=partition.pk)
            retry_locked(services.add_members, p, [(host_guid(2 + i), "full")], via="test",
                         what="partition change")

    def sweeps() -> None:  # the collector: a drop-directory sweep at a time (discovery, counters, record)
        for k in range(SWEEPS):  # each of new counters (files not rewritten since the last sweep: a failure)
            fill_drop_dir(tmp_path / "drop", time.time() + k, dump=None)
            run_sweep(CollectorConfig.objects.get(pk=config.pk))

    threads = [in_thread(fn, errors) for fn in (alerts, polls, members, sweeps)]
    for t in threads:
        t.join(timeout=120)
    holder.stop.set()
    holder.join(timeout=10)
    assert not [t for t in threads if t.is_alive()], "a writer never finished"
    assert errors == []
    assert holder.held >= 2, "the lock was not taken again while they wrote"  # (3 where the writes took < 1 s)
    events = Event.objects.filter(fabric=row)
    assert events.count() == SIGNALS
    assert list(events.filter(active=True).values_list("key", flat=True)) == [
        e.key for e in events.order_by("-first_seen")[:1]]  # all but the newest were cleared, in order
    assert set(ScheduledJob.objects.filter(fabric=row).values_list("job_id", flat=True)) == {
        str(100 + k) for k in range(POLLS)}
    assert Partition.objects.get(pk=partition.pk).members.count() == members_before + MEMBERS
    assert list(Sweep.objects.filter(config=config).values_list("status", flat=True)) == [SweepStatus.OK] * SWEEPS
