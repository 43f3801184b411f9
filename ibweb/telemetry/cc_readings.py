"""The congestion control counters of a telemetry-fed fabric's ports, and their rates between sweeps (issue 41).

Each sweep that read some (the collector's ``perfquery --rcvcc`` per switch port, the congestion control blocks
of a drop directory's ``perfquery*.txt``, or a push's samples holding them) puts them here: ``PortPktRcvFECN`` and
``PortPktRcvBECN`` per port, addressed as perfquery addresses it (``lid * 256 + port``), each timed when its command
returned (a pushed sample: its ``t``). The newest and the previous readings are kept (cache keys ``cc`` and
``cc_prev`` under ``ibweb:telemetry:<fabric id>:``), as the sweeps' counters are (:mod:`.store`); rates per second
are the deltas over the two readings of a port, over the interval between their times: unknown (NaN) for a port
read once, a counter not read, no time between the reads, or a counter that went down (cleared, or wrapped at its
32 bits).
"""

from __future__ import annotations

import threading

import numpy as np
from django.core.cache import cache

from fabric_engine.telemetry.perfquery_cc import CCSamples

__all__ = ["put", "readings", "port_reading", "forget", "COUNTERS"]

_TTL_S = 24 * 3600
_lock = threading.Lock()
#: What is kept per port: (name in the readings and the API, perfquery's counter).
COUNTERS = (("fecn", "PortPktRcvFECN"), ("becn", "PortPktRcvBECN"))


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:telemetry:{fabric_id}:{part}"


def put(fabric_id: int, samples: CCSamples) -> int:
    """Make ``samples`` (one row per port, :meth:`~.CCSamples.merged`) the newest reading; the newest so far becomes
    the previous one. Returns the number of ports kept."""
    order = np.argsort(samples.keys, kind="stable")
    entry = {"keys": samples.keys[order], "t": samples.t[order].astype(np.float64),
             **{name: samples.column(col)[order] for name, col in COUNTERS}}
    with _lock:
        newest = cache.get(_key(fabric_id, "cc"))
        parts = {_key(fabric_id, "cc"): entry}
        if newest is not None:
            parts[_key(fabric_id, "cc_prev")] = newest
        cache.set_many(parts, _TTL_S)
    return int(entry["keys"].size)


def forget(fabric_id: int) -> None:
    """Drop the fabric's readings (congestion counters turned off, tests)."""
    cache.delete_many([_key(fabric_id, "cc"), _key(fabric_id, "cc_prev")])


def readings(fabric_id: int) -> dict | None:
    """The newest reading with rates: ``{"keys", "t", "fecn", "becn", "fecn_per_s", "becn_per_s"}`` (arrays, one
    row per port in key order; NaN: unknown); None before any."""
    got = cache.get_many([_key(fabric_id, "cc_prev"), _key(fabric_id, "cc")])
    newest, prev = got.get(_key(fabric_id, "cc")), got.get(_key(fabric_id, "cc_prev"))
    if newest is None:
        return None
    keys = newest["keys"]
    out = dict(newest)
    rates = {f"{name}_per_s": np.full(keys.size, np.nan) for name, _ in COUNTERS}
    if prev is not None and prev["keys"].size and keys.size:
        at = np.minimum(np.searchsorted(prev["keys"], keys), prev["keys"].size - 1)
        both = prev["keys"][at] == keys
        dt = np.where(both, newest["t"] - prev["t"][at], np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            for name, _ in COUNTERS:
                delta = newest[name] - np.where(both, prev[name][at], np.nan)
                rates[f"{name}_per_s"] = np.where((delta >= 0) & (dt > 0), delta / dt, np.nan)
    out.update(rates)
    return out


def port_reading(fabric_id: int, lid: int, port: int) -> dict | None:
    """``{"t", "fecn", "becn", "fecn_per_s", "becn_per_s"}`` of the port perfquery addresses as ``lid``/``port``
    (None: an unknown value; rates rounded to 3 decimals), or None when the newest reading has no such port."""
    r = readings(fabric_id)
    if r is None or not r["keys"].size:
        return None
    key = int(lid) * 256 + int(port)
    i = int(np.searchsorted(r["keys"], key))
    if i >= r["keys"].size or int(r["keys"][i]) != key:
        return None

    def value(x: float, digits: int | None = None):
        return None if np.isnan(x) else (int(x) if digits is None else round(float(x), digits))

    return {"t": round(float(r["t"][i]), 3),
            **{name: value(r[name][i]) for name, _ in COUNTERS},
            **{f"{name}_per_s": value(r[f"{name}_per_s"][i], 3) for name, _ in COUNTERS}}
