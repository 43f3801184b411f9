"""The embedded store's own parts: tiers packed and read across, another connection, the size bound, encoding.

Small tiers (1 s raw in 10 s rows kept 100 s, 5 s buckets in 50 s rows, 25 s buckets in 250 s rows) stand in for
the default ones (10 s, 5 min, 1 h) so a test writes every tier's spans in a few hundred sweeps.
"""

from __future__ import annotations

import numpy as np
import pytest

from ibweb.tsdb.codec import decode_block, encode_block
from ibweb.tsdb.embedded import BLOCK, EmbeddedStore, Tier, default_tiers
from ibweb.tsdb.series import PORT_ID

TIERS = (Tier(1, 10, 100), Tier(5, 50, 1000), Tier(25, 250, 5000))
T0 = 1_800_000_000.0  # a multiple of every span


def many_ports(n: int) -> np.ndarray:
    ports = np.empty(n, dtype=PORT_ID)
    ports["guid"], ports["port"] = 0xAB00 + np.arange(n) // 64, np.arange(n) % 64 + 1
    return ports


@pytest.fixture
def store(tmp_path):
    s = EmbeddedStore(tmp_path / "tsdb.sqlite3", tiers=TIERS)
    yield s
    s.close()


def ramp(store: EmbeddedStore, ports: np.ndarray, sweeps: int) -> None:
    for i in range(sweeps):  # port k's value at sweep i: i + k
        store.write(1, T0 + i + 0.5, ports, {"utilization": i + np.arange(len(ports), dtype=float),
                                            "link_up": np.where(np.arange(len(ports)) == 3, float(i != 123), 1.0)})


