"""Feed encodings: how a frame goes on the wire, chosen per socket, encoded once per view and tick.

Each encoding splits its work in two: :meth:`~FeedEncoding.shared` once per tick for what every
view shares (the per-link arrays), and :meth:`~FeedEncoding.frame` once per view for the frame
header that view sees (:class:`ibweb.live.feed.view.FeedView`). The runner calls them only for the
(view, encoding) pairs that have sockets, and sends each result to that pair's channel group.

* ``v1``: JSON text (``docs/feed-protocol.md``), the default;
* ``v2``: one binary message, per-link arrays quantized and deflated (:mod:`fabric_engine.feed_v2`);
  a client asks for it with ``?v=2`` on the feed URL.

Another encoding is one more class in :data:`ENCODINGS`.
"""

from __future__ import annotations

import json
import zlib
from typing import Protocol

import numpy as np

from fabric_engine import feed_v2
from fabric_engine.state import FabricState

__all__ = ["FeedEncoding", "JsonV1", "BinaryV2", "ENCODINGS", "encoding_of", "DEFAULT", "link_arrays", "v1_links",
           "pack_arrays", "unpack_arrays", "stored_arrays"]


class FeedEncoding(Protocol):
    """One wire format of the feed's ``frame`` messages."""

    name: str
    binary: bool

    def shared(self, state: FabricState) -> object:
        """What every view's frame of ``state`` shares (computed once per tick)."""

    def shared_of(self, arrays: dict[str, np.ndarray]) -> object:
        """The same from the per-link arrays of :func:`link_arrays` (a snapshot's newest frame)."""

    def frame(self, header: dict, shared: object) -> str | bytes:
        """The message of one view: its ``header`` (a filtered frame header) with the ``shared`` part."""


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def link_arrays(state: FabricState) -> dict[str, np.ndarray]:
    """Every per-link array of a frame: ``rate`` and :meth:`FabricState.link_arrays`."""
    return {"rate": state.rate_gbps, **state.link_arrays()}


def v1_links(arrays: dict[str, np.ndarray]) -> str:
    """The v1 text of the per-link arrays, ``"rate":[..],"util":[..],...`` without braces (one tick, every view).

    Arrays carry what a heatmap resolves and no more: rates in Gb/s to 0.01, utilization to
    0.0001, XmitWait in whole counter units.
    """
    body = _compact({
        "rate": np.round(np.asarray(arrays["rate"], dtype=np.float64), 2).tolist(),
        "util": np.round(np.asarray(arrays["util"], dtype=np.float64), 4).tolist(),
        "offered": np.round(np.asarray(arrays["offered"], dtype=np.float64), 2).tolist(),
        "xmit_wait": np.rint(arrays["xmit_wait"]).astype(np.int64).tolist(),
        "ecn": np.round(np.asarray(arrays["ecn"], dtype=np.float64), 3).tolist(),
    })
    return body[1:-1]


def pack_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    """The per-link arrays as compressed float32 bytes (kept for snapshots when no v1 text was encoded)."""
    names = ("rate", "util", "offered", "xmit_wait", "ecn")
    stacked = np.stack([np.asarray(arrays[k], dtype=np.float32) for k in names])
    return zlib.compress(stacked.tobytes(), 1)


def unpack_arrays(blob: bytes) -> dict[str, np.ndarray]:
    """The arrays of :func:`pack_arrays`."""
    stacked = np.frombuffer(zlib.decompress(blob), dtype=np.float32).reshape(5, -1)
    return dict(zip(("rate", "util", "offered", "xmit_wait", "ecn"), stacked, strict=True))


def stored_arrays(links: str | bytes) -> dict[str, np.ndarray]:
    """The per-link arrays of what the runner stored for snapshots: a v1 text fragment or packed arrays."""
    if isinstance(links, bytes):
        return unpack_arrays(links)
    return {k: np.asarray(v, dtype=np.float32) for k, v in json.loads("{" + links + "}").items()}


class JsonV1:
    """Protocol v1: one JSON text; the per-link arrays are encoded once per tick as a text fragment."""

    name = "v1"
    binary = False

    def shared(self, state: FabricState) -> str:
        return v1_links(link_arrays(state))

    def shared_of(self, arrays: dict[str, np.ndarray]) -> str:
        return v1_links(arrays)

    def frame(self, header: dict, shared: str) -> str:
        return _compact(header)[:-1] + "," + shared + "}"


class BinaryV2:
    """Protocol v2: one binary message; the per-link arrays are quantized and deflated once per tick."""

    name = "v2"
    binary = True

    def shared(self, state: FabricState) -> dict:
        return feed_v2.encode_arrays(state.link_arrays())

    def shared_of(self, arrays: dict[str, np.ndarray]) -> dict:
        return feed_v2.encode_arrays({k: arrays[k] for k in ("util", "offered", "xmit_wait", "ecn")})

    def frame(self, header: dict, shared: dict) -> bytes:
        return feed_v2.assemble(header, shared)


#: The encodings a socket may ask for, by name.
ENCODINGS: dict[str, FeedEncoding] = {"v1": JsonV1(), "v2": BinaryV2()}
DEFAULT = "v1"


def encoding_of(query: dict) -> str | None:
    """The encoding a feed URL's query asks for (``?v=2``); None when it names none we have."""
    raw = query.get("v", ["1"])
    raw = raw[0] if isinstance(raw, list) else raw
    name = f"v{raw}" if str(raw).isdigit() else str(raw)
    return name if name in ENCODINGS else None
