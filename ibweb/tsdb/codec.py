"""How the embedded store keeps values: float32 rounded to 10 mantissa bits, byte-shuffled, compressed; and the
NaN-aware reductions its tiers and charts use.

Rounding off the low 13 mantissa bits leaves a relative error below 2**-11 (the history ring's float16 precision,
with float32's range, so byte rates fit); splitting each value's 4 bytes into 4 planes puts the zero and slowly
changing bytes together, which the compressors (cramjam: lz4 blocks for small rows, zstd for large) then squeeze.
"""

from __future__ import annotations

from collections.abc import Sequence

import cramjam
import numpy as np

__all__ = ["byte_planes", "decode_block", "decode_rows", "encode_block", "encode_rows", "from_planes", "reduce_bins",
           "reduce_groups"]


def _planes(values: np.ndarray) -> np.ndarray:
    """Rows of ``values`` ``[R, n]`` as float32 rounded to 10 mantissa bits, byte-shuffled: uint8 ``[R, 4n]``."""
    u = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    finite = (u & 0x7F800000) != 0x7F800000
    u = np.where(finite, (u + np.uint32(0x1000)) & np.uint32(0xFFFFE000), u)
    rows, b = u.shape[0], u.view(np.uint8).reshape(u.shape[0], -1, 4)
    out = np.empty((rows, 4, b.shape[1]), dtype=np.uint8)
    for i in range(4):  # as from_planes: four strided copies
        out[:, i] = b[:, :, i]
    return out.reshape(rows, -1)


_CODECS = {"lz4": (cramjam.lz4.compress_block, cramjam.lz4.decompress_block),
           "zstd": (lambda b: cramjam.zstd.compress(b, level=1), cramjam.zstd.decompress)}


def encode_rows(values: np.ndarray, codec: str = "zstd") -> list[bytes]:
    """Each row of ``values`` ``[R, ...]`` as one row's ``data``: float32 rounded to 10 mantissa bits,
    byte-shuffled, compressed (``lz4`` block for the small pending rows: a few microseconds each; ``zstd`` for
    packed rows)."""
    compress = _CODECS[codec][0]
    planes = _planes(values.reshape(len(values), -1))
    return [bytes(compress(row)) for row in planes]


def decode_rows(datas: Sequence[bytes], shape: tuple[int, ...], codec: str = "zstd") -> np.ndarray:
    """float32 ``[len(datas), *shape]`` of :func:`encode_rows`' rows (one ``-1`` in ``shape``: from the data)."""
    decompress = _CODECS[codec][1]
    raw = np.frombuffer(b"".join(bytes(decompress(d)) for d in datas), dtype=np.uint8)
    return from_planes(raw.reshape(len(datas), 4, -1).transpose(1, 0, 2)).reshape(len(datas), *shape)


def byte_planes(data: bytes, codec: str = "zstd") -> np.ndarray:
    """The 4 byte planes of one row's ``data``, uint8 ``[4, n]`` (the row's values, flattened)."""
    return np.frombuffer(bytes(_CODECS[codec][1](data)), dtype=np.uint8).reshape(4, -1)


def from_planes(planes: np.ndarray) -> np.ndarray:
    """float32 ``[...]`` of byte planes ``[4, ...]`` (some of :func:`byte_planes`' columns)."""
    out = np.empty((*planes.shape[1:], 4), dtype=np.uint8)
    for i in range(4):  # four strided copies: numpy's 4-wide transpose is several times slower
        out[..., i] = planes[i]
    return out.view(np.float32)[..., 0]


def encode_block(values: np.ndarray, codec: str = "zstd") -> bytes:
    """One row's ``data`` (:func:`encode_rows` of one)."""
    return encode_rows(np.asarray(values)[None], codec)[0]


def decode_block(data: bytes, shape: tuple[int, ...], codec: str = "zstd") -> np.ndarray:
    """The float32 array of :func:`encode_block`'s ``data``."""
    return decode_rows([data], shape, codec)[0]


def reduce_bins(a: np.ndarray, starts: np.ndarray, agg: str, axis: int = -1) -> np.ndarray:
    """``a`` reduced along ``axis`` over the bins starting at ``starts`` (sorted), NaN ignored; float64, NaN where a
    bin holds no value."""
    valid = ~np.isnan(a)
    count = np.add.reduceat(valid.astype(np.int32), starts, axis=axis)
    if agg == "mean":
        total = np.add.reduceat(np.where(valid, a, 0).astype(np.float64), starts, axis=axis)
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
    fill = -np.inf if agg == "max" else np.inf
    ufunc = np.maximum if agg == "max" else np.minimum
    out = ufunc.reduceat(np.where(valid, a, fill).astype(np.float64), starts, axis=axis)
    return np.where(count > 0, out, np.nan)


def reduce_groups(a: np.ndarray, ratio: int, agg: str, axis: int) -> np.ndarray:
    """``a`` reduced over consecutive groups of ``ratio`` along ``axis`` (its length a multiple of ``ratio``), NaN
    ignored; float32, NaN where a group holds no value."""
    a = np.moveaxis(a, axis, 0)
    g = a.reshape(a.shape[0] // ratio, ratio, *a.shape[1:])
    valid = ~np.isnan(g)
    count = valid.sum(axis=1)
    if agg == "mean":
        out = np.where(valid, g, 0).sum(axis=1, dtype=np.float64) / np.maximum(count, 1)
    elif agg == "max":
        out = np.where(valid, g, -np.inf).max(axis=1)
    else:
        out = np.where(valid, g, np.inf).min(axis=1)
    return np.moveaxis(np.where(count > 0, out, np.nan).astype(np.float32), 0, axis)
