"""A node missing and a cable trained down stay one condition (one open event) until a discovery shows them fixed.

The ibsim fat tree's ``iblinkinfo`` capture, edited: gpu0008 gone (its block and the leaf04
port that led to it), or its cable at 1X instead of 4X, arrives through the drop directory.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ibweb.events.models import Event
from ibweb.events.recorder import EventRecorder

from .test_reference_cabling import conditions, sweep, watched
from .test_telemetry_routing import DATA, _clean_cache  # noqa: F401 (autouse: a clean cache)

pytestmark = pytest.mark.django_db(transaction=True)

BASE = (DATA / "iblinkinfo.txt").read_text()


def edited(tmp_path: Path, name: str, keep=lambda line: True, change=lambda line: line) -> str:
    """``iblinkinfo.txt`` with the lines ``keep`` refuses left out and the others through ``change``; its path."""
    path = tmp_path / name
    path.write_text("".join(change(line) for line in BASE.splitlines(keepends=True) if keep(line)))
    return str(path)


def gpu8_line(line: str) -> bool:
    return "gpu0008" in line or "0xb83fd20300000081" in line or ("       5    2[" in line)


def record(engine, found, before, seq) -> None:
    EventRecorder(engine.fabric_id).apply(found, before, seq=seq, t=time.time(), first=seq == 1,
                                          fabric=engine.source.fabric)


def lasting(tmp_path, linkinfo: str, kind: str) -> None:
    config, engine, t = watched(tmp_path)
    before: list[dict] = []
    first = None
    for k in range(3):  # the same fault seen by three discoveries: one condition, one open event
        sweep(config, tmp_path, linkinfo, t + 10 * (k + 1))
        found = conditions(engine)
        (c,) = [x for x in found if x["kind"] == kind]
        first = first or c
        assert c["since"] == first["since"] and c["condition"] is True
        record(engine, found, before, k + 1)
        before = found
        (event,) = Event.objects.filter(kind=kind)
        assert event.active and event.occurrence == 1
    sweep(config, tmp_path, "iblinkinfo.txt", t + 40)  # fixed
    found = conditions(engine)
    assert [x for x in found if x["kind"] == kind] == []
    record(engine, found, before, 4)
    assert not Event.objects.get(kind=kind).active


def test_a_missing_node_stays_a_condition_until_it_is_back(tmp_path):
    lasting(tmp_path, edited(tmp_path, "missing.txt", keep=lambda line: not gpu8_line(line)), "node_missing")


def test_a_cable_trained_down_stays_a_width_condition_until_it_runs_4x_again(tmp_path):
    narrow = edited(tmp_path, "narrow.txt", change=lambda line: line.replace("( 4X", "( 1X") if gpu8_line(line)
                    else line)
    lasting(tmp_path, narrow, "width_degraded")
