"""Feed protocol v2: quantized, deflated per-link arrays in one binary message (issue 15)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fabric_engine.feed_v2 import CODECS, MAGIC, FeedV2Error, assemble, decode_frame, encode_arrays, encode_frame
from fabric_engine.scenario import DEMO_SPEC, build_emulator


def demo_state(ticks: int = 6):
    emu = build_emulator(DEMO_SPEC)
    for i in range(ticks):
        state = emu.step(now=float(i))
    return emu, state


def test_frame_round_trip_within_the_codecs_precision():
    emu, state = demo_state()
    totals = {"hosts": emu.fabric.num_hosts}
    header, links = decode_frame(state.to_frame_v2(totals))
    v1 = state.to_frame(totals)
    assert header["v"] == 2 and header["type"] == "frame" and header["seq"] == v1["seq"]
    for key in ("totals", "jobs", "alerts", "hotspots", "sharp", "storage"):
        assert header[key] == json.loads(json.dumps(v1[key])), key
    assert set(links) == {"util", "offered", "xmit_wait", "ecn"}
    np.testing.assert_allclose(links["util"], state.util, atol=1e-5)
    rate = links["util"] * np.tile(emu.fabric.capacity_gbps[:emu.fabric.num_links], 2)
    np.testing.assert_allclose(rate, state.rate_gbps, atol=0.01)  # rate = util x capacity, as v1's 0.01
    np.testing.assert_allclose(links["offered"], state.offered_gbps, rtol=2e-4, atol=1e-3)
    np.testing.assert_allclose(links["xmit_wait"], state.xmit_wait, rtol=4e-4, atol=1e-3)
    np.testing.assert_allclose(links["ecn"], state.ecn, atol=0.0021)
    assert (links["offered"][state.offered_gbps > 0.01] > 0).all()  # what v1 (to 0.01 Gb/s) shows as load stays


def test_v2_link_arrays_are_a_tenth_of_v1s():
    """The per-link part; the bench (tests/bench/bench_scale.py) measures whole frames at 32,768 GPUs."""
    emu, state = demo_state()
    v1 = len(json.dumps(state.to_frame({}), separators=(",", ":")))
    v1_links = v1 - len(json.dumps(state.frame_header({}), separators=(",", ":")))
    msg = state.to_frame_v2({})
    (size,) = struct.unpack("<I", msg[4:8])
    assert (len(msg) - 8 - size) * 10 <= v1_links, (v1_links, len(msg) - 8 - size)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(0, 300), elements=st.floats(0, 1.05)),
       arrays(np.float64, 40, elements=st.floats(0, 3e9)))
def test_codecs_bound_the_error(util, wait):
    header, links = decode_frame(encode_frame({"type": "frame", "seq": 1}, {"util": util, "xmit_wait": wait}))
    np.testing.assert_allclose(links["util"], util, atol=CODECS["util"].scale / 2 + 1e-12)
    np.testing.assert_allclose(1 + links["xmit_wait"], 1 + wait, rtol=CODECS["xmit_wait"].scale * 0.35 + 1e-12)


def test_arrays_are_aligned_and_chosen_per_message():
    enc = encode_arrays({"util": np.linspace(0, 1, 1001), "ecn": np.zeros(1001)})
    msg = assemble({"type": "frame", "seq": 9}, enc, names=["ecn"])
    (size,) = struct.unpack("<I", msg[4:8])
    assert msg[:4] == MAGIC and (8 + size) % 8 == 0
    header, links = decode_frame(msg)
    assert list(links) == ["ecn"] and all(e["offset"] % 8 == 0 for e in header["arrays"])
    assert header["arrays"][0]["deflate"] is True  # 1001 zeros deflate well


@pytest.mark.parametrize("mutate, match", [
    (lambda m: b"IBW1" + m[4:], "does not start"),
    (lambda m: m[:4] + struct.pack("<I", 10**6) + m[8:], "runs past"),
    (lambda m: m[:-3], "outside the message|bytes for"),
])
def test_bad_messages_are_one_clear_error(mutate, match):
    msg = encode_frame({"type": "frame", "seq": 1}, {"util": np.random.default_rng(0).random(500)})
    with pytest.raises(FeedV2Error, match=match):
        decode_frame(mutate(msg))


def test_unknown_array_is_refused():
    with pytest.raises(FeedV2Error, match="no v2 codec"):
        encode_arrays({"colour": np.zeros(3)})


def test_the_documented_client_decodes_a_frame():
    """docs/feed-protocol.md's minimal client, run as written, agrees with the reference decoder."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "feed-protocol.md").read_text()
    code = doc.split("A minimal client, numpy only")[1].split("```python\n")[1].split("```")[0]
    scope: dict = {}
    exec(compile(code, "docs/feed-protocol.md", "exec"), scope)  # noqa: S102 - the doc's own example
    emu, state = demo_state()
    msg = state.to_frame_v2({})
    header, links = scope["decode_v2"](msg, emu.fabric.capacity_gbps[:emu.fabric.num_links])
    ref_header, ref = decode_frame(msg)
    assert header == ref_header
    for name in ref:
        np.testing.assert_array_equal(links[name], ref[name])
    np.testing.assert_allclose(links["rate"], state.rate_gbps, atol=0.01)


FIXTURE = "frontend/test/fixtures/feed-v2.json"


def v2_fixture() -> dict:
    """A small fabric's v1 snapshot, one v2 frame (base64) and what v1 sends for the same tick: the fixture the
    dashboard's decoder is tested on (frontend/test/decode.test.js), made by the engine's own encoder."""
    import base64

    from fabric_engine.formats.json_format import to_json
    from fabric_engine.scenario import build_emulator

    spec = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8, "levels": 2, "speed": "NDR"},
            "jobs": [{"name": "a2a", "tenant": "acme", "hosts": 8, "pattern": "all_to_all", "compute_s": 0.1}],
            "background": {"fraction": 0.5, "gbps": 300}, "seed": 3}
    emu = build_emulator(spec)
    for i in range(3):
        state = emu.step(now=float(i))
    totals = {"hosts": emu.fabric.num_hosts}
    v1 = state.to_frame(totals)
    snapshot = {"v": 1, "type": "snapshot", "fabric": {"slug": "tiny", "name": "Tiny", "mode": "emulated",
                                                        "tick_s": 1.0}, "topology": to_json(emu.fabric), "frame": None}
    return {"snapshot": snapshot, "frame_v2": base64.b64encode(state.to_frame_v2(totals)).decode(),
            "v1": {k: v1[k] for k in ("seq", "rate", "util", "offered", "xmit_wait", "jobs", "hotspots")}}


def test_the_dashboards_v2_fixture_is_what_the_encoder_makes():
    """issue 15: the JS decoder's fixture comes from this encoder (`python -m tests.engine.test_feed_v2` remakes it)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / FIXTURE
    assert json.loads(path.read_text()) == json.loads(json.dumps(v2_fixture())), f"stale {FIXTURE}"


if __name__ == "__main__":
    from pathlib import Path

    (Path(__file__).resolve().parents[2] / FIXTURE).write_text(json.dumps(v2_fixture(), separators=(",", ":")) + "\n")
