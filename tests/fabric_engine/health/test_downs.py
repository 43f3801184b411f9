"""Link downs from successive observations (fabric_engine.health.downs): episodes, windows, conditions, bounds."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.health.downs import COUNTER, EXACT, STATE, DownsConfig, DownTracker, link_episodes

G = np.array([0xA, 0xA, 0xB], np.uint64)  # two ports of one switch, one HCA port
P = np.array([1, 2, 1])


def sweep(tr: DownTracker, t: float, up, ldc=None, **kw) -> None:
    tr.observe(t, G, P, np.array(up), None if ldc is None else np.array(ldc, float), **kw)


def one(e: dict, i: int = 0) -> dict:
    return {k: v[i] for k, v in e.items()}


def test_down_seen_by_sweeps_is_an_interval_and_critical_when_proven_longer():
    tr = DownTracker()
    sweep(tr, 0, [1, 1, 1], [0, 0, 0])
    sweep(tr, 60, [0, 1, 1], [1, 0, 0])
    sweep(tr, 120, [0, 1, 1], [1, 0, 0])
    e = tr.episodes()
    assert e["open"].tolist() == [True] and np.isnan(e["end_hi"][0])
    assert (e["start_lo"][0], e["start_hi"][0]) == (0, 60)  # last seen up .. first seen down
    assert e["duration_lo"][0] == 60 and e["critical"][0]  # seen down for 60 s: a job-killing down, live
    sweep(tr, 180, [1, 1, 1], [1, 0, 0])
    ep = one(tr.episodes())
    assert not ep["open"] and (ep["end_lo"], ep["end_hi"]) == (120, 180)
    assert (ep["duration_lo"], ep["duration_hi"], ep["duration"]) == (60, 180, 120)
    assert ep["critical"] and ep["evidence"] == STATE | COUNTER
    assert (ep["ldc_before"], ep["ldc_after"], ep["ldc_delta"], ep["downs"]) == (0, 1, 1, 1)
    assert (ep["guid"], ep["port"]) == (0xA, 1)


def test_down_seen_once_is_not_proven_critical_but_possible():
    tr = DownTracker()
    for t, up in ((0, 1), (60, 0), (120, 1)):
        sweep(tr, t, [up, 1, 1])
    ep = one(tr.episodes())
    assert (ep["duration_lo"], ep["duration_hi"]) == (0, 120)
    assert not ep["critical"] and ep["critical_possible"] and ep["evidence"] == STATE
    assert np.isnan(ep["ldc_delta"]) and ep["downs"] == 1


def test_exact_times_make_points_and_the_threshold_is_configurable():
    for limit, critical in ((7.0, True), (10.0, False)):
        tr = DownTracker(DownsConfig(critical_s=limit))
        sweep(tr, 0, [1, 1, 1])
        sweep(tr, 100, [0, 1, 1], exact=[True, False, False])
        sweep(tr, 108, [1, 1, 1], exact=[True, False, False])
        ep = one(tr.episodes())
        assert (ep["start_lo"], ep["start_hi"], ep["end_lo"], ep["end_hi"]) == (100, 100, 108, 108)
        assert ep["duration_lo"] == ep["duration_hi"] == 8 and ep["evidence"] == STATE | EXACT
        assert ep["critical"] == critical


def test_counter_rise_between_sweeps_is_a_down_of_unknown_duration():
    tr = DownTracker()
    sweep(tr, 0, [1, 1, 1], [5, 0, 0])
    sweep(tr, 30, [1, 1, 1], [7, 0, 0])  # up at both sweeps, the counter rose by 2
    ep = one(tr.episodes())
    assert ep["evidence"] == COUNTER and ep["downs"] == 2 and ep["ldc_delta"] == 2
    assert (ep["start_lo"], ep["end_hi"], ep["duration_lo"], ep["duration_hi"]) == (0, 30, 0, 30)
    assert np.isnan(ep["duration"]) and not ep["critical"]


def test_counter_clear_saturation_and_unread_values():
    tr = DownTracker()
    sweep(tr, 0, [1, 1, 1], [200, 255, np.nan])
    sweep(tr, 60, [1, 1, 1], [3, 255, 4])  # cleared and rose to 3; saturated; first read
    e = tr.episodes()
    assert e["port"].tolist() == [1] and e["downs"].tolist() == [3]  # the rise since the clear, a lower bound
    sweep(tr, 120, [1, 1, -1], [3, 255, 9])  # a row not read is ignored, its counter too
    sweep(tr, 180, [1, 1, 1], [3, 255, 4])
    assert tr.episodes()["slot"].size == 1


def test_windows_of_24h_and_7d_and_repeated_downs():
    tr = DownTracker()
    day = 86_400.0
    sweep(tr, 0, [1, 1, 1])
    for start in (1000.0, 3 * day, 6 * day + 1000, 6 * day + 5000):  # port (A,1) down for 100 s each time
        sweep(tr, start, [0, 1, 1], exact=[True, False, False])
        sweep(tr, start + 100, [1, 1, 1], exact=[True, False, False])
    st = tr.status(now=6 * day + 6000)
    assert st["downs_24h"].tolist() == [2, 0, 0] and st["downs_7d"].tolist() == [4, 0, 0]
    assert st["downtime_24h_s"][0] == 200 and st["downtime_7d_s"][0] == 400
    assert st["downtime_24h_max_s"][0] == 200
    assert st["critical_24h"].tolist() == [2, 0, 0]
    assert st["repeated_downs"].tolist() == [True, False, False]
    later = tr.status(now=7 * day + 5050)  # the window starts halfway through the last down
    assert later["downs_24h"][0] == 1 and later["downtime_24h_s"][0] == 50
    assert not later["repeated_downs"][0]


def test_a_window_cuts_a_down_that_straddles_its_start():
    tr = DownTracker()
    sweep(tr, 0, [1, 1, 1])
    sweep(tr, 10, [0, 1, 1], exact=[True, False, False])
    sweep(tr, 1010, [1, 1, 1], exact=[True, False, False])
    st = tr.status(now=86_400.0 + 510)
    assert st["downs_24h"][0] == 1 and st["downtime_24h_s"][0] == 500


def test_state_is_bounded_by_count_and_age():
    tr = DownTracker(DownsConfig(max_episodes=3))
    t = 0.0
    sweep(tr, t, [1, 1, 1], [0, 0, 0])
    for k in range(1, 6):  # five counter-only downs of port (A,1)
        t += 60
        sweep(tr, t, [1, 1, 1], [k, 0, 0])
    e = tr.episodes()
    assert e["slot"].size == 3 and e["ldc_after"].tolist() == [3, 4, 5]  # the newest kept
    sweep(tr, t + 7 * 86_400 + 61, [1, 1, 1], [5, 0, 0])
    assert tr.episodes()["slot"].size == 0  # all ended more than 7 days ago


def test_ports_in_another_order_or_new_keep_their_identity():
    tr = DownTracker()
    sweep(tr, 0, [1, 1, 1], [0, 0, 0])
    tr.observe(60, G[::-1], P[::-1], np.array([1, 0, 1]), np.array([0.0, 0, 0]))  # (A,2) down
    tr.observe(120, np.r_[G, np.uint64(0xC)], np.r_[P, 9], np.array([1, 1, 1, 1]), np.zeros(4))
    e = tr.episodes()
    assert (e["guid"].tolist(), e["port"].tolist()) == ([0xA], [2])
    assert len(tr.slots) == 4


def test_link_episodes_say_which_end_saw_the_down():
    tr = DownTracker()
    sweep(tr, 0, [1, 1, 1], [0, 0, 0])
    sweep(tr, 60, [0, 1, 1], [1, 0, 1])  # (A,1) seen down; its peer (B,1) only counted it ...
    sweep(tr, 120, [1, 1, 1], [1, 0, 1])
    sweep(tr, 180, [1, 1, 1], [1, 1, 1])  # ... (A,2)'s counter rose, its peer was not observed
    le = link_episodes(tr, [0xA, 0xA], [1, 2], [0xB, 0xD], [1, 1])
    assert le["link"].tolist() == [0, 1]
    assert le["seen_by"].tolist() == [3, 1]
    assert le["evidence_a"].tolist() == [STATE | COUNTER, COUNTER] and le["evidence_b"].tolist() == [COUNTER, 0]
    assert le["ldc_delta_b"][0] == 1 and np.isnan(le["ldc_delta_b"][1])
    assert (le["start_lo"][0], le["start_hi"][0], le["end_lo"][0], le["end_hi"][0]) == (0, 60, 60, 60)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"guid": np.zeros((3, 1), np.uint64)}, "guid"),
    ({"guid": np.zeros(3)}, "guid"),
    ({"port": np.zeros(2, int)}, "port"),
    ({"port": np.array([1, 2, 256])}, "port"),
    ({"up": np.ones(4)}, "up"),
    ({"up": np.array([1, 2, 1])}, "up"),
    ({"link_downed": np.ones((3, 2))}, "link_downed"),
    ({"link_downed": np.array([1.0, -1, 0])}, "link_downed"),
    ({"t": np.zeros(2)}, "t"),
    ({"t": np.array([0.0, np.nan, 0])}, "t"),
    ({"exact": np.zeros(5, bool)}, "exact"),
    ({"guid": np.array([1, 1, 2], np.uint64), "port": np.array([1, 1, 1])}, "guid/port"),
])
def test_bad_input_is_a_value_error_naming_the_field(kwargs, field):
    args = {"t": 10.0, "guid": G, "port": P, "up": np.ones(3, np.int8), "link_downed": None, "exact": None}
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"^{field}:"):
        DownTracker().observe(**args)


def test_an_observation_older_than_the_last_is_refused():
    tr = DownTracker()
    sweep(tr, 100, [1, 1, 1])
    with pytest.raises(ValueError, match="^t:"):
        sweep(tr, 50, [1, 1, 1])
