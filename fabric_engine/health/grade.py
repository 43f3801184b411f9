"""Bit error rates and module readings graded, all ports at once.

BER per port: read where the tool reports it, else computed from counter deltas (:func:`ber_from_deltas`:
error bits over lane rate x lanes x interval). Each of raw (pre-FEC, the worst lane counts), effective
(post-FEC) and symbol BER is graded by the thresholds row of its port's speed, FEC and cable
(:mod:`.thresholds`): normal, warning or error, and *unknown* while the measurement window (time since
the counters were cleared, or the delta interval) is shorter than the row's ``min_window_s`` or not
known. A port's grade is its worst known measure.

Modules: temperature, voltage, bias and RX/TX power per lane against the module's own thresholds (the
repository's fallback only where the module gives none), plus the alarm and warning flags the module
raised itself.
"""

from __future__ import annotations

import numpy as np

from .records import CATEGORIES, LANE_GBPS, HealthRecords
from .thresholds import Thresholds

__all__ = ["NORMAL", "WARNING", "ERROR", "UNKNOWN", "GRADES", "grade_ber", "module_status", "ber_from_deltas",
           "summary"]

UNKNOWN, NORMAL, WARNING, ERROR = -1, 0, 1, 2
#: Grade names by code (index ``code + 1``).
GRADES = ("unknown", "normal", "warning", "error")
_MEASURE_FIELD = {"raw": "raw_ber", "effective": "eff_ber", "symbol": "sym_ber"}


def _lanes(values: np.ndarray) -> list[np.ndarray]:
    """The lane columns of ``values`` (rows x lanes), without trailing lanes no row has a value for."""
    cols = [values[:, k] for k in range(values.shape[1])]
    while len(cols) > 1 and np.isnan(cols[-1]).all():
        cols.pop()
    return cols


def _lane_reduce(op: np.ufunc, values: np.ndarray) -> np.ndarray:
    """``op`` (``np.fmax``/``np.fmin``: lanes not given are skipped) over the lanes, column by column."""
    cols = _lanes(values)
    out = cols[0].copy()
    for col in cols[1:]:
        op(out, col, out=out)
    return out


def _measure_value(rec: HealthRecords, measure: str) -> np.ndarray:
    value = rec[_MEASURE_FIELD[measure]]
    if measure == "raw":  # the worst lane counts
        value = np.fmax(value, _lane_reduce(np.fmax, rec["raw_ber_lane"]))
    return value


def grade_ber(rec: HealthRecords, th: Thresholds) -> dict[str, np.ndarray]:
    """Per port: ``grade`` (worst known measure), one grade per measure and the ``window_s`` measured over."""
    out: dict[str, np.ndarray] = {}
    worst = np.full(len(rec), UNKNOWN, np.int8)
    window = rec["window_s"]
    for measure in _MEASURE_FIELD:
        value = _measure_value(rec, measure)
        lim = th.ber_limits(measure, rec["speed"], rec["fec"], rec["cable"])
        g = np.where(value >= lim[:, 1], ERROR, np.where(value > lim[:, 0], WARNING, NORMAL)).astype(np.int8)
        known = ~np.isnan(value) & ~np.isnan(lim[:, 0]) & (window >= lim[:, 2]) & (rec["up"] != 0)
        g[~known] = UNKNOWN
        out[measure] = g
        worst = np.maximum(worst, g)
    out["grade"] = worst
    out["window_s"] = window
    return out


def module_status(rec: HealthRecords, th: Thresholds) -> dict[str, np.ndarray]:
    """Per port: ``module`` (a module is there), ``alarm`` and ``warning`` (readings out of the module's
    alarm or warning range, or flags it raised; a port in alarm is not also counted as warning)."""
    alarm = rec["flag_alarms"] > 0
    warn = rec["flag_warnings"] > 0
    for quantity in ("temp", "voltage", "bias", "rx_power", "tx_power"):
        limits = rec[f"{quantity}_th"]
        fallback = th.module_fallback(quantity)
        if not np.isnan(fallback).all():
            limits = np.where(np.isnan(limits), fallback[None, :], limits)
        values = rec[quantity]
        low = high = values
        if values.ndim == 2:  # the lowest and highest lane (NaN where the port has no readings)
            low, high = _lane_reduce(np.fmin, values), _lane_reduce(np.fmax, values)
        # NaN compares false: a reading or threshold not given is never out of range
        alarm |= (low < limits[:, 0]) | (high > limits[:, 3])
        warn |= (low < limits[:, 1]) | (high > limits[:, 2])
    module = (rec["present"] == 1) | (rec["vendor"] != "") | (rec["sn"] != "") | ~np.isnan(rec["temp"])
    module &= rec["present"] != 0
    return {"module": module, "alarm": alarm & module, "warning": warn & ~alarm & module}


