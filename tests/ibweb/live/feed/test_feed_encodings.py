"""The feed's wire formats as the runner sends them (:mod:`ibweb.live.feed.encodings`): v1's rounding, v2's codecs.

Frames are made as :mod:`ibweb.live.engine.runner` makes them: ``frame(header, shared(state))``.
The codecs themselves, alone, are tested in ``tests/fabric_engine/test_feed_v2.py``.
"""

from __future__ import annotations

import json
import struct

import numpy as np

from fabric_engine.feed_v2 import decode_frame
from fabric_engine.scenario import DEMO_SPEC, build_emulator
from fabric_engine.state import FabricState
from ibweb.live.feed.encodings import ENCODINGS, link_arrays, pack_arrays, stored_arrays

#: The v1 frame's keys since protocol v1's first frames, and those added to it since.
V1_KEYS = {"v", "type", "seq", "t", "tick_s", "rate", "util", "totals", "jobs", "alerts"}
ADDED_KEYS = {"offered", "xmit_wait", "ecn", "hotspots", "sharp", "storage", "twin", "congestion_tree"}


def demo_state(ticks: int = 6):
    emu = build_emulator(DEMO_SPEC)
    for i in range(ticks):
        state = emu.step(now=float(i))
    return emu, state


def v1_text(state: FabricState, totals: dict) -> str:
    enc = ENCODINGS["v1"]
    return enc.frame(state.frame_header(totals), enc.shared(state))


def v2_message(state: FabricState, totals: dict) -> bytes:
    enc = ENCODINGS["v2"]
    return enc.frame(state.frame_header(totals), enc.shared(state))


def test_v1_rounds_each_array_to_what_a_heatmap_resolves():
    """Rates to 0.01 Gb/s, utilization to 0.0001, XmitWait in whole counter ticks, ECN to 0.001."""
    f32 = lambda *x: np.array(x, np.float32)  # noqa: E731 - the engine's arrays are float32
    state = FabricState(seq=5, t=12.3456, tick_s=1.0, rate_gbps=f32(1.23456, 399.99712, 0.00449, 12.3451),
                        util=f32(0.123456, 0.99996, 0.00004, 0.5), offered_gbps=f32(2.71828, 800.004, 0.0, 5.5551),
                        xmit_wait=f32(0.4, 0.6, 1234.7, 4.8e9), ecn=f32(0.12345, 0.0004, 0.9996, 0.5))
    text = v1_text(state, {})
    frame = json.loads(text)
    assert frame["rate"] == [1.23, 400.0, 0.0, 12.35]
    assert frame["util"] == [0.1235, 1.0, 0.0, 0.5]
    assert frame["offered"] == [2.72, 800.0, 0.0, 5.56]
    assert '"xmit_wait":[0,1,1235,4800000000]' in text  # integers, not floats
    assert frame["ecn"] == [0.123, 0.0, 1.0, 0.5]
    assert frame["v"] == 1 and frame["seq"] == 5 and frame["t"] == 12.346


def test_v1_without_estimates_sends_the_rate_as_offered_and_zeros():
    state = FabricState(seq=1, t=0.0, tick_s=1.0, rate_gbps=np.array([3.14159, 0.0], np.float32),
                        util=np.array([0.0157, 0.0], np.float32))
    frame = json.loads(v1_text(state, {}))
    assert frame["offered"] == frame["rate"] == [3.14, 0.0]
    assert frame["xmit_wait"] == [0, 0] and frame["ecn"] == [0.0, 0.0]


def test_the_demo_frame_is_protocol_v1_plus_the_added_keys():
    emu, state = demo_state(8)
    f = emu.fabric
    totals = {"hosts": f.num_hosts, "switches": f.num_switches, "links": f.num_links}
    text = v1_text(state, totals)
    frame = json.loads(text)
    assert set(frame) == V1_KEYS | ADDED_KEYS
    assert frame["v"] == 1 and frame["type"] == "frame" and frame["seq"] == 8
    for key in ("rate", "util", "offered", "xmit_wait", "ecn"):
        assert len(frame[key]) == 2 * f.num_links, key
    json.dumps(frame, allow_nan=False)  # no NaN or Infinity on the wire
    assert {"hosts", "switches", "links", "throughput_gbps", "hottest", "congested_links"} <= set(frame["totals"])
    np.testing.assert_array_equal(frame["rate"], np.round(state.rate_gbps.astype(np.float64), 2))


