"""What the notification tests share: a fabric row, channels and rules, alerts raised through the real recorder."""

from __future__ import annotations

import time

from ibweb.events.recorder import EventRecorder
from ibweb.fabrics.models import Fabric
from ibweb.notify import queue
from ibweb.notify.config import check_channel
from ibweb.notify.models import Channel, Rule

SECRET = "0123456789abcdef-hmac"


def lab() -> Fabric:
    return Fabric.objects.create(name="Lab", slug="lab", mode="telemetry")


def channel(kind: str, config: dict, name: str = "ops", tenant=None, **fields) -> Channel:
    plain, secrets = check_channel(kind, config, {})
    return Channel.objects.create(name=name, kind=kind, config=plain, secrets=secrets, tenant=tenant, **fields)


def rule(*channels: Channel, tenant=None, **matchers) -> Rule:
    r = Rule.objects.create(name="all", tenant=tenant, min_severity=matchers.pop("min_severity", "info"),
                            **matchers)
    r.channels.set(channels)
    return r


def port_down(switch: str, port: int) -> dict:
    return {"kind": "link_down", "severity": "critical", "port": f"{switch} port {port}",
            "message": f"{switch} port {port} is down"}


class Ticks:
    """A fabric's alerts raised and cleared through the events recorder, tick after tick (wall time advancing)."""

    def __init__(self, fabric: Fabric, t0: float | None = None, topology=None, jobs=None) -> None:
        self.recorder = EventRecorder(fabric.pk)
        self.t = t0 if t0 is not None else time.time() - 600
        self.seq, self.topology, self.jobs = 0, topology, jobs or []

    def tick(self, raised=(), cleared=()) -> None:
        self.seq += 1
        self.t += 1.0
        self.recorder.apply(list(raised), list(cleared), self.seq, self.t, first=self.seq == 1, fabric=self.topology,
                            jobs=self.jobs)
        queue.wait_idle(30)