def test_every_tier_answers_what_the_sweeps_wrote(store):
    ports = many_ports(2 * BLOCK + 10)  # three blocks
    ramp(store, ports, 600)
    assert store._done(1) == {0: T0 + 590, 1: T0 + 550, 2: T0 + 500}  # spans packed; the newest still pending
    k = 2 * BLOCK + 5
    for start, points, tier_step in ((500, 100, 1), (0, 120, 5), (0, 24, 25)):  # each width read from its tier
        r = store.range(1, tuple(int(x) for x in ports[k]), "utilization", T0 + start, T0 + 600, points)
        width = (600 - start) // points
        expected = np.arange(start, 600, dtype=float).reshape(points, width).mean(axis=1) + k
        np.testing.assert_allclose(r.values, expected, rtol=1e-3, err_msg=f"bins of {tier_step} s")
    down = store.range(1, (int(ports["guid"][3]), int(ports["port"][3])), "link_up", T0, T0 + 600, 24)
    assert down.values[123 // 25] == 0 and np.delete(down.values, 123 // 25).min() == 1  # min: a down shows
    top = store.top(1, "utilization", T0 + 300, T0 + 600, 2)
    assert top["port"].tolist() == [int(ports["port"][-1]), int(ports["port"][-2])]
    np.testing.assert_allclose(top["value"], [449.5 + len(ports) - 1, 449.5 + len(ports) - 2], rtol=1e-3)


def test_raw_history_past_its_keep_is_read_from_a_coarser_tier(store):
    ports = many_ports(4)
    ramp(store, ports, 600)
    r = store.range(1, (int(ports["guid"][0]), 1), "utilization", T0, T0 + 100, 100)  # raw kept 100 s only
    assert not np.isnan(r.values).any()
    np.testing.assert_allclose(r.values[:5], 2.0, rtol=1e-3)  # the 5 s bucket's mean, each second of it
    assert not store._db.execute("SELECT 1 FROM packed WHERE tier = 0 AND start < ?", (T0 + 400,)).fetchall()


def test_another_connection_reads_and_continues(store, tmp_path):
    ports = many_ports(5)
    ramp(store, ports, 60)
    other = EmbeddedStore(tmp_path / "tsdb.sqlite3", tiers=TIERS)
    try:
        assert other.range(1, (0xAB00, 2), "utilization", T0, T0 + 60, 6).values[0] == pytest.approx(5.5, rel=1e-3)
        more = np.concatenate([ports, np.array([(0xCD00, 9)], dtype=PORT_ID)])
        other.write(1, T0 + 60.5, more, {"utilization": np.arange(6.0)})
        assert store.range(1, (0xCD00, 9), "utilization", T0 + 60, T0 + 61, 1).values[0] == 5.0
    finally:
        other.close()


def test_a_sweep_older_than_the_packed_history_is_dropped(store, caplog):
    ports = many_ports(2)
    ramp(store, ports, 30)
    store.write(1, T0 + 3.5, ports, {"utilization": np.array([99.0, 99.0])})
    assert "older than its packed history" in caplog.text
    assert store.range(1, (0xAB00, 1), "utilization", T0 + 3, T0 + 4, 1).values[0] == 3.0


def test_the_file_stays_within_its_bound(tmp_path):
    bound = 600 << 10
    store = EmbeddedStore(tmp_path / "bound.sqlite3", tiers=TIERS, max_bytes=bound)
    try:
        ports, rng = many_ports(2000), np.random.default_rng(1)
        for i in range(400):
            store.write(1, T0 + i, ports, {"tx_bytes_per_s": rng.random(2000) * 1e10})
        assert store.used_bytes() <= bound
        oldest = store._db.execute("SELECT MIN(start) FROM packed WHERE tier = 0").fetchone()[0]
        assert oldest > T0 + 100  # the oldest raw spans went first...
        r = store.range(1, (0xAB00, 1), "tx_bytes_per_s", T0 + 390, T0 + 400, 10)
        assert not np.isnan(r.values).any()  # ...the newest stays
        assert (tmp_path / "bound.sqlite3").stat().st_size <= 2 * bound  # pages given back
    finally:
        store.close()


def test_blocks_round_to_ten_mantissa_bits():
    values = np.array([[0.0, np.nan, 1e10, 3.14159265, -2.5e-9, np.inf]], dtype=np.float32)
    back = decode_block(encode_block(values), values.shape)
    np.testing.assert_allclose(back[0, [0, 2, 3, 4]], values[0, [0, 2, 3, 4]], rtol=2 ** -11)
    assert np.isnan(back[0, 1]) and back[0, 5] == np.inf
    assert len(encode_block(np.zeros(BLOCK, np.float32))) < 40  # idle error counters cost nothing


def test_tiers_must_nest():
    with pytest.raises(ValueError, match="tier 1"):
        EmbeddedStore(":memory:", tiers=(Tier(10, 600, 100), Tier(7, 700, 100)))
    assert [t.step for t in default_tiers(90)] == [10, 60, 3600] and default_tiers(30)[2].keep == 30 * 86400
    assert [t.step for t in default_tiers(90, minute_step=300)] == [10, 300, 3600]
    for bad in (45, 70, 7):
        with pytest.raises(ValueError, match="IBWEB_TSDB_STEP_S"):
            default_tiers(90, minute_step=bad)


def test_a_file_keeps_the_layout_it_was_made_with(tmp_path, caplog):
    """The steps are recorded when a file is made; opened with another step it keeps its own (its rows mean its
    steps), says so, and reads what it wrote; a file written before the layout was recorded is the old 10 s, 5 min,
    1 h."""
    path = tmp_path / "t.sqlite3"
    ports = np.empty(1, dtype=PORT_ID)
    ports["guid"], ports["port"] = 0x9000, 1
    first = EmbeddedStore(path, minute_step=300)
    for i in range(70):  # past a 10-minute row of the raw tier: packed into the 5-minute tier too
        first.write(1, T0 + 10 * i + 5, ports, {"utilization": np.array([0.5])})
    first.close()
    again = EmbeddedStore(path, minute_step=60)
    assert [t.step for t in again.tiers] == [10, 300, 3600]
    assert "keeps the steps it was made with ([10, 300, 3600] s), not [10, 60, 3600] s" in caplog.text
    got = again.range(1, ports[0], "utilization", T0, T0 + 600, 2)
    assert np.allclose(got.values, 0.5)
    again.close()
    assert [t.step for t in EmbeddedStore(tmp_path / "new.sqlite3").tiers] == [10, 60, 3600]
    legacy = EmbeddedStore(tmp_path / "old.sqlite3", minute_step=300)
    legacy.write(1, T0 + 5, ports, {"utilization": np.array([0.5])})
    legacy._db.execute("DELETE FROM layout")  # as a file made before the layout table
    legacy.close()
    assert [t.step for t in EmbeddedStore(tmp_path / "old.sqlite3").tiers] == [10, 300, 3600]


def test_a_whole_block_asked_out_of_order_reads_each_port_s_own(tmp_path):
    """Every port of a block asked in another order than their slots: each row is its port's (a read of the whole
    block in slot order would put them back in that order)."""
    store = EmbeddedStore(tmp_path / "t.sqlite3")
    ports = np.empty(BLOCK, dtype=PORT_ID)
    ports["guid"], ports["port"] = 0x9000 + np.arange(BLOCK) // 64, np.arange(BLOCK) % 64 + 1
    level = np.arange(BLOCK) / BLOCK
    for i in range(6):
        store.write(1, T0 + 10 * i + 5, ports, {"utilization": level})
    asked = ports[::-1]
    got = store.stats(1, asked, "utilization", T0, T0 + 60, 1)
    np.testing.assert_allclose(got.mean[:, 0], level[::-1], rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(store.ranges(1, asked, "utilization", T0, T0 + 60, 1).values[:, 0], level[::-1],
                               rtol=1e-3, atol=1e-6)
    store.close()


def test_a_window_is_read_from_the_finest_tier_that_folds_few_buckets_a_bin():
    """Charts of 500 bins on the default tiers: the sweeps themselves up to 41 h, the 1-minute tier for a week, the
    hourly tier for 90 days; bins of a minute (the rollups) read the sweeps, never the minute tier."""
    from ibweb.tsdb.reads import tier_for

    tiers, now, hour = default_tiers(90), T0, 3600.0
    def tier(window: float, points: int = 500) -> int:
        return tiers[tier_for(tiers, now, now - window, window / points)].step

    assert [tier(hour), tier(41 * hour), tier(7 * 24 * hour), tier(90 * 24 * hour)] == [10, 10, 60, 3600]
    assert tier(10 * 60, points=10) == 10
