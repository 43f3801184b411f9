"""Prometheus remote-write 1.0 bodies, encoded by hand and vectorized over ports.

The messages (Prometheus Remote-Write 1.0 specification, https://prometheus.io/docs/specs/remote_write_spec):
``WriteRequest { repeated TimeSeries timeseries = 1; }``, ``TimeSeries { repeated Label labels = 1; repeated
Sample samples = 2; }``, ``Label { string name = 1; string value = 2; }``, ``Sample { double value = 1; int64
timestamp = 2; }`` (milliseconds); labels sorted by name, ``__name__`` the metric's; the body is the protobuf
compressed with snappy's block format (not framed) and sent with ``Content-Encoding: snappy``,
``Content-Type: application/x-protobuf`` and ``X-Prometheus-Remote-Write-Version: 0.1.0``.

Every sample of one sweep has the same timestamp and a series' label set differs between ports only in
``guid`` and ``port``: :class:`PortLabels` encodes a port set's labels once, :func:`write_request` lays out one
series' messages with numpy (no loop over ports), one sample per sweep or several sweeps' samples per port (its
labels once for them all: the server parses a port's labels once per request). A NaN value (not measured) is not
sent.
"""

from __future__ import annotations

import cramjam
import numpy as np
from numpy.lib.stride_tricks import as_strided

__all__ = ["HEADERS", "PortLabels", "varint", "write_request", "write_request_array", "compressed"]

HEADERS = {"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
           "X-Prometheus-Remote-Write-Version": "0.1.0"}


def varint(n: int) -> bytes:
    """Protobuf base-128 varint of a non-negative ``n``."""
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes([tag]) + varint(len(payload)) + payload


def _label(name: str, value: str) -> bytes:
    return _field(0x0A, _field(0x0A, name.encode()) + _field(0x12, value.encode()))


class PortLabels:
    """The encoded ``fabric``, ``guid``, ``port`` labels of each port of a sweep, flat: ``flat`` uint8, ``length``
    int64 ``[K]``; and by encoded length (``groups``: length -> (rows int64 ``[R]``, labels uint8 ``[R, length]``)),
    so that a series whose ports all have their samples is laid out as a few 2-d arrays of fixed-size messages.
    Made once per port set and kept while the ports stay the same: label sets do not change between sweeps."""

    def __init__(self, fabric_id: int, guids: np.ndarray, ports: np.ndarray) -> None:
        fabric = _label("fabric", str(int(fabric_id)))
        parts = [fabric + _label("guid", f"0x{int(g):016x}") + _label("port", str(int(p)))
                 for g, p in zip(guids.tolist(), ports.tolist(), strict=True)]  # once per port set, not per sweep
        self.length = np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts))
        self.flat = np.frombuffer(b"".join(parts), dtype=np.uint8)
        starts = np.cumsum(self.length) - self.length
        self.groups: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for size in np.unique(self.length).tolist():  # a few lengths (port numbers of 1 or 2 digits)
            rows = np.flatnonzero(self.length == size)
            self.groups[size] = (rows, self.flat[starts[rows, None] + np.arange(size)])


