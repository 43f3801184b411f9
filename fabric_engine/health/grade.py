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

__all__ = ["NORMAL", "WARNING", "ERROR", "UNKNOWN", "GRADES", "COUNTERS", "grade_ber", "module_status", "module_limits",
           "worst_raw",
           "ber_from_deltas", "counter_baseline", "own_ber", "summary"]

UNKNOWN, NORMAL, WARNING, ERROR = -1, 0, 1, 2
#: Grade names by code (index ``code + 1``).
GRADES = ("unknown", "normal", "warning", "error")
_MEASURE_FIELD = {"raw": "raw_ber", "effective": "eff_ber", "symbol": "sym_ber"}


def _empty(col: np.ndarray) -> bool:
    """No row has a value (one reduction; a broadcast column, one value for every row, by its first)."""
    return not col.size or bool(np.isnan(np.fmax.reduce(col[:1] if col.strides[0] == 0 else col)))


def _lanes(values: np.ndarray) -> list[np.ndarray]:
    """The lane columns of ``values`` (rows x lanes), without lanes no row has a value for (at least one column)."""
    cols = [values[:, k] for k in range(values.shape[1])]
    given = [col for col in cols if not _empty(col)]
    return given or cols[:1]


def _lane_reduce(op: np.ufunc, values: np.ndarray, cols: list[np.ndarray] | None = None) -> np.ndarray:
    """``op`` (``np.fmax``/``np.fmin``: lanes not given are skipped) over the lanes (``cols``: :func:`_lanes` of
    ``values``, when the caller has them), column by column."""
    cols = _lanes(values) if cols is None else cols
    out = np.array(cols[0], np.float64)
    for col in cols[1:]:
        op(out, col, out=out)
    return out


def worst_raw(rec: HealthRecords) -> np.ndarray:
    """Per port the raw BER that is graded: the worst of the port's own and its lanes' (NaN: none given)."""
    if not len(rec):
        return np.array(rec["raw_ber"], np.float64)
    return np.fmax(rec["raw_ber"], _lane_reduce(np.fmax, rec["raw_ber_lane"]))


def _measure_value(rec: HealthRecords, measure: str) -> np.ndarray:
    return worst_raw(rec) if measure == "raw" else rec[_MEASURE_FIELD[measure]]


def _limit_tables(th: Thresholds, measure: str) -> np.ndarray:
    """``th``'s BER limits of ``measure`` for every (speed, FEC, cable) code, ``[speed, fec, cable, 4]``."""
    shape = tuple(len(CATEGORIES[f]) for f in ("speed", "fec", "cable"))
    speed, fec, cable = (np.ascontiguousarray(c.ravel()) for c in np.indices(shape, np.int8))
    return th.ber_limits(measure, speed, fec, cable).reshape(*shape, -1)


