"""Shard samples in transit: the binary form round-trips, corruption names its shard, a bad output fails its switch."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.telemetry import COLUMNS, CounterSamples, parse_perfquery
from ibweb.telemetry.collector import Output, SwitchTarget
from ibweb.telemetry.sweeps import parse_shard
from ibweb.telemetry.transport import TransportError, decode_samples, encode_samples, merge_results, shard_result

DATA = Path(__file__).parents[2] / "data" / "telemetry"


def random_samples(n: int, seed: int = 1) -> CounterSamples:
    rng = np.random.default_rng(seed)
    c = len(COLUMNS)
    return CounterSamples(rng.integers(1, 0xC000, n).astype(np.int32), rng.integers(0, 65, n).astype(np.int16),
                          rng.integers(0, 2**63, (n, c), dtype=np.uint64) * 2 + 1,
                          rng.integers(0, 65, (n, c)).astype(np.uint8), rng.random((n, c)) * 1e9)


@pytest.mark.parametrize("n", [0, 1, 777])
def test_samples_round_trip_exactly_through_json(n):
    s = random_samples(n)
    d = decode_samples(json.loads(json.dumps(shard_result(4, s, [])))["samples"], 4)
    for f in ("lid", "port", "values", "bits", "t"):
        assert getattr(d, f).dtype == getattr(s, f).dtype and np.array_equal(getattr(d, f), getattr(s, f))


def _repack(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw)).decode()


def test_corrupt_samples_are_refused_naming_the_shard():
    text = encode_samples(random_samples(50))
    raw = zlib.decompress(base64.b64decode(text))
    huge = bytearray(raw)
    huge[6:10] = (1 << 31).to_bytes(4, "little")  # rows beyond a subnet: refused before inflating anything
    cases = {
        "not base64": "%%%",
        "truncated": text[:40],
        "not zlib": base64.b64encode(b"hello world, not zlib").decode(),
        "arrays cut short": _repack(raw[:-8]),
        "trailing bytes": _repack(raw + b"\0"),
        "other magic": _repack(b"XXXX" + raw[4:]),
        "rows beyond a subnet": _repack(bytes(huge)),
        "not text": 12,
    }
    for why, bad in cases.items():
        with pytest.raises(TransportError, match=r"^shard 9: ") as exc:
            decode_samples(bad, 9)
        assert str(exc.value), why


def test_a_corrupt_shard_is_a_failure_of_that_shard_and_the_others_merge():
    good, other = random_samples(30, 1), random_samples(20, 2)
    results = [shard_result(0, good, []), {"shard": 1, "samples": "AAAA", "failures": []},
               shard_result(2, other, [{"shard": 2, "target": 7, "error": "timeout"}])]
    samples, failures = merge_results(json.loads(json.dumps(results)))
    assert len(samples) == len(CounterSamples.concat([good, other]).merged())
    assert failures[0]["shard"] == 1 and failures[0]["error"].startswith("shard 1: ") and failures[1]["target"] == 7


def test_a_shard_parses_all_outputs_at_once_and_a_bad_output_fails_its_switch_alone():
    basic, ext = (DATA / "perfquery_loop.txt").read_text(), (DATA / "perfquery_ext_loop.txt").read_text()
    good = (SwitchTarget(2, (1, 2, 3, 4)), [Output(basic, 1.0, "pq 2"), Output(ext, 1.0, "pq -x 2")])
    bad = (SwitchTarget(3, (1,)), [Output("# Port counters: Lid 3 port 1\nPortXmitData:....x\n", 1.0, "pq 3")])
    expected = CounterSamples.concat([parse_perfquery(basic, 1.0), parse_perfquery(ext, 1.0)]).merged()
    for reads in ([good], [good, bad]):
        result = json.loads(json.dumps(parse_shard(5, reads, [])))
        got = decode_samples(result["samples"], 5)
        assert np.array_equal(got.values, expected.values) and np.array_equal(got.bits, expected.bits)
        assert [f["target"] for f in result["failures"]] == ([3] if len(reads) == 2 else [])
    assert "PortXmitData" in result["failures"][0]["error"]