def _spread(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Positions ``starts[i] + 0..lengths[i]-1`` of every ``i``, concatenated."""
    total = int(lengths.sum())
    firsts = np.cumsum(lengths) - lengths
    return np.repeat(starts - firsts, lengths) + np.arange(total, dtype=np.int64)


def _sample_templates(times: np.ndarray, metric: str) -> np.ndarray:
    """One Sample message per timestamp with its value bytes zero, uint8 ``[S, width]`` (``ValueError`` when the
    timestamps' varints differ in length)."""
    stamps = [varint(int(t)) for t in times.tolist()]  # S timestamps
    if len({len(ts) for ts in stamps}) != 1:
        raise ValueError(f"{metric}: timestamps {times.tolist()} differ in encoded length; send them apart")
    ts_len = len(stamps[0])
    # Sample: tag 0x12, length, 0x09 + 8 value bytes, 0x10 + timestamp varint
    return np.frombuffer(b"".join(bytes([0x12, 1 + 8 + 1 + ts_len, 0x09]) + bytes(8) + b"\x10" + ts
                                  for ts in stamps), dtype=np.uint8).reshape(len(stamps), -1)


def _header(body: int, metric: str) -> bytes:
    if body >= 1 << 14:
        raise ValueError(f"{metric}: a time series of {body} bytes")
    return b"\x0a" + varint(body)


def _full_rows(out: np.ndarray, name: np.ndarray, labels: np.ndarray, templates: np.ndarray, values: np.ndarray,
               metric: str) -> None:
    """Lay out TimeSeries messages of equal size into ``out`` ``[R, size]``: the name, ``labels`` ``[R, L]`` and one
    sample per template with ``values`` ``[R, S]`` (none NaN); column copies, no per-port index."""
    rows, width = len(labels), templates.shape[1]
    head = np.frombuffer(_header(len(name) + labels.shape[1] + templates.size, metric), dtype=np.uint8)
    at = len(head) + len(name)
    out[:, :len(head)] = head
    out[:, len(head):at] = name
    out[:, at:at + labels.shape[1]] = labels
    at += labels.shape[1]
    raw = np.ascontiguousarray(values, dtype="<f8").view(np.uint8).reshape(rows, -1, 8)
    count = templates.shape[0]  # S samples per port (a few sweeps): two strided copies for them all
    stride = out.strides[0]
    as_strided(out[:, at:], shape=(rows, count, width), strides=(stride, width, 1), writeable=True)[:] = templates
    as_strided(out[:, at + 3:], shape=(rows, count, 8), strides=(stride, width, 1), writeable=True)[:] = raw


def write_request(metric: str, labels: PortLabels, values: np.ndarray, t_ms: int | np.ndarray) -> bytes:
    """The (uncompressed) WriteRequest of one series: ``values`` ``[K]`` at ``t_ms``, or ``[K, S]`` at the ``S``
    times ``t_ms`` (several sweeps in one request: each port's labels sent once for its ``S`` samples); NaN left
    out. Ports with every sample are laid out by label length as fixed-size messages (:func:`_full_rows`); the
    others (some samples missing) one by one in numpy (:func:`_partial_rows`)."""
    return write_request_array(metric, labels, values, t_ms).tobytes()


def write_request_array(metric: str, labels: PortLabels, values: np.ndarray, t_ms: int | np.ndarray) -> np.ndarray:
    """:func:`write_request`'s body as the uint8 array it is laid out in (what :func:`compressed` takes without
    copying it to bytes first)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[:, None] if values.ndim == 1 else values
    times = np.atleast_1d(np.asarray(t_ms, dtype=np.int64))
    if values.shape[1] != len(times):
        raise ValueError(f"{metric}: {values.shape[1]} samples per port, {len(times)} timestamps")
    templates = _sample_templates(times, metric)
    keep = ~np.isnan(values)
    count = keep.sum(axis=1)
    full = count == len(times)
    name = np.frombuffer(_label("__name__", metric), dtype=np.uint8)
    parts: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, their labels) of each size, every sample there
    size = 0
    for length, (rows, block) in labels.groups.items():
        mine = full[rows]
        if mine.any():
            rows, block = (rows, block) if mine.all() else (rows[mine], block[mine])
            parts.append((rows, block))
            body = len(name) + length + templates.size
            size += len(rows) * (len(_header(body, metric)) + body)
    partial = np.flatnonzero(~full & (count > 0))
    tail = _partial_rows(metric, name, labels, values, keep, count, partial, templates) if len(partial) else b""
    if not size:
        return np.frombuffer(tail, dtype=np.uint8)
    out = np.empty(size + len(tail), dtype=np.uint8)
    at = 0
    for rows, block in parts:
        body = len(name) + block.shape[1] + templates.size
        n = len(rows) * (len(_header(body, metric)) + body)
        _full_rows(out[at:at + n].reshape(len(rows), -1), name, block, templates, values[rows], metric)
        at += n
    out[at:] = np.frombuffer(tail, dtype=np.uint8)
    return out


def _partial_rows(metric: str, name: np.ndarray, labels: PortLabels, values: np.ndarray, keep: np.ndarray,
                  count: np.ndarray, which: np.ndarray, templates: np.ndarray) -> bytes:
    """TimeSeries messages of the ports ``which`` (some samples missing), their present samples only."""
    rows = np.zeros(len(values), dtype=bool)
    rows[which] = True
    width = templates.shape[1]
    plen = labels.length[rows]
    pflat = labels.flat[np.repeat(rows, labels.length)]
    body = len(name) + plen + count[rows] * width  # TimeSeries length
    if body.max() >= 1 << 14:
        raise ValueError(f"{metric}: a time series of {int(body.max())} bytes")
    head = 2 + (body >= 0x80)  # tag and 1 or 2 varint bytes
    size = head + body
    start = np.cumsum(size) - size
    out = np.empty(int(size.sum()), dtype=np.uint8)
    out[start] = 0x0A
    out[start + 1] = np.where(body >= 0x80, (body & 0x7F) | 0x80, body)
    two = body >= 0x80
    out[start[two] + 2] = body[two] >> 7
    pos = start + head
    out[pos[:, None] + np.arange(len(name))] = name
    out[_spread(pos + len(name), plen)] = pflat
    spos = pos + len(name) + plen  # where each kept row's samples start
    k, j = np.nonzero(keep[rows])  # row-major: each row's samples in time order
    first = np.cumsum(count[rows]) - count[rows]
    dest = spos[k] + (np.arange(len(k)) - first[k]) * width
    out[dest[:, None] + np.arange(width)] = templates[j]
    out[dest[:, None] + 3 + np.arange(8)] = values[rows][k, j].astype("<f8").view(np.uint8).reshape(-1, 8)
    return out.tobytes()


def compressed(body: bytes | np.ndarray) -> bytes:
    """``body`` (bytes, or a contiguous uint8 array) in snappy's block format, as remote write sends it."""
    return bytes(cramjam.snappy.compress_raw(body))