def test_a_snapshots_newest_frame_is_encoded_as_the_ticks():
    """A new socket's newest frame, from the packed arrays kept for snapshots, is the tick's frame byte for byte."""
    _, state = demo_state()
    for name, enc in ENCODINGS.items():
        again = enc.shared_of(stored_arrays(pack_arrays(link_arrays(state))))
        header = state.frame_header({})
        assert enc.frame(header, again) == enc.frame(header, enc.shared(state)), name


def test_v2_round_trip_within_the_codecs_precision():
    emu, state = demo_state()
    totals = {"hosts": emu.fabric.num_hosts}
    header, links = decode_frame(v2_message(state, totals))
    v1 = json.loads(v1_text(state, totals))
    assert header["v"] == 2 and header["type"] == "frame" and header["seq"] == v1["seq"]
    for key in ("totals", "jobs", "alerts", "hotspots", "sharp", "storage"):
        assert header[key] == v1[key], key
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
    _, state = demo_state()
    v1_links = len(ENCODINGS["v1"].shared(state))
    msg = v2_message(state, {})
    (size,) = struct.unpack("<I", msg[4:8])
    assert (len(msg) - 8 - size) * 10 <= v1_links, (v1_links, len(msg) - 8 - size)


def test_the_documented_client_decodes_a_frame():
    """docs/feed-protocol.md's minimal client, run as written, agrees with the reference decoder."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[4] / "docs" / "feed-protocol.md").read_text()
    code = doc.split("A minimal client, numpy only")[1].split("```python\n")[1].split("```")[0]
    scope: dict = {}
    exec(compile(code, "docs/feed-protocol.md", "exec"), scope)  # noqa: S102 - the doc's own example
    emu, state = demo_state()
    msg = v2_message(state, {})
    header, links = scope["decode_v2"](msg, emu.fabric.capacity_gbps[:emu.fabric.num_links])
    ref_header, ref = decode_frame(msg)
    assert header == ref_header
    for name in ref:
        np.testing.assert_array_equal(links[name], ref[name])
    np.testing.assert_allclose(links["rate"], state.rate_gbps, atol=0.01)


FIXTURE = "frontend/test/fixtures/feed-v2.json"


def v2_fixture() -> dict:
    """A small fabric's v1 snapshot, one v2 frame (base64) and what v1 sends for the same tick: the fixture the
    dashboard's decoder is tested on (frontend/test/decode-v2.test.js), made by the encodings the runner sends."""
    import base64

    from fabric_engine.formats.json_format import to_json

    spec = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8, "levels": 2, "speed": "NDR"},
            "jobs": [{"name": "a2a", "tenant": "acme", "hosts": 8, "pattern": "all_to_all", "compute_s": 0.1}],
            "background": {"fraction": 0.5, "gbps": 300}, "seed": 3}
    emu = build_emulator(spec)
    for i in range(3):
        state = emu.step(now=float(i))
    totals = {"hosts": emu.fabric.num_hosts}
    v1 = json.loads(v1_text(state, totals))
    snapshot = {"v": 1, "type": "snapshot", "fabric": {"slug": "tiny", "name": "Tiny", "mode": "emulated",
                                                        "tick_s": 1.0}, "topology": to_json(emu.fabric), "frame": None}
    return {"snapshot": snapshot, "frame_v2": base64.b64encode(v2_message(state, totals)).decode(),
            "v1": {k: v1[k] for k in ("seq", "rate", "util", "offered", "xmit_wait", "jobs", "hotspots")}}


def test_the_dashboards_v2_fixture_is_what_the_encoder_makes():
    """issue 15: the JS decoder's fixture comes from the shipped encoder
    (`python -m tests.ibweb.live.feed.test_feed_encodings` remakes it)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[4] / FIXTURE
    assert json.loads(path.read_text()) == json.loads(json.dumps(v2_fixture())), f"stale {FIXTURE}"


if __name__ == "__main__":
    from pathlib import Path

    (Path(__file__).resolve().parents[4] / FIXTURE).write_text(json.dumps(v2_fixture(), separators=(",", ":")) + "\n")
