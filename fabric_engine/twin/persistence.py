"""Deviations that last: the persistence rule that turns ranked deviations into alerts.

One bad sweep is not an alert (a counter read late, a job between iterations). A
deviation becomes an alert when the same port shows the same kind of deviation in
``raise_after`` consecutive comparisons; the alert ends after ``clear_after``
consecutive comparisons without it. Ports are named by :func:`~.expected.port_key`
(node GUID and port), so a deviation keeps its identity when a new discovery
renumbers the links.

The tracker also remembers, per port, the traffic the known jobs were expected to
put there. When a port that was expected to carry at least ``min_gbps`` vanishes
from the topology (its link went down) while one of those jobs still runs, that is
a deviation of kind ``down``, against expected, until the link returns or the jobs
end.

>>> t = DeviationTracker(raise_after=2, clear_after=1)
>>> dev = {"kind": "below", "key": "0x1/3", "label": "leaf01 port 3", "expected_gbps": 80.0, "observed_gbps": 0.0}
>>> [len(t.update([dev], t=float(i)).raised) for i in range(3)]
[0, 1, 0]
>>> len(t.update([], t=3.0).cleared)
1
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["DeviationTracker", "TrackerUpdate", "alert_of", "without_jobs"]

_SEVERITY = {"no_route": "critical", "down": "critical", "below": "warning", "unexplained": "warning",
             "above": "warning"}
#: Kinds that persist as one: an excess on a port is the same deviation whether or not a known job's traffic
#: shares its link ("above" or "unexplained" after a re-route); the alert says what the newest comparison saw.
_PERSISTS_AS = {"above": "unexplained"}
_WHAT = {
    "below": "carries far less than its jobs should drive",
    "unexplained": "carries traffic no known job explains",
    "above": "carries more than its jobs should drive (above expected)",
    "no_route": "stops the traffic of known jobs: it has no route",
    "down": "is down while jobs routed over it still run",
}


def alert_of(dev: dict, *, state: str = "raised", since: float | None = None) -> dict:
    """The alert (``kind`` ``"twin"``) of a deviation, for frames and the event store."""
    exp, obs = dev.get("expected_gbps"), dev.get("observed_gbps")
    figures = f" (expected {exp:g} Gb/s, observed {obs:g} Gb/s)" if exp is not None and obs is not None else ""
    if dev.get("flows"):
        figures += f" ({dev['flows']} flows)"
    jobs = list(dev.get("jobs") or [])
    who = f"; jobs {', '.join(jobs[:5])}" if jobs else ""
    text = f"{dev.get('label', dev['key'])} {_WHAT.get(dev['kind'], dev['kind'])}{figures}"
    out = {"kind": "twin", "deviation": dev["kind"], "severity": _SEVERITY.get(dev["kind"], "warning"),
           "key": dev["key"], "link": dev.get("link", -1), "label": dev.get("label", dev["key"]), "state": state,
           "since": since, "jobs": jobs, "hosts": list(dev.get("hosts") or []), "message": text + who}
    for end in ("a", "b"):  # the ports it is about (the event store names and hides hosts by them)
        if dev.get(end):
            out[end] = dev[end]
    if dev.get("a"):
        out["port"] = dev["a"]
    return out


def without_jobs(alert: dict) -> dict:
    """``alert`` without its job IDs (field and message), for a feed that users of other tenants read."""
    out = {k: v for k, v in alert.items() if k != "jobs"}
    jobs = alert.get("jobs") or []
    if jobs:
        out["message"] = alert["message"].removesuffix(f"; jobs {', '.join(jobs[:5])}")
    return out


@dataclass
class TrackerUpdate:
    """What one comparison changed: alerts ``raised`` and ``cleared`` now, and every ``active`` one."""

    raised: list[dict] = field(default_factory=list)
    cleared: list[dict] = field(default_factory=list)
    active: list[dict] = field(default_factory=list)


@dataclass
class _Entry:
    dev: dict
    seen: int = 0
    missed: int = 0
    first: float = 0.0
    active: bool = False


class DeviationTracker:
    """Applies the persistence rule (see the module docstring); one per fabric.

    Parameters
    ----------
    raise_after : int
        Consecutive comparisons with a deviation before it is an alert.
    clear_after : int
        Consecutive comparisons without it before the alert ends.
    min_gbps : float
        Expected traffic that makes a vanished port a ``down`` deviation.
    """

    def __init__(self, raise_after: int = 3, clear_after: int = 3, min_gbps: float = 1.0) -> None:
        if raise_after < 1 or clear_after < 1:
            raise ValueError("raise_after and clear_after must be at least 1")
        self.raise_after = raise_after
        self.clear_after = clear_after
        self.min_gbps = float(min_gbps)
        self._entries: dict[tuple[str, str], _Entry] = {}
        #: port key -> (expected Gb/s, label, job ids, host GUIDs) of the last model on a topology that had the port
        self._expected: dict[str, tuple[float, str, tuple[str, ...], tuple[str, ...]]] = {}

    def remember(self, expected: Mapping[str, tuple[float, str, Iterable[str], Iterable[str]]]) -> None:
        """Record the expected traffic per port (``(gbps, label, jobs, host GUIDs)``); absent ports are kept."""
        for key, (gbps, label, jobs, hosts) in expected.items():
            self._expected[key] = (float(gbps), label, tuple(jobs), tuple(hosts))

    def down(self, present: set[str], running: set[str]) -> list[dict]:
        """``down`` deviations: remembered ports absent from ``present`` that running jobs were expected to use."""
        out, gone = [], []
        for key, (gbps, label, jobs, hosts) in self._expected.items():  # a loop over remembered loaded ports
            if key in present:
                continue
            still = [j for j in jobs if j in running]
            if gbps >= self.min_gbps and still:
                a, _, b = label.partition(" -> ")
                out.append({"kind": "down", "link": -1, "key": key, "label": label, "a": a, "b": b or None,
                            "expected_gbps": round(gbps, 3), "observed_gbps": 0.0, "capacity_gbps": None,
                            "score": 1.0, "jobs": still[:10], "hosts": list(hosts)})
            else:
                gone.append(key)
        for key in gone:
            del self._expected[key]
        return out

    def update(self, deviations: list[dict], t: float) -> TrackerUpdate:
        """Count one comparison's ``deviations`` (dicts with ``kind`` and ``key``) and apply the rule."""
        up = TrackerUpdate()
        now = {(_PERSISTS_AS.get(d["kind"], d["kind"]), d["key"]): d for d in deviations}
        for k, dev in now.items():  # a loop over this comparison's deviations (a ranked, bounded list)
            entry = self._entries.get(k)
            if entry is None:
                entry = self._entries[k] = _Entry(dev, first=t)
            entry.dev, entry.seen, entry.missed = dev, entry.seen + 1, 0
            if not entry.active and entry.seen >= self.raise_after:
                entry.active = True
                up.raised.append(alert_of(dev, since=entry.first))
        for k in [k for k in self._entries if k not in now]:
            entry = self._entries[k]
            entry.missed += 1
            entry.seen = 0
            if not entry.active:
                del self._entries[k]
            elif entry.missed >= self.clear_after:
                up.cleared.append(alert_of(entry.dev, state="cleared", since=entry.first))
                del self._entries[k]
        up.active = [alert_of(e.dev, state="active", since=e.first) for e in self._entries.values() if e.active]
        return up
