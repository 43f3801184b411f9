"""Feed protocol v2's codecs: quantized, deflated per-link arrays in one binary message (issue 15).

Frames of a fabric's state, as the runner encodes them, are tested with the encodings:
tests/ibweb/live/feed/test_feed_encodings.py.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fabric_engine.feed_v2 import CODECS, MAGIC, FeedV2Error, assemble, decode_frame, encode_arrays, encode_frame


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


def test_the_codecs_quantize_as_the_protocol_says():
    """As docs/feed-protocol.md says: util in steps of 1/60000, ecn of 1/250, offered and xmit_wait log2."""
    enc = encode_arrays({"util": np.array([0.5, 1.0, 2.0]), "offered": np.array([1.0, 3.0]),
                         "xmit_wait": np.array([1.0, 3.0]), "ecn": np.array([0.5, 1.0, 1.1])})
    raw = {name: np.frombuffer(zlib.decompress(e.data) if e.meta["deflate"] else e.data, e.meta["dtype"]).tolist()
           for name, e in enc.items()}
    assert raw == {"util": [30000, 60000, 65535], "offered": [2048, 4096], "xmit_wait": [1024, 2048],
                   "ecn": [125, 250, 255]}