def grade_ber(rec: HealthRecords, th: Thresholds, raw: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per port: ``grade`` (worst known measure), one grade per measure and the ``window_s`` measured over.
    ``raw``: :func:`worst_raw` of ``rec`` when the caller has it."""
    out: dict[str, np.ndarray] = {}
    n = len(rec)
    worst = np.full(n, UNKNOWN, np.int8)
    window = rec["window_s"]
    nf, nc = len(CATEGORIES["fec"]), len(CATEGORIES["cable"])
    cats = [rec[f] for f in ("speed", "fec", "cable")]
    if n and all(c.strides[0] == 0 for c in cats):  # one speed, FEC and cable for every port: one table row
        combo = (int(cats[0][0]) * nf + int(cats[1][0])) * nc + int(cats[2][0])
    else:
        combo = (np.asarray(cats[0], np.intp) * nf + cats[1]) * nc + cats[2]  # one table row per port
    up = rec["up"] != 0
    for measure in _MEASURE_FIELD:
        value = raw if measure == "raw" and raw is not None else _measure_value(rec, measure)
        table = _limit_tables(th, measure).reshape(-1, 4)
        normal, error, min_window = (table[:, j][combo] for j in range(3))  # a column at a time: no [n, 4] copy
        g = np.where(value >= error, ERROR, np.where(value > normal, WARNING, NORMAL)).astype(np.int8)
        known = ~np.isnan(value) & ~np.isnan(normal) & (window >= min_window) & up
        g[~known] = UNKNOWN
        out[measure] = g
        np.maximum(worst, g, out=worst)
    out["grade"] = worst
    out["window_s"] = window
    return out


def module_limits(rec: HealthRecords, th: Thresholds, quantity: str, rows: np.ndarray | None = None) -> np.ndarray:
    """A module quantity's thresholds per port (``rows`` of ``rec``, None: all): the module's own, else the table's
    fallback, ``[n, 4]`` (:data:`~.records.TH_COLUMNS`). Thresholds alike for every port (one row, broadcast: most
    fabrics' modules give none, or all the same) stay one row, broadcast (read-only)."""
    limits = rec[f"{quantity}_th"]
    fallback = th.module_fallback(quantity)
    n = limits.shape[0] if rows is None else len(rows)
    if limits.shape[0] and limits.strides[0] == 0:
        return np.broadcast_to(np.where(np.isnan(limits[0]), fallback, limits[0]), (n, limits.shape[1]))
    limits = limits if rows is None else limits[rows]
    return np.where(np.isnan(limits), fallback[None, :], limits)


def module_status(rec: HealthRecords, th: Thresholds) -> dict[str, np.ndarray]:
    """Per port: ``module`` (a module is there), ``alarm`` and ``warning`` (readings out of the module's
    alarm or warning range, or flags it raised; a port in alarm is not also counted as warning); ``ranges``: the
    lowest and highest lane of each per-lane quantity some port has (``bias``, ``rx_power``, ``tx_power``; NaN where
    a port has none), for the health conditions to judge without reducing the lanes again."""
    alarm = rec["flag_alarms"] > 0
    warn = rec["flag_warnings"] > 0
    ranges: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for quantity in ("temp", "voltage", "bias", "rx_power", "tx_power"):
        values = rec[quantity]
        if values.ndim == 2:  # the lowest and highest lane (NaN where the port has no readings)
            cols = _lanes(values)
            if _empty(cols[0]):  # no port has a reading: nothing out of range
                continue
            low, high = _lane_reduce(np.fmin, values, cols), _lane_reduce(np.fmax, values, cols)
            ranges[quantity] = (low, high)
        elif _empty(values):
            continue
        else:
            low = high = values
        limits = module_limits(rec, th, quantity)
        lim = [limits[:, j] for j in range(4)]
        # NaN compares false: a reading or threshold not given is never out of range
        alarm |= (low < lim[0]) | (high > lim[3])
        warn |= (low < lim[1]) | (high > lim[2])
    present = rec["present"]
    module = (present == 1) | ~np.isnan(rec["temp"])
    rest = np.flatnonzero(~module)  # only these need their inventory strings compared
    if rest.size:
        module[rest] = (rec["vendor"][rest] != "") | (rec["sn"][rest] != "")
    module &= present != 0
    return {"module": module, "alarm": alarm & module, "warning": warn & ~alarm & module, "ranges": ranges}


#: The counters BER is computed from (:func:`ber_from_deltas`), as :data:`~.records.FIELDS` names: error counts
#: and the FEC block counts that only show a clear (a count lower than before).
COUNTERS = ("raw_errors", "eff_errors", "sym_errors", "raw_errors_lane", "fec_corrected", "fec_uncorrectable")
_BER_OF = (("raw_errors", "raw_ber"), ("eff_errors", "eff_ber"), ("sym_errors", "sym_ber"))


def counter_baseline(rec: HealthRecords, keys: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """What :func:`ber_from_deltas` needs of an earlier reading, and no more: ``keys`` (port identities, ``rec.keys()``
    unless given), ``t`` and the :data:`COUNTERS` (a small copy to keep between sweeps instead of every field)."""
    if keys is None:
        keys = rec.keys() if len(rec) else np.zeros(0, str)
    return {"keys": keys, "t": np.array(rec["t"]), **{c: np.array(rec[c]) for c in COUNTERS}}


def ber_from_deltas(before: HealthRecords | dict[str, np.ndarray], after: HealthRecords,
                    interval_s: float | None = None, after_keys: np.ndarray | None = None) -> HealthRecords:
    """``after`` with raw/effective/symbol BER (and per-lane raw BER) computed from the counter deltas to
    ``before`` wherever ``after`` has no BER of its own: error bits / (lane rate x lanes x interval).

    ``before``: records, or their :func:`counter_baseline`. Rows are matched by port identity (GUID or name, and
    port; not by row; ``after_keys``: ``after.keys()`` when the caller has them). The interval is
    ``after.t - before.t``, or ``interval_s`` where a time is missing; it becomes ``window_s``, the measurement
    window the grade and the report show. Lane rate is ``lane_gbps`` or that of ``speed``
    (:data:`~.records.LANE_GBPS`, line rate in Gb/s); a port's rate is that times ``lanes``.

    A port with any of :data:`COUNTERS` lower than before (cleared, or wrapped) has no BER for that interval
    (NaN, unknown, never a negative rate): one lane's clear must not hide in a sum that still rose. So has a
    port not in ``before``, or whose rate or interval is not known.

    Which counter stands for which BER (perfquery.c field names, :mod:`.perfquery_ext_speeds`):

    * raw (pre-FEC) BER: ``raw_errors`` = ``PortFECCorrectedSymbolCtr`` with RS-FEC (per lane
      ``FECCorrectableSymbolCtrLane<n>``), else the sum of ``ErrorDetectionCounterLane<n>`` and
      ``FECCorrectableBlockCtrLane<n>``;
    * effective (post-FEC) BER: ``eff_errors`` = ``PortFECUncorrectableBlockCtr`` (or the lanes'
      ``FECUncorrectableBlockCtrLane<n>``) plus ``SyncHeaderErrorCounter`` and ``UnknownBlockCounter``;
    * symbol BER: ``sym_errors`` where a reader gives it (``perfquery -T`` has none: the sweep's
      ``SymbolErrorCounter`` of PortCounters or PortCountersExtended is its count, :mod:`.port_counters`).

    The RS-FEC counters are 32 bits wide and the per-lane error detection counters 16 (libibmad ``fields.c``): a
    wrap shows as a lower value, so that interval is unknown, as after a clear.

    Every count is at least one errored bit (a corrected RS symbol is 10 bits with 1..10 in error, a corrected or
    uncorrectable block at least one), so a BER computed here is a lower bound of the tool's own.
    """
    keys_b = before.keys() if isinstance(before, HealthRecords) else before["keys"]
    keys_a = after.keys() if after_keys is None else after_keys
    n = keys_a.size
    if keys_b.size:
        order = np.argsort(keys_b, kind="stable")
        pos = np.minimum(np.searchsorted(keys_b[order], keys_a), keys_b.size - 1)
        idx = order[pos]
        found = keys_b[idx] == keys_a
    else:
        idx, found = np.zeros(n, np.int64), np.zeros(n, bool)

    def prev(field: str) -> np.ndarray:
        col = np.asarray(before[field])
        return col[idx] if col.size else np.full(after[field].shape, np.nan)

    dt = after["t"] - prev("t")
    if interval_s is not None:
        dt = np.where(np.isnan(dt), interval_s, dt)
    dt = np.where(found & (dt > 0), dt, np.nan)
    deltas = {c: after[c] - prev(c) for c in COUNTERS}
    cleared = np.zeros(n, bool)
    for d in deltas.values():  # NaN compares false: a counter not read clears nothing
        cleared |= (d < 0).any(axis=1) if d.ndim == 2 else d < 0
    dt = np.where(cleared, np.nan, dt)
    speed_rate = np.array([LANE_GBPS.get(s, np.nan) for s in CATEGORIES["speed"]])[after["speed"]]
    rate = np.where(np.isnan(after["lane_gbps"]), speed_rate, after["lane_gbps"])
    lanes = np.where(after["lanes"] > 0, after["lanes"], np.nan).astype(float)
    lane_bits = rate * 1e9 * dt
    data = dict(after.data)
    for counter, ber in _BER_OF:
        data[ber] = np.where(np.isnan(after[ber]), deltas[counter] / (lane_bits * lanes), after[ber])
    lane_ber = deltas["raw_errors_lane"] / lane_bits[:, None]
    data["raw_ber_lane"] = np.where(np.isnan(after["raw_ber_lane"]), lane_ber, after["raw_ber_lane"])
    data["window_s"] = np.where(np.isnan(after["window_s"]), dt, after["window_s"])
    return HealthRecords(after.guid, after.name, after.port, data, after.source)


def own_ber(rec: HealthRecords) -> np.ndarray:
    """Rows whose tool reported a BER of its own (any of raw, effective, symbol or a lane's raw BER)."""
    out = ~np.isnan(rec["raw_ber"]) | ~np.isnan(rec["eff_ber"]) | ~np.isnan(rec["sym_ber"])
    return out | ~np.isnan(rec["raw_ber_lane"]).all(axis=1)


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
