"""The raw BER trend of the ports graded warning or error (issue 37, the port panel): which ports it tracks, its
ring of the last gradings, the per-lane values, and its bound."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.health.records import LANES
from fabric_engine.scenario import build_fabric
from ibweb.live.health.trend import GRADINGS, MAX_TRACKED, NOT_READ, BerTrend, port_trend
from tests.support.cluster_spec import PLANE

F = build_fabric(PLANE)
NODE = np.asarray(F.port_node, np.int32)
PORT = np.asarray(F.port_num, np.int16)


def ports(bad: dict[int, tuple[float, int]] | None = None, rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every port slot of ``F`` graded normal at a raw BER of 1e-9 but ``bad``: slot -> (raw BER, grade)."""
    n = NODE.size
    raw, grade = np.full(n, 1e-9), np.zeros(n, np.int8)
    for slot, (r, g) in (bad or {}).items():
        raw[slot], grade[slot] = r, g
    out = {"node": NODE, "port": PORT, "raw": raw, "grade": grade}
    return out if rows is None else {k: v[rows] for k, v in out.items()}


def trend_of(trend: BerTrend, slot: int) -> dict | None:
    return port_trend(trend.snapshot(), int(F.guid[NODE[slot]]), int(PORT[slot]))


def test_only_ports_graded_warning_or_error_are_tracked_and_their_ring_keeps_the_last_gradings():
    trend = BerTrend(gradings=4)
    trend.observe(0.0, F, ports(), None)
    assert len(trend) == 0
    for k in range(6):  # slot 5 a warning from grading 1 on, an error from 3 on, its raw BER rising
        trend.observe(float(k + 1), F, ports({5: (1e-6 * 10 ** (k / 2), 1 if k < 2 else 2)}), None)
    assert len(trend) == 1 and trend_of(trend, 6) is None
    seen = trend_of(trend, 5)
    assert seen["t"] == [3.0, 4.0, 5.0, 6.0]  # the last 4 gradings, oldest first
    assert seen["grade"] == ["error"] * 4
    assert seen["raw"] == pytest.approx([1e-5, 10 ** -4.5, 1e-4, 10 ** -3.5], rel=1e-3)  # float16 logs
    assert seen["lanes"] == [None] * LANES


def test_a_port_tracked_from_its_first_bad_grading_reads_not_read_before_it():
    trend = BerTrend(gradings=4)
    trend.observe(1.0, F, ports(), None)
    trend.observe(2.0, F, ports({7: (1e-4, 2)}), None)
    seen = trend_of(trend, 7)
    assert seen["t"] == [1.0, 2.0] and seen["grade"] == [None, "error"] and seen["raw"][0] is None


def test_per_lane_raw_ber_is_the_newest_grading_s():
    lanes = np.full((NODE.size, LANES), np.nan)
    lanes[9, :4] = [1e-9, 2e-6, 0.0, 5e-5]
    trend = BerTrend()
    trend.observe(1.0, F, ports({9: (5e-5, 1)}), lanes)
    assert trend_of(trend, 9)["lanes"] == [pytest.approx(1e-9, rel=1e-3), pytest.approx(2e-6, rel=1e-3), 0.0,
                                           pytest.approx(5e-5, rel=1e-3), *[None] * (LANES - 4)]


def test_a_recovered_port_is_dropped_after_a_whole_ring_of_normal_gradings():
    trend = BerTrend(gradings=3)
    trend.observe(1.0, F, ports({3: (1e-4, 2)}), None)
    trend.observe(2.0, F, ports(), None)
    trend.observe(3.0, F, ports(), None)
    assert trend_of(trend, 3)["grade"] == ["error", "normal", "normal"]
    trend.observe(4.0, F, ports(), None)
    assert len(trend) == 0


def test_ports_follow_their_guid_when_the_rows_change_and_read_not_read_while_absent():
    trend = BerTrend(gradings=4)
    trend.observe(1.0, F, ports({3: (1e-4, 2)}), None)
    rows = np.r_[NODE.size - 1:-1:-1]  # the same ports, in reverse order
    trend.observe(2.0, F, ports({3: (2e-4, 2)}, rows=rows), None)
    trend.observe(3.0, F, ports(rows=np.flatnonzero(np.arange(NODE.size) != 3)), None)  # not read
    assert trend_of(trend, 3)["raw"][:2] == [pytest.approx(1e-4, rel=1e-3), pytest.approx(2e-4, rel=1e-3)]
    assert trend_of(trend, 3)["grade"] == ["error", "error", None]


def test_past_its_capacity_the_mildest_ports_are_dropped():
    trend = BerTrend(gradings=4, capacity=3)
    bad = {1: (1e-4, 2), 2: (1e-6, 1), 4: (1e-5, 1), 8: (1e-3, 2), 11: (1e-7, 1)}
    trend.observe(1.0, F, ports(bad), None)
    assert sorted((int(NODE[s]), int(PORT[s])) for s in bad if trend_of(trend, s)) == \
        sorted((int(NODE[s]), int(PORT[s])) for s in (1, 8, 4))  # both errors, then the highest warning


def test_its_bytes_at_capacity_are_the_docstring_s():
    trend = BerTrend(capacity=MAX_TRACKED)
    trend._append(np.arange(MAX_TRACKED, dtype=np.uint64), np.ones(MAX_TRACKED, np.int16))
    per_port = GRADINGS * 3 + LANES * 2 + 8 + 2
    assert per_port == 226
    assert trend.nbytes == MAX_TRACKED * per_port + GRADINGS * 8
    assert trend.nbytes < 2 * 1024 * 1024
    assert NOT_READ < -1  # never a grade (-1 is unknown)
