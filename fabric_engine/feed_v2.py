"""Feed protocol v2: a frame as one binary websocket message (see ``docs/feed-protocol.md``).

Version 1 sends every per-link array as JSON numbers: at 32,768 GPUs (196,608 directed
links) a 5.5 MB text per client per tick that takes half a second to encode. Version 2
keeps the frame's small sections as JSON and sends the per-link arrays quantized and
deflated, once per tick, whatever the number of clients::

    b"IBW2" | uint32 LE: header length H | H bytes: JSON header, space-padded to 8 | array bytes

The header is the v1 frame without its per-link arrays (``"v": 2``), plus ``"arrays"``: one
entry per array with its ``name``, ``length``, ``dtype``, ``codec``, ``scale``, byte ``offset``
(from the end of the header, a multiple of 8), ``nbytes`` and ``deflate`` (zlib stream). Codecs:

* ``linear``: ``value = q * scale`` (utilization, ECN fraction);
* ``log2``: ``value = 2 ** (q * scale) - 1`` (offered Gb/s and PortXmitWait ticks, which span
  many orders of magnitude: relative error of ``1 + value`` below ``scale * ln 2 / 2``, 1.7e-4 at 1/2048).

``rate`` is not sent: it is ``util * capacity`` (capacity from the snapshot), as the
engine computes ``util``. Encoding is pure: the same state gives the same bytes.

Examples
--------
>>> import numpy as np
>>> msg = encode_frame({"type": "frame", "seq": 3}, {"util": np.array([0.0, 0.5, 1.0])})
>>> header, arrays = decode_frame(msg)
>>> header["v"], header["seq"], arrays["util"].round(4).tolist()
(2, 3, [0.0, 0.5, 1.0])
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .errors import FabricEngineError

__all__ = ["MAGIC", "VERSION", "CODECS", "EncodedArray", "encode_arrays", "assemble", "encode_frame", "decode_frame",
           "FeedV2Error"]

MAGIC = b"IBW2"
VERSION = 2
_DEFLATE_LEVEL = 1  # level 1: most of the gain (util of 196,608 links: 393 kB -> 67 kB) at a fifth of level 6's time
_DEFLATE_WORTH = 0.9  # keep the deflated bytes only when they save at least a tenth


@dataclass(frozen=True)
class Codec:
    """How one per-link array is quantized: ``dtype``, ``codec`` (``linear`` or ``log2``) and ``scale``."""

    dtype: str
    codec: str
    scale: float

    def quantize(self, values: np.ndarray) -> np.ndarray:
        v = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0, posinf=np.inf, neginf=0.0)
        v = np.maximum(v, 0.0)
        q = v / self.scale if self.codec == "linear" else np.log2(1.0 + v) / self.scale
        top = np.iinfo(self.dtype).max
        return np.rint(np.minimum(q, top)).astype(self.dtype)

    def restore(self, q: np.ndarray) -> np.ndarray:
        x = q.astype(np.float64) * self.scale
        return x if self.codec == "linear" else np.exp2(x) - 1.0


#: Per-link arrays of a v2 frame and their codecs.
CODECS: dict[str, Codec] = {
    "util": Codec("uint16", "linear", 1 / 60000),  # 0 .. 1.09 in steps of 1.7e-5
    "offered": Codec("uint16", "log2", 1 / 2048),  # Gb/s, up to 4e9, relative error < 1.7e-4
    "xmit_wait": Codec("uint16", "log2", 1 / 1024),  # counter ticks per tick, up to 1.8e19, error < 3.4e-4
    "ecn": Codec("uint8", "linear", 1 / 250),  # fraction of packets marked, steps of 0.004
}


class FeedV2Error(FabricEngineError):
    """A v2 message that does not follow the protocol."""


@dataclass(frozen=True)
class EncodedArray:
    """One array, quantized and (when it pays) deflated: its header entry without ``offset``, and its bytes."""

    meta: dict
    data: bytes


def encode_arrays(arrays: Mapping[str, np.ndarray]) -> dict[str, EncodedArray]:
    """Quantize and deflate every array of ``arrays`` (names from :data:`CODECS`); done once per tick."""
    out = {}
    for name, values in arrays.items():
        if values is None:
            continue
        codec = CODECS.get(name)
        if codec is None:
            raise FeedV2Error(f"no v2 codec for array {name!r}; known: {', '.join(CODECS)}")
        raw = codec.quantize(values).tobytes()
        packed = zlib.compress(raw, _DEFLATE_LEVEL)
        deflate = len(packed) < _DEFLATE_WORTH * len(raw)
        data = packed if deflate else raw
        out[name] = EncodedArray({"name": name, "length": int(np.size(values)), "dtype": codec.dtype,
                                  "codec": codec.codec, "scale": codec.scale, "nbytes": len(data),
                                  "deflate": deflate}, data)
    return out


def assemble(header: Mapping, arrays: Mapping[str, EncodedArray], names: Iterable[str] | None = None) -> bytes:
    """The v2 message of ``header`` (a JSON-ready frame without per-link arrays) and the encoded ``arrays``.

    ``names``: the arrays to include, in order (default: all). Cheap (no re-encoding), so one
    tick's arrays serve every view and every client's choice of arrays.
    """
    entries, chunks, offset = [], [], 0
    for name in (arrays if names is None else names):
        enc = arrays[name]
        entries.append({**enc.meta, "offset": offset})
        pad = -len(enc.data) % 8
        chunks.append(enc.data + b"\0" * pad)
        offset += len(enc.data) + pad
    text = json.dumps({**header, "v": VERSION, "arrays": entries}, separators=(",", ":")).encode()
    text += b" " * (-(len(text) + 8) % 8)
    return b"".join([MAGIC, struct.pack("<I", len(text)), text, *chunks])


def encode_frame(header: Mapping, arrays: Mapping[str, np.ndarray]) -> bytes:
    """:func:`assemble` of :func:`encode_arrays`: a whole v2 message in one call."""
    return assemble(header, encode_arrays(arrays))


def decode_frame(message: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON header and the per-link arrays (float64, restored) of a v2 message; the reference decoder.

    Raises :class:`FeedV2Error` naming what is wrong.
    """
    buf = memoryview(message)
    if len(buf) < 8 or bytes(buf[:4]) != MAGIC:
        raise FeedV2Error("not a v2 frame: it does not start with b'IBW2'")
    (size,) = struct.unpack("<I", buf[4:8])
    if 8 + size > len(buf):
        raise FeedV2Error(f"header of {size} bytes runs past the message of {len(buf)}")
    try:
        header = json.loads(bytes(buf[8:8 + size]))
    except ValueError as exc:
        raise FeedV2Error(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict) or header.get("v") != VERSION:
        raise FeedV2Error(f"header: expected an object with \"v\": {VERSION}")
    body = buf[8 + size:]
    arrays = {}
    for i, entry in enumerate(header.get("arrays", [])):
        try:
            name, length = entry["name"], int(entry["length"])
            offset, nbytes = int(entry["offset"]), int(entry["nbytes"])
            codec = Codec(str(entry["dtype"]), str(entry["codec"]), float(entry["scale"]))
            dtype = np.dtype(codec.dtype)
        except (KeyError, TypeError, ValueError) as exc:
            raise FeedV2Error(f"arrays[{i}]: {exc}") from None
        if codec.codec not in ("linear", "log2") or dtype.kind != "u" or not 0 <= length <= 1 << 26:
            raise FeedV2Error(f"arrays[{i}] ({name}): unsupported codec, dtype or length")
        if offset < 0 or nbytes < 0 or offset + nbytes > len(body):
            raise FeedV2Error(f"arrays[{i}] ({name}): bytes {offset}..{offset + nbytes} outside the message")
        data = bytes(body[offset:offset + nbytes])
        if entry.get("deflate"):
            d = zlib.decompressobj()
            data = d.decompress(data, length * dtype.itemsize + 1)
        if len(data) != length * dtype.itemsize:
            raise FeedV2Error(f"arrays[{i}] ({name}): {len(data)} bytes for {length} values of {dtype}")
        arrays[name] = codec.restore(np.frombuffer(data, dtype=dtype))
    return header, arrays
