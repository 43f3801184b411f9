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

Targets: mean tick time with the 5 channels within 10 % of without; >= 10,000 condition changes a minute recorded
with the channels on, and dispatched and sent; every message sent once the queue drained.
Run: ``.venv/bin/python tests/bench/bench_notify.py [--phase 15] [--pairs 4]``.
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


async def run(a) -> int:
    from ibweb.fabrics.models import Fabric
    from ibweb.live.engine.runner import FabricRunner
    from ibweb.notify import queue, receivers
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

        dispatch, deliver = Timed(receivers.dispatch), Timed(queue.deliver_channel)
        receivers.dispatch, queue.deliver_channel = dispatch, deliver
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
        marks: dict[bool, list[tuple[int, float]]] = defaultdict(list)  # (changes, seconds) per phase
        backlog: list[int] = []  # queued at the end of each phase with channels
        sent_marks: list[float] = []  # seconds from the start of each phase with channels until all was sent
        for _ in range(3):  # warm up: the first window opens
            await runner.tick()
            await asyncio.sleep(row.tick_s)
        await asyncio.gather(*runner.pending())
        queue.wait_idle(60)
        for pair in range(a.pairs):
            for on in ((False, True) if pair % 2 == 0 else (True, False)):
                Rule.objects.filter(pk=rule.pk).update(enabled=on)
                dispatch.active = on
                c0, t0 = changes[0], time.monotonic()
                next_at = time.monotonic()
                for _ in range(int(a.phase / row.tick_s)):
                    started = time.perf_counter()
                    await runner.tick()
                    ticks[on].append(time.perf_counter() - started)
                    next_at += row.tick_s
                    await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                if on:
                    backlog.append(Delivery.objects.filter(state="queued").count())
                await asyncio.gather(*runner.pending())  # the phase's signals recorded, its queue sent: the
                marks[on].append((changes[0] - c0, time.monotonic() - t0))  # next phase starts clean
                await asyncio.to_thread(queue.wait_idle, 120)
                if on:
                    sent_marks.append(time.monotonic() - t0)  # dispatched and sent
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
              f"{a.phase:.0f} s phases (off/on alternating)")
        print(f"tick without notifications: {stats(ticks[False])}")
        print(f"tick with 5 channels:       {stats(ticks[True])}")
        on_changes = sum(c for c, _ in marks[True]) / sum(s for _, s in marks[True]) * 60
        off_changes = sum(c for c, _ in marks[False]) / sum(s for _, s in marks[False]) * 60
        dispatched = dispatch.changes / sum(sent_marks) * 60
        print(f"condition changes recorded: {on_changes:,.0f} a minute with channels, {off_changes:,.0f} without; "
              f"dispatched and sent: {dispatched:,.0f} a minute (a phase lasts until its last change is recorded, "
              f"and until its last message is sent)")
        n = max(1, dispatch.calls)
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
    a = p.parse_args()
    try:
        return asyncio.run(run(a))
    finally:
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
