"""Link health of an emulated fabric: one :class:`~.records.HealthRecords` row per cable end, each tick.

Every cable end reads healthy (drawn once per port from the scenario's seed): a raw BER between 1e-10 and
1e-8, the effective BER the port's FEC leaves of it, a module at 35..55 C with a serial, up since
:data:`UPTIME_S` before the emulation started (so the BER windows are long enough to grade). The faults
of :mod:`.emulated_faults` change their rows' readings over time; a flapping cable also goes down in the
flow model (:meth:`HealthModel.down`).

Effective (post-FEC) BER from the raw BER, for an RS(n, k) code correcting ``t`` symbols of ``m`` bits:
symbol error rate ``p = m * raw``, a block fails with ``C(n, t+1) p^(t+1)`` (its leading term) and leaves
about ``(t+1) m / 2`` bit errors in ``n m`` bits, so ``effective = C(n, t+1) p^(t+1) (t+1) / (2n)``, never
above ``raw``. HDR/NDR/XDR ports run low-latency RS(272,257) (``ll_rs_fec_plr``, t = 7) on cables up to
100 m, else RS(544,514) (``kp4_rs_fec``, t = 15); EDR runs RS(528,514) (t = 7); slower ports no FEC.
The symbol BER is not modelled (not given), nor per-lane readings.

Per tick only the faults' rows are computed; columns nothing changed are shared, read-only, between ticks
(a column a fault changes is copied when it changes), and columns no emulated port gives are broadcast
views: at 32,768 GPUs (about 200,000 cable ends) a tick's readings cost about a millisecond.
"""

from __future__ import annotations

import math

import numpy as np

from ..topology import Fabric
from ..topology.speeds import SPEEDS
from .emulated_faults import Fault, rows_of
from .records import CATEGORIES, FIELDS, LANE_GBPS, HealthRecords, code

__all__ = ["UPTIME_S", "HealthModel", "effective_ber"]

#: Seconds every port has been up (its counters running) when the emulation starts.
UPTIME_S = 86400.0
#: FEC name -> (n, t, m) of its RS code (none where the BER is not corrected).
_RS = {"ll_rs_fec_plr": (272, 7, 10), "ll_rs_fec": (272, 7, 10), "kp4_rs_fec": (544, 15, 10),
       "rs_fec": (528, 7, 10)}
_FEC_A = np.zeros(len(CATEGORIES["fec"]))  # log factor, exponent and m per FEC code
_FEC_B = np.ones_like(_FEC_A)
_FEC_M = np.ones_like(_FEC_A)
for _name, (_n, _t, _m) in _RS.items():
    _c = code("fec", _name)
    _FEC_A[_c] = math.lgamma(_n + 1) - math.lgamma(_t + 2) - math.lgamma(_n - _t) + math.log((_t + 1) / (2 * _n))
    _FEC_B[_c], _FEC_M[_c] = _t + 1, _m
_DYNAMIC = ("up", "link_down", "raw_ber", "eff_ber", "temp", "sn")


def effective_ber(raw: np.ndarray, fec: np.ndarray) -> np.ndarray:
    """Post-FEC BER of ``raw`` under the FEC codes ``fec`` (see the module docstring)."""
    raw = np.asarray(raw, dtype=np.float64)
    p = np.minimum(raw * _FEC_M[fec], 1.0)
    with np.errstate(divide="ignore"):
        eff = np.exp(_FEC_A[fec] + _FEC_B[fec] * np.log(p))
    return np.minimum(eff, raw)


def _codes(field: str, names: np.ndarray) -> np.ndarray:
    """The codes of a categorical field for an array of names (one lookup per distinct name)."""
    uniq, inverse = np.unique(names.astype(str), return_inverse=True)
    return np.array([code(field, u) for u in uniq], np.int8)[inverse.reshape(-1)] if uniq.size else \
        np.zeros(0, np.int8)


def _distinct(names: np.ndarray) -> np.ndarray:
    """``names`` as an object array whose equal names share one string."""
    uniq, inverse = np.unique(names, return_inverse=True)
    return uniq.astype(object)[inverse.reshape(-1)]


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _not_given(field: str, n: int) -> np.ndarray:
    dtype, cols, fill = FIELDS[field]
    return np.broadcast_to(np.array(fill, dtype=dtype), (n, cols) if cols else (n,))


