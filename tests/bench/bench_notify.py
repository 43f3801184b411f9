"""Notifications at 10,000 condition changes a minute, fanned out to 5 channels, beside the engine's tick (issue 39).

The demo fabric's real runner ticks once a second (embedded default: one process, SQLite, the notify thread sends);
each tick its alerts carry a sliding window of port conditions (``link_down`` on the fabric's switches): 84 raised
and 84 cleared a tick, 10,080 changes a minute, which the runner's signals hand to the events recorder, whose
``events_changed`` hands them to the dispatcher (matching, silences, rendering per channel view, queueing) on the
notify thread (it ran on the recorder's thread and held the recording back), which then sends them to five real
receivers, each its own process: two webhooks
(``ibweb`` and ``slack`` payloads, ``tests/ibweb/notify/receiver_process.py``), syslog over TCP and over UDP
(rsyslogd) and Alertmanager (Debian's ``prometheus-alertmanager``). No rate limit (every message is sent).

Measured side by side in one run, in alternating phases of ``--phase`` seconds (``--pairs`` pairs): the same churn
with the rule off (no notification at all) and on (5 channels). Printed: tick wall time (mean, median, p95) of both,
the dispatcher's and the queue's cost per call (wall and CPU of their threads, and which threads), the messages sent
per channel, what was queued at the end of each phase (the queue drains between phases, so that a phase
without channels starts clean) and what each receiver got.

``--celery``: as deployed with Celery workers: PostgreSQL (a database of the bench's own on the server of
``TEST_DATABASE_URL``, default ``postgres://postgres@127.0.0.1:5432/``, dropped after), a redis-server of the bench's
own (broker and cache) and a Celery worker process (``-c 2``); the engine's process then only sends a
``dispatch_events`` task per write of the events recorder (its cost per call is printed), the worker dispatches and
sends.

Targets: mean tick time with the 5 channels within 10 % of without; >= 10,000 condition changes a minute recorded
with the channels on, and dispatched and sent; every message sent once the queue drained.
Run: ``.venv/bin/python tests/bench/bench_notify.py [--phase 15] [--pairs 4] [--celery]``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
WORK = Path(tempfile.mkdtemp(prefix="bench-notify-"))
os.environ.pop("REDIS_URL", None)
os.environ.pop("IBWEB_CELERY_EAGER", None)
CELERY = "--celery" in sys.argv  # read before Django's settings: they follow REDIS_URL
REDIS = None
if CELERY:
    from tests.support.faults import PrivateRedis

    REDIS = PrivateRedis(WORK)
    REDIS.start()
    os.environ["REDIS_URL"] = REDIS.url
    os.environ["IBWEB_REDIS_NAMESPACE"] = "benchnotify"
    import psycopg

    PG_SERVER = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test").rsplit("/", 1)[0]
    PG_NAME = f"bench_notify_{os.getpid()}"
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as pg:
        pg.execute(f'CREATE DATABASE "{PG_NAME}"')
    os.environ["DATABASE_URL"] = f"{PG_SERVER}/{PG_NAME}"


def drop_database() -> None:
    """The bench's own PostgreSQL database dropped (--celery)."""
    if CELERY:
        import psycopg

        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as pg:
            pg.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
os.environ["DATABASE_URL"] = f"sqlite:///{WORK / 'db.sqlite3'}"
os.environ["IBWEB_HISTORY_DIR"] = str(WORK / "history")
os.environ["IBWEB_VAR_DIR"] = str(WORK)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the bench's own set-up and counts query from its event loop

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from tests.bench.targets import machine, target  # noqa: E402

#: Conditions raised (and as many cleared) each tick: 168 changes a tick, 10,080 a minute at one tick a second.
PER_TICK = 84
#: Conditions open at once.
WINDOW = 504


