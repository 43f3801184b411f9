"""A shard's counters in transit: parsed at once, packed as compressed binary, merged as arrays.

Shard results cross Celery (JSON serializer) and its result backend, so the samples
travel as one ASCII string: base64 of ``zlib(header + arrays)``. The header is
fixed-size (magic, format version, rows, columns, length of the arrays); a reader
checks it, and the decompressed size against it, before it allocates anything,
and names the shard in its error. Measured (``tests/bench/bench_telemetry.py``,
40,960 switch ports): the JSON lists this replaces (``tolist`` -> ``json`` ->
``np.array``) took 3.5 s and 43 MB; the binary round trip takes tens of ms.

No Django here: the benchmark runs these very functions.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Iterable

import numpy as np

from fabric_engine.captured import MAX_WARNINGS
from fabric_engine.telemetry import COLUMNS, CounterSamples, parse_perfquery_many
from fabric_engine.topology.limits import MAX_FABRIC_PORTS

__all__ = ["TransportError", "encode_samples", "decode_samples", "parse_outputs", "shard_result", "merge_results"]

_MAGIC = b"IBCS"
_VERSION = 1
_HEADER = struct.Struct("<4sHIHQ")  # magic, version, rows, columns, bytes of the arrays
# per row: lid int32, port int16, then per column values uint64, bits uint8, t float64
_ROW_FIXED = 4 + 2
_ROW_PER_COLUMN = 8 + 1 + 8


class TransportError(ValueError):
    """A shard's samples could not be decoded (corrupt, truncated, or of another format)."""


def _row_bytes(columns: int) -> int:
    return _ROW_FIXED + _ROW_PER_COLUMN * columns


def encode_samples(s: CounterSamples, level: int = 1) -> str:
    """``s`` as base64 text of the compressed binary form (fits a JSON task result)."""
    n, c = len(s), len(COLUMNS)
    body = b"".join((np.ascontiguousarray(s.lid, "<i4").tobytes(), np.ascontiguousarray(s.port, "<i2").tobytes(),
                     np.ascontiguousarray(s.values, "<u8").tobytes(), np.ascontiguousarray(s.bits, "u1").tobytes(),
                     np.ascontiguousarray(s.t, "<f8").tobytes()))
    raw = _HEADER.pack(_MAGIC, _VERSION, n, c, len(body)) + body
    return base64.b64encode(zlib.compress(raw, level)).decode("ascii")


def decode_samples(text: str, shard: object = "?") -> CounterSamples:
    """The samples :func:`encode_samples` packed; :class:`TransportError` naming ``shard`` on any corruption."""
    where = f"shard {shard}"
    if not isinstance(text, str):
        raise TransportError(f"{where}: samples are {type(text).__name__}, not the encoded text")
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise TransportError(f"{where}: samples are not base64 ({exc})") from None
    z = zlib.decompressobj()
    try:
        head = z.decompress(packed, _HEADER.size)
    except zlib.error as exc:
        raise TransportError(f"{where}: samples are not zlib data ({exc})") from None
    if len(head) < _HEADER.size:
        raise TransportError(f"{where}: samples truncated ({len(head)} bytes, header is {_HEADER.size})")
    magic, version, n, c, size = _HEADER.unpack(head)
    if magic != _MAGIC or version != _VERSION:
        raise TransportError(f"{where}: not counter samples of format {_VERSION} (magic {magic!r}, version {version})")
    if c != len(COLUMNS):
        raise TransportError(f"{where}: {c} counter columns, this version reads {len(COLUMNS)}")
    if n > MAX_FABRIC_PORTS:
        raise TransportError(f"{where}: {n:,} rows, more than a subnet's {MAX_FABRIC_PORTS:,} ports")
    if size != n * _row_bytes(c):
        raise TransportError(f"{where}: header says {size} bytes of arrays, {n} rows need {n * _row_bytes(c)}")
    try:  # at most `size` bytes are inflated, then one more to see that nothing follows
        body = z.decompress(z.unconsumed_tail, size)
        extra = z.decompress(z.unconsumed_tail, 1) if len(body) == size else b""
        extra += z.flush() if not extra else b""
    except zlib.error as exc:
        raise TransportError(f"{where}: samples corrupt ({exc})") from None
    if len(body) != size or extra or not z.eof or z.unused_data:
        raise TransportError(f"{where}: samples truncated or padded ({len(body)} of {size} bytes of arrays)")
    cut = np.cumsum([0, 4 * n, 2 * n, 8 * n * c, n * c])
    lid = np.frombuffer(body, "<i4", n, int(cut[0])).astype(np.int32)
    port = np.frombuffer(body, "<i2", n, int(cut[1])).astype(np.int16)
    values = np.frombuffer(body, "<u8", n * c, int(cut[2])).reshape(n, c).astype(np.uint64)
    bits = np.frombuffer(body, "u1", n * c, int(cut[3])).reshape(n, c).copy()
    t = np.frombuffer(body, "<f8", n * c, int(cut[4])).reshape(n, c).astype(np.float64)
    return CounterSamples(lid, port, values, bits, t)


def parse_outputs(outputs: Iterable[tuple[str, float, str]], warnings: list | None = None,
                  cc: list | None = None) -> CounterSamples:
    """One shard's ``(text, t, source)`` perfquery outputs, lexed at once and merged to one row per port.

    Lines the parser skipped (a capture's prompts, a tool's stderr) are appended to ``warnings``; ``cc`` gets the
    outputs' congestion control counters (:func:`~fabric_engine.telemetry.perfquery.parse_perfquery`).
    """
    return parse_perfquery_many(outputs, warnings=warnings, cc=cc)


def shard_result(shard: int, samples: CounterSamples, failures: list[dict], warnings: list[dict] | None = None) -> dict:
    """What a shard task returns (JSON): its number, its samples encoded, its failed reads, its skipped lines."""
    return {"shard": shard, "samples": encode_samples(samples), "failures": list(failures),
            "warnings": list(warnings or [])[:MAX_WARNINGS]}


def merge_results(results: Iterable[dict], warnings: list | None = None) -> tuple[CounterSamples, list[dict]]:
    """All shards' samples as one row per port (arrays concatenated, then merged), and their failures.

    A shard whose samples cannot be decoded is a failure of that shard (its ports go stale); the rest merge.
    The shards' warnings are appended to ``warnings``.
    """
    parts, failures = [], []
    for r in results:
        failures += r["failures"]
        if warnings is not None:
            warnings += [w for w in r.get("warnings") or () if isinstance(w, dict)]
        try:
            parts.append(decode_samples(r["samples"], r.get("shard", "?")))
        except TransportError as exc:
            failures.append({"shard": r.get("shard", "?"), "target": None, "error": str(exc)})
    return CounterSamples.concat(parts).merged(), failures