def ber_from_deltas(before: HealthRecords, after: HealthRecords, interval_s: float | None = None) -> HealthRecords:
    """``after`` with raw/effective/symbol BER (and per-lane raw BER) computed from the counter deltas to
    ``before`` wherever ``after`` has no BER of its own: error bits / (lane rate x lanes x interval).

    Rows are matched by port identity; the interval is ``after.t - before.t`` or ``interval_s``. A counter
    that went down (cleared or wrapped) gives no BER for that port. Lane rate is ``lane_gbps`` or that of
    ``speed``; the window becomes the interval.
    """
    keys_b, keys_a = before.keys(), after.keys()
    order = np.argsort(keys_b)
    pos = np.searchsorted(keys_b[order], keys_a)
    pos = np.minimum(pos, max(keys_b.size - 1, 0))
    match = keys_b.size > 0
    idx = order[pos] if match else np.zeros(keys_a.size, np.int64)
    found = (keys_b[idx] == keys_a) if match else np.zeros(keys_a.size, bool)
    dt = after["t"] - before["t"][idx]
    if interval_s is not None:
        dt = np.where(np.isnan(dt), interval_s, dt)
    dt = np.where(found & (dt > 0), dt, np.nan)
    speed_rate = np.array([LANE_GBPS.get(s, np.nan) for s in CATEGORIES["speed"]])[after["speed"]]
    rate = np.where(np.isnan(after["lane_gbps"]), speed_rate, after["lane_gbps"])
    lanes = np.where(after["lanes"] > 0, after["lanes"], np.nan).astype(float)
    bits = rate * 1e9 * dt
    data = dict(after.data)
    for counter, ber in (("raw_errors", "raw_ber"), ("eff_errors", "eff_ber"), ("sym_errors", "sym_ber")):
        delta = after[counter] - before[counter][idx]
        computed = np.where(delta >= 0, delta / (bits * lanes), np.nan)
        data[ber] = np.where(np.isnan(after[ber]), computed, after[ber])
    lane_delta = after["raw_errors_lane"] - before["raw_errors_lane"][idx]
    lane_ber = np.where(lane_delta >= 0, lane_delta / bits[:, None], np.nan)
    data["raw_ber_lane"] = np.where(np.isnan(after["raw_ber_lane"]), lane_ber, after["raw_ber_lane"])
    data["window_s"] = np.where(np.isnan(after["window_s"]), dt, after["window_s"])
    return HealthRecords(after.guid, after.name, after.port, data, after.source)


def summary(rec: HealthRecords, th: Thresholds, warnings: list | None = None, worst: int = 20) -> dict:
    """The graded summary ``python -m fabric_engine health --json`` prints."""
    g = grade_ber(rec, th)
    m = module_status(rec, th)
    counts = np.bincount(g["grade"].astype(np.int64) + 1, minlength=4)
    window = g["window_s"][~np.isnan(g["window_s"])]
    bad = np.flatnonzero(g["grade"] >= WARNING)
    bad = bad[np.argsort(-g["grade"][bad], kind="stable")][:worst]
    names = [f"0x{int(rec.guid[i]):016x}" if rec.guid[i] else str(rec.name[i]) for i in bad.tolist()]
    return {
        "ports": len(rec),
        "ber": {"normal": int(counts[1]), "warning": int(counts[2]), "error": int(counts[3]),
                "unknown": int(counts[0])},
        "window_s": {"min": float(window.min()), "max": float(window.max())} if window.size else None,
        "modules": int(m["module"].sum()), "module_alarms": int(m["alarm"].sum()),
        "module_warnings": int(m["warning"].sum()), "links_down": int((rec["up"] == 0).sum()),
        "worst": [{"node": str(n), "port": int(rec.port[i]), "grade": GRADES[int(g["grade"][i]) + 1],
                   "raw_ber": _num(_measure_value(rec, "raw")[i]), "effective_ber": _num(rec["eff_ber"][i]),
                   "symbol_ber": _num(rec["sym_ber"][i]), "window_s": _num(g["window_s"][i]),
                   "source": str(rec.source[i])} for n, i in zip(names, bad.tolist(), strict=True)],
        "inventory": _inventory(rec, m["module"]),
        "thresholds": list(th.files),
        "warnings": list(warnings or []),
    }


def _num(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def _inventory(rec: HealthRecords, module: np.ndarray, limit: int = 1000) -> list[dict]:
    rows = np.flatnonzero(module)[:limit]
    return [{"node": f"0x{int(rec.guid[i]):016x}" if rec.guid[i] else str(rec.name[i]), "port": int(rec.port[i]),
             "vendor": rec["vendor"][i], "pn": rec["pn"][i], "sn": rec["sn"][i], "rev": rec["rev"][i],
             "length_m": _num(rec["length_m"][i]), "fw": rec["fw"][i], "identifier": rec["identifier"][i]}
            for i in rows.tolist()]