class Churn:
    """A sliding window of port conditions over the fabric's switches: each tick ``PER_TICK`` enter, as many leave."""

    def __init__(self, switches: list[str], universe: int = PER_TICK * 150) -> None:
        per = -(-universe // len(switches))
        self.ports = [f"{s} port {p}" for s in switches for p in range(1, per + 1)][:universe]
        self.k = 0

    def alerts(self) -> list[dict]:
        self.k += 1
        start = self.k * PER_TICK
        return [{"kind": "link_down", "severity": "critical", "port": self.ports[i % len(self.ports)],
                 "message": f"{self.ports[i % len(self.ports)]} is down"} for i in range(start, start + WINDOW)]


class Timed:
    """Wraps a function: calls, wall and CPU seconds of the calling thread, the threads it ran on."""

    def __init__(self, fn) -> None:
        self.fn, self.calls, self.wall, self.cpu, self.threads = fn, 0, 0.0, 0.0, set()
        self.lock = threading.Lock()
        self.active = True  # counted (the dispatcher: while the rule is on)
        self.changes = 0  # the dispatcher's: events opened and closed it was given

    def __call__(self, *args, **kwargs):
        if not self.active:
            return self.fn(*args, **kwargs)
        w, c = time.perf_counter(), time.thread_time()
        try:
            return self.fn(*args, **kwargs)
        finally:
            with self.lock:
                self.calls += 1
                if len(args) == 3:
                    self.changes += len(args[1]) + len(args[2])
                self.wall += time.perf_counter() - w
                self.cpu += time.thread_time() - c
                self.threads.add(threading.current_thread().name.rstrip("_0123456789") or "?")


def start_webhook(port: int, journal: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "tests.ibweb.notify.receiver_process", str(port), str(journal)],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready", "webhook receiver did not start"
    return proc


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def start_worker(log: Path) -> subprocess.Popen:
    """A Celery worker of the bench's broker (2 processes), its output to ``log``; waits until it is ready."""
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "ibweb", "worker", "-c", "2", "-Q", "benchnotify",
                             "-l", "info", "--without-heartbeat", "--without-gossip", "--without-mingle"],
                            cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while "ready" not in (log.read_text() if log.exists() else ""):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the Celery worker did not start: {log.read_text()[-2000:]}")
        time.sleep(0.2)
    return proc


