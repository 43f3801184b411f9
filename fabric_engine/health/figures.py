"""The figures health alerts show, made for many values at once: each function gives exactly what Python's own
formatting of each value gives (the same strings, the same floats), at numpy speed, with Python's formatting for the
few values whose digits the fast path cannot be sure of (within a rounding error of a tie or of a power of ten,
zero, negative or not finite), once per distinct value."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["num", "nums", "sci2", "hex_guids"]


def num(x) -> float | None:
    """``x`` to 6 significant digits (a BER of 1e-13 stays one); None unless finite (JSON has no NaN)."""
    x = float(x)
    return float(f"{x:.6g}") if math.isfinite(x) else None


def _digits(x: np.ndarray, sig: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(r, e, exact, sure)``: the ``sig`` significant digits of each positive ``x`` as the integer ``r``
    (``10**(sig-1) <= r < 10**sig``) and its decimal exponent ``e`` (``x ~ r * 10**(e-sig+1)``), where ``sure``.

    ``r = rint(x * 10**k)``, ``k = sig-1-e``: the product is within 4 roundings of the exact one (the power itself,
    computed in two factors so that neither overflows, and the products), a relative error below 5e-16, so ``r`` is
    the correctly rounded digits Python's formatting gives unless the exact product lies that close to a half: ``sure``
    leaves out those with a margin of 1e-9, and the values whose ``floor(log10)`` may be one off near a power of ten.
    ``exact``: the power is exact (``|k| <= 22``), so ``r / 10**k`` is the double nearest the decimal."""
    pos = np.isfinite(x) & (x > 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        e = np.floor(np.log10(np.where(pos, x, 1.0))).astype(np.int64)
        k = (sig - 1) - e
        first = np.clip(k, -200, 200)
        scaled = x * 10.0 ** first.astype(np.float64) * 10.0 ** (k - first).astype(np.float64)
        r = np.rint(scaled)
        frac = np.abs(scaled - np.trunc(scaled))
    sure = pos & (np.abs(frac - 0.5) > 1e-9) & (scaled >= 10.0 ** (sig - 1)) & (scaled < 10.0 ** sig - 0.5)
    return r, e, np.abs(k) <= 22, sure


def _fill(out: list, x: np.ndarray, rest: np.ndarray, fmt) -> list:
    """``out`` with ``fmt`` of the values of ``x`` at ``rest`` (each distinct value, by its bits, formatted once)."""
    if rest.size:
        bits, inverse = np.unique(x[rest].view(np.int64), return_inverse=True)
        text = [fmt(v) for v in bits.view(np.float64).tolist()]
        for i, j in zip(rest.tolist(), inverse.reshape(-1).tolist(), strict=True):
            out[i] = text[j]
    return out


def nums(x: np.ndarray) -> list[float | None]:
    """:func:`num` of every value of ``x``, the same figures: the 6 digits ``r`` of :func:`_digits` read back as the
    decimal ``r * 10**(e-5)``: ``r / 10**k`` where the power is exact (IEEE 754 division of two exact values is
    correctly rounded, as reading the decimal is), else the decimal's text parsed by numpy (correctly rounded too)."""
    x = np.asarray(x, np.float64).reshape(-1)
    if not x.size:
        return []
    mag = np.abs(x)
    r, e, exact, sure = _digits(mag, 6)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p = 10.0 ** np.abs(np.where(exact, 5 - e, 0))
        value = np.where(5 - e >= 0, r / p, r * p)
    far = np.flatnonzero(sure & ~exact)  # tiny or huge values: the decimal's text, parsed
    if far.size:
        text = np.strings.add(np.strings.add(r[far].astype(np.int64).astype(str), "e"), (e[far] - 5).astype(str))
        value[far] = text.astype(np.float64)
    out = np.copysign(value, x).tolist()
    rest = np.flatnonzero(~sure)
    return _fill(out, x, rest, num)


def sci2(x: np.ndarray) -> list[str]:
    """``f"{v:.2e}"`` of every value of ``x`` (``1.23e-05``, ``1.50e-254``): the digits of :func:`_digits`, written as
    bytes, and the exponent of at least two digits; Python's formatting where :func:`_digits` is not sure."""
    x = np.asarray(x, np.float64).reshape(-1)
    m = x.size
    if not m:
        return []
    r, e, _, sure = _digits(x, 3)
    ri = np.where(sure, r, 100).astype(np.int64)
    codes = np.empty((m, 6), np.uint8)
    codes[:, 0] = 48 + ri // 100
    codes[:, 1] = 46  # .
    codes[:, 2] = 48 + ri // 10 % 10
    codes[:, 3] = 48 + ri % 10
    codes[:, 4] = 101  # e
    codes[:, 5] = np.where(e < 0, 45, 43)  # - +
    head = codes.view("S6").reshape(-1).astype("U6")
    out = np.strings.add(head, np.strings.zfill(np.abs(e).astype(str), 2)).tolist()
    return _fill(out, x, np.flatnonzero(~sure), lambda v: f"{v:.2e}")


def hex_guids(guid: np.ndarray) -> list[str]:
    """``f"0x{g:016x}"`` of every GUID: the hex digits of the GUIDs' big-endian bytes, 16 a GUID."""
    g = np.asarray(guid, np.uint64).reshape(-1)
    if not g.size:
        return []
    digits = np.frombuffer(g.astype(">u8").tobytes().hex().encode("ascii"), "S16").astype("U16")
    return np.strings.add("0x", digits).tolist()