class HealthModel:
    """Per-port health readings of ``fabric`` with ``faults`` injected (see the module docstring)."""

    def __init__(self, fabric: Fabric, faults: list[Fault], seed: int = 0) -> None:
        f = fabric
        self.fabric, self.faults = f, list(faults)
        n_links = f.num_links
        self.n = n = 2 * n_links
        node = np.concatenate([f.a_node, f.b_node]).astype(np.int64)
        cable = np.concatenate([np.arange(n_links), np.arange(n_links)])
        speed_name = np.array(SPEEDS, dtype=object)[f.speed]
        length = np.asarray(f.length_m, dtype=np.float64)[cable]
        pam4 = np.isin(speed_name, ("HDR", "NDR", "XDR"))[cable]
        fec_name = np.where(pam4, np.where(length > 100, "kp4_rs_fec", "ll_rs_fec_plr"),
                            np.where((speed_name == "EDR")[cable], "rs_fec", "none"))
        cable_name = np.where(length <= 3, "dac", np.where(length <= 100, "aoc", "optical"))
        rng = np.random.default_rng((int(seed), 0x4845))  # "HE": draws of its own, apart from the traffic's
        raw = 10.0 ** rng.uniform(-10, -8, n)
        fec = _codes("fec", fec_name)
        end = np.where(np.arange(n) < n_links, "A", "B")
        serial = np.char.add(np.char.add("EMU", np.char.zfill(cable.astype(str), 8)), end)
        self.guid = _frozen(f.guid[node].astype(np.uint64))
        self.name = _frozen(f.node_name[node].astype(object))
        self.port = _frozen(np.concatenate([f.a_port, f.b_port]).astype(np.int16))
        self.source = np.broadcast_to(np.array("emulated", dtype=object), (n,))
        static = {
            "lanes": np.concatenate([f.width, f.width]).astype(np.int16),
            "lane_gbps": np.array([LANE_GBPS[s] for s in SPEEDS])[f.speed][cable],
            "speed": np.array([code("speed", s) for s in SPEEDS], np.int8)[f.speed][cable],
            "fec": fec, "cable": _codes("cable", cable_name),
            "present": np.ones(n, np.int16), "link_recovery": np.zeros(n),
            "voltage": np.full(n, 3.3), "length_m": length,
            "identifier": np.full(n, "OSFP", object), "vendor": np.full(n, "Emulated", object),
            "pn": _distinct(np.char.add(np.char.add("EMU-", np.char.upper(cable_name.astype(str))),
                                        np.char.add("-", speed_name[cable].astype(str)))),
        }
        self._cols = {k: _frozen(np.ascontiguousarray(v)) for k, v in static.items()}
        self._cur = {"up": np.ones(n, np.int16), "link_down": np.zeros(n), "raw_ber": raw,
                     "eff_ber": effective_ber(raw, fec), "temp": np.round(rng.uniform(35.0, 55.0, n), 1),
                     "sn": serial.astype(object)}
        self._cur = {k: _frozen(v) for k, v in self._cur.items()}
        self._base = dict(self._cur)
        self._ber = rows_of(self.faults, "ber_rising", "from", "to", "over_s", "start_s")
        self._hot = rows_of(self.faults, "hot_module", "celsius", "start_s")
        self._swap = rows_of(self.faults, "cable_swap", "at_s")
        flaps = [x for x in self.faults if x.kind == "flapping"]
        self._flap_cable = np.array([x.cable for x in flaps], dtype=np.int64)
        self._flap = {k: np.array([x.params[k] for x in flaps], dtype=np.float64)
                      for k in ("period_s", "down_s", "start_s")}
        self._flap_rows = self._flap_cable[:, None] + np.array([0, n_links])[None, :]
        self._swapped = np.char.add(self._base["sn"][self._swap[0]].astype(str), "-R").astype(object)

    # ---------------------------------------------------------------- flapping
    def _down_time(self, x: float) -> np.ndarray:
        """Seconds each flapping cable has been down from 0 to ``x``."""
        p, d, s = self._flap["period_s"], self._flap["down_s"], self._flap["start_s"]
        since = np.maximum(x - s, 0.0)
        return np.floor(since / p) * d + np.minimum(np.mod(since, p), d)

    def down(self, t0: float, tick_s: float) -> tuple[np.ndarray, np.ndarray]:
        """Cables down for part of the tick ``[t0, t0 + tick_s)`` and the fraction of it each was up."""
        if not self._flap_cable.size:
            return self._flap_cable, np.zeros(0)
        up = 1.0 - (self._down_time(t0 + tick_s) - self._down_time(t0)) / tick_s
        hit = up < 1.0 - 1e-12
        return self._flap_cable[hit], np.clip(up[hit], 0.0, 1.0)

    # ---------------------------------------------------------------- readings
    def _set(self, field: str, rows: np.ndarray, values: np.ndarray) -> None:
        """Write ``values`` to ``rows`` of ``field``, copying the column only if they change it."""
        cur = self._cur[field]
        old = cur[rows]
        same = (old == values) | ((old != old) & (values != values)) if old.dtype.kind == "f" else old == values
        if not np.all(same):
            new = cur.copy()
            new[rows] = values
            self._cur[field] = _frozen(new)

    def readings(self, elapsed: float, now: float) -> HealthRecords:
        """Every cable end's readings at ``elapsed`` seconds of emulated time (``t`` column: ``now``)."""
        x = float(elapsed)
        window = np.full(self.n, UPTIME_S + x)
        rows, lo, hi, over, start = self._ber
        if rows.size:
            frac = np.clip((x - start) / over, 0.0, 1.0)
            raw = lo * (hi / lo) ** frac
            self._set("raw_ber", rows, raw)
            self._set("eff_ber", rows, effective_ber(raw, self._cols["fec"][rows]))
        rows, celsius, start = self._hot
        if rows.size:
            self._set("temp", rows, np.where(x >= start, celsius, self._base["temp"][rows]))
        rows, at = self._swap
        if rows.size:
            self._set("sn", rows, np.where(x >= at, self._swapped, self._base["sn"][rows]))
        if self._flap_cable.size:
            p, d, s = self._flap["period_s"], self._flap["down_s"], self._flap["start_s"]
            since = x - s
            cycles = np.where(since >= 0, np.floor(np.maximum(since, 0.0) / p) + 1, 0.0)
            into = np.mod(np.maximum(since, 0.0), p)
            is_down = (since >= 0) & (into < d)
            up_for = np.where(since < 0, UPTIME_S + x, np.where(is_down, 0.0, into - d))
            rows = self._flap_rows.reshape(-1)
            self._set("up", rows, np.repeat(np.where(is_down, 0, 1), 2).astype(np.int16))
            self._set("link_down", rows, np.repeat(cycles, 2))
            window[rows] = np.repeat(up_for, 2)
        data = {k: _not_given(k, self.n) for k in FIELDS}
        data.update(self._cols)
        data.update(self._cur)
        data["t"] = np.broadcast_to(np.float64(now), (self.n,))
        data["window_s"] = _frozen(window)
        return HealthRecords(self.guid, self.name, self.port, data, self.source)