def cpu_s(pid: int) -> float:
    """CPU seconds (user and system) of a process and its children alive now (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid]
    while pids:
        p = pids.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            pids += [int(c) for t in Path(f"/proc/{p}/task").iterdir()
                     for c in (t / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


async def run(a) -> int:
    from ibweb.fabrics.models import Fabric
    from ibweb.live.engine.runner import FabricRunner
    from ibweb.notify import queue, receivers, tasks
    from ibweb.notify.config import check_channel
    from ibweb.notify.models import Channel, Delivery, Rule
    from tests.support.notify_mail_syslog import rsyslog
    from tests.support.notify_servers import ALERTMANAGER, Alertmanager, free_port
    from tests.support.processes import stop_process

    call_command("migrate", verbosity=0, interactive=False)
    call_command("ensure_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    row = Fabric.objects.get(slug="demo")
    row.tick_s = 1.0
    row.save(update_fields=["tick_s"])
    with ExitStack() as stack:
        hooks = []
        for name in ("hook-ibweb", "hook-slack"):
            port, journal = free_port(), WORK / f"{name}.jsonl"
            stack.callback(stop_process, start_webhook(port, journal))
            hooks.append((name, port, journal))
        syslog = stack.enter_context(rsyslog(WORK / "rsyslog"))
        if not shutil.which(ALERTMANAGER):
            print(f"{ALERTMANAGER} missing: apt-get install prometheus-alertmanager")
            return 1
        (WORK / "am").mkdir()
        am = Alertmanager(WORK / "am").start()
        stack.callback(am.stop)
        configs = [("webhook", hooks[0][0], {"url": f"http://127.0.0.1:{hooks[0][1]}/hook", "timeout_s": 5}),
                   ("webhook", hooks[1][0], {"url": f"http://127.0.0.1:{hooks[1][1]}/hook", "template": "slack",
                                             "timeout_s": 5}),
                   ("syslog", "syslog-tcp", {"host": "127.0.0.1", "port": syslog.tcp_port, "transport": "tcp"}),
                   ("syslog", "syslog-udp", {"host": "127.0.0.1", "port": syslog.udp_port, "transport": "udp"}),
                   ("alertmanager", "alertmanager", {"url": am.url})]
        channels = []
        for kind, name, config in configs:
            plain, secrets = check_channel(kind, config, {})
            channels.append(Channel.objects.create(name=name, kind=kind, config=plain, secrets=secrets,
                                                   rate_limit_per_min=0, repeat_interval_s=0))
        rule = Rule.objects.create(name="everything", min_severity="info", enabled=False)
        rule.channels.set(channels)

        if CELERY:
            worker = start_worker(WORK / "worker.log")
            stack.callback(stop_process, worker)
            dispatch = Timed(tasks.dispatch_events.delay)  # in this process: the sending only
            tasks.dispatch_events.delay = dispatch
        else:
            dispatch = Timed(receivers.dispatch)
            receivers.dispatch = dispatch
        deliver = Timed(queue.deliver_channel)
        queue.deliver_channel = deliver

        def settle(timeout_s: float) -> float:
            """What was dispatched is sent: the notify thread idle, or (workers) no task waiting or running and
            nothing queued, for a second. Returns when that was (monotonic time)."""
            if not CELERY:
                queue.wait_idle(timeout_s)
                return time.monotonic()
            import redis

            broker = redis.Redis.from_url(REDIS.url)
            end, quiet_since = time.monotonic() + timeout_s, None
            while time.monotonic() < end:
                busy = (broker.llen("benchnotify") or broker.hlen("unacked")
                        or Delivery.objects.filter(state="queued").exists())
                quiet_since = None if busy else quiet_since or time.monotonic()
                if quiet_since and time.monotonic() - quiet_since > 1.0:
                    return quiet_since
                time.sleep(0.1)
            return time.monotonic()

        dispatch.active = False  # counted in the phases with channels only
        changes = [0]
        from ibweb.events.signals import events_changed

        def count(sender, opened, closed, **kwargs) -> None:
            changes[0] += len(opened) + len(closed)

        events_changed.connect(count, weak=False)

        runner = FabricRunner(row)
        await runner.start()
        f = runner.source.fabric
        switches = [str(f.node_name[i]) for i in f.switches]
        churn = Churn(switches)
        step = runner.source.step

        async def churning(seq, now):
            state = await step(seq, now)
            if state is not None:
                state = dataclasses.replace(state, alerts=[*state.alerts, *churn.alerts()])
            return state

        runner.source.step = churning
        ticks: dict[bool, list[float]] = defaultdict(list)
        engine_cpu: dict[bool, float] = defaultdict(float)  # CPU seconds of this process (all its threads)
        marks: dict[bool, list[tuple[int, float]]] = defaultdict(list)  # (changes, seconds) per phase
        backlog: list[int] = []  # queued at the end of each phase with channels
        sent_marks: list[float] = []  # seconds from the start of each phase with channels until all was sent
        for _ in range(3):  # warm up: the first window opens
            await runner.tick()
            await asyncio.sleep(row.tick_s)
        await asyncio.gather(*runner.pending())
        settle(60)
        worker_cpu0 = cpu_s(worker.pid) if CELERY else 0.0
        for pair in range(a.pairs):
            for on in ((False, True) if pair % 2 == 0 else (True, False)):
                Rule.objects.filter(pk=rule.pk).update(enabled=on)
                dispatch.active = on
                c0, t0, cpu0 = changes[0], time.monotonic(), time.process_time()
                next_at = time.monotonic()
                for _ in range(int(a.phase / row.tick_s)):
                    started = time.perf_counter()
                    await runner.tick()
                    ticks[on].append(time.perf_counter() - started)
                    next_at += row.tick_s
                    await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                engine_cpu[on] += time.process_time() - cpu0  # the phase's ticks, its recorder and notify threads
                if on:
                    backlog.append(Delivery.objects.filter(state="queued").count())
                await asyncio.gather(*runner.pending())  # the phase's signals recorded, its queue sent: the
                marks[on].append((changes[0] - c0, time.monotonic() - t0))  # next phase starts clean
                done = await asyncio.to_thread(settle, 120)

                if on:
                    sent_marks.append(done - t0)  # dispatched and sent
        worker_cpu = cpu_s(worker.pid) - worker_cpu0 if CELERY else 0.0
        Rule.objects.filter(pk=rule.pk).update(enabled=False)
        await asyncio.gather(*runner.pending())
        for _ in range(120):  # drain what is left
            queue.pump(run=lambda ids: [queue.deliver_channel(i) for i in ids])
            queue.wait_idle(60)
            if not Delivery.objects.filter(state="queued").exists():
                break
            await asyncio.sleep(0.5)
        await runner.source.stop()

        def stats(xs: list[float]) -> str:
            xs = sorted(xs)
            return (f"mean {statistics.mean(xs) * 1000:.1f} ms, median {statistics.median(xs) * 1000:.1f} ms, "
                    f"p95 {xs[int(0.95 * (len(xs) - 1))] * 1000:.1f} ms over {len(xs)} ticks")

        print(machine())
        print(f"fabric: demo, {f.num_nodes} nodes, {f.num_links} links; tick {row.tick_s} s; {a.pairs} pairs of "
              f"{a.phase:.0f} s phases (off/on alternating); "
              + ("Celery worker (-c 2), redis-server, PostgreSQL" if CELERY
                 else "embedded default (notify thread), SQLite"))
        print(f"tick without notifications: {stats(ticks[False])}")
        print(f"tick with 5 channels:       {stats(ticks[True])}")
        per_tick = {on: engine_cpu[on] / max(1, len(ticks[on])) * 1000 for on in (False, True)}
        print(f"engine process CPU (all its threads, over the phase's ticks): "
              f"{per_tick[False]:.1f} ms a tick without notifications, {per_tick[True]:.1f} ms with 5 channels")
        on_changes = sum(c for c, _ in marks[True]) / sum(s for _, s in marks[True]) * 60
        off_changes = sum(c for c, _ in marks[False]) / sum(s for _, s in marks[False]) * 60
        dispatched = dispatch.changes / sum(sent_marks) * 60
        print(f"condition changes recorded: {on_changes:,.0f} a minute with channels, {off_changes:,.0f} without; "
              f"dispatched and sent: {dispatched:,.0f} a minute (a phase lasts until its last change is recorded, "
              f"and until its last message is sent)")
        n = max(1, dispatch.calls)
        if CELERY:
            print(f"engine process: {dispatch.calls} dispatch_events tasks sent, "
                  f"{dispatch.wall / n * 1000:.2f} ms wall and {dispatch.cpu / n * 1000:.2f} ms CPU a task, "
                  f"on threads {sorted(dispatch.threads)}; "
                  f"the worker: {worker_cpu:.1f} s CPU over the phases (dispatching and sending)")
        else:
            print(f"dispatcher: {dispatch.calls} calls, {dispatch.wall / n * 1000:.1f} ms wall and "
                  f"{dispatch.cpu / n * 1000:.1f} ms CPU a call, on threads {sorted(dispatch.threads)}")
        sent = Delivery.objects.filter(state="sent").count()
        print(f"queue: {deliver.calls} channel runs, {deliver.wall * 1000 / max(1, sent):.1f} ms wall and "
              f"{deliver.cpu * 1000 / max(1, sent):.1f} ms CPU a message sent, on threads {sorted(deliver.threads)}")
        per = {ch.name: Delivery.objects.filter(channel=ch, state="sent").count() for ch in channels}
        print(f"messages sent per channel: {json.dumps(per)}; queued at the end of each phase with channels: {backlog}")
        got = {name: lines(journal) for name, _, journal in hooks}
        got["syslog (tcp+udp)"] = lines(syslog.out)
        print(f"received: {json.dumps(got)}")
        mean_off, mean_on = statistics.mean(ticks[False]), statistics.mean(ticks[True])
        target("tick time, 5 channels / none (mean)", mean_on / mean_off, 1.10, digits=3)
        target("condition changes a minute, recorded with 5 channels", on_changes, 10_000, at_least=True, digits=5)
        target("condition changes a minute, dispatched and sent", dispatched, 10_000, at_least=True, digits=5)
        left = Delivery.objects.filter(state__in=["queued", "failed"]).count()
        target("messages not sent after the queue drained", left, 0, digits=3)
        webhooks_ok = all(got[name] >= per[name] for name, _, _ in hooks)
        target("webhook messages received / sent", min(got[n] / max(1, per[n]) for n, _, _ in hooks), 1.0,
               at_least=True, digits=3)
        return 0 if webhooks_ok and left == 0 else 1


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--phase", type=float, default=15.0, help="seconds of each phase")
    p.add_argument("--pairs", type=int, default=4, help="pairs of phases (without, with channels)")
    p.add_argument("--celery", action="store_true", help="with a Celery worker (and a redis-server of its own)")
    a = p.parse_args()
    try:
        return asyncio.run(run(a))
    finally:
        if REDIS is not None:
            REDIS.kill()
        drop_database()
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
