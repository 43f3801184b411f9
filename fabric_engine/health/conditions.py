"""Link health conditions of ports, with hysteresis: what stays wrong at each grading until the evidence shows it fixed.

Each :meth:`HealthConditions.update` is one grading of the ports' readings (:class:`PortHealth`, arrays over
the ports read). A condition opens at the first bad grading and lasts until the evidence clears it; a port
not read by a grading keeps its state, a reading that is not known (NaN, BER grade unknown) neither opens
nor clears (nor breaks a run of calm gradings). Kinds:

* ``ber_high``: the port's BER grade (:func:`~.grade.grade_ber`, the worst of raw, effective and symbol)
  is warning (``warning``) or error (``critical``); clears after ``clear_gradings`` normal gradings in a row.
* ``module_temperature``: the module above its warning threshold (``warning``; above its alarm threshold:
  ``critical``); clears when back under the warning threshold minus ``temp_margin_c``.
* ``module_power``: a lane's RX or TX power outside the module's warning range (``warning``; outside its
  alarm range: ``critical``); clears after ``clear_gradings`` gradings in range in a row.
* ``repeated_downs``: ``repeated`` or more downs in 24 h (``warning``); clears when the 24 h count drops
  below it.

State is kept per port identity (GUID, port number), never per row, so gradings in another order do not mix
ports. Each condition carries ``since`` (its first bad grading) and ``count`` (occurrences of the kind on the
port seen by this tracker, this one included).

``link_down_long`` is one-shot (:meth:`HealthConditions.downs_long`): a down episode proven longer than the
job-killing time (:class:`~.downs.DownsConfig` ``critical_s``) is one ``critical`` alert, once per episode, with
its duration (``duration_min_s`` .. ``duration_max_s``), its interval (``start``, ``end``; None: still down)
and ``t`` (its start, what tells one episode's alert from the next).

Alerts have the shape of :mod:`fabric_engine.telemetry.counter_conditions`' ``{"kind", "severity",
"condition": True, "port": "name port N", "guid", "ports": [N], "nodes", "since", "count", "evidence",
"message", "text"}`` (``text``/``nodes``: :func:`~fabric_engine.telemetry.alerts.named`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fabric_engine.telemetry.alerts import named

from .downs import DownTracker
from .grade import ERROR, NORMAL, WARNING
from .port_slots import PortSlots, column

__all__ = ["HEALTH_CONDITION_KINDS", "HealthRules", "PortHealth", "HealthConditions"]

#: The lasting kinds, in the column order of the state arrays.
HEALTH_CONDITION_KINDS: tuple[str, ...] = ("ber_high", "module_temperature", "module_power", "repeated_downs")
_BER, _TEMP, _POWER, _DOWNS = range(4)
_SEVERITY = ("warning", "critical")


@dataclass(frozen=True)
class HealthRules:
    """When a health condition opens and clears."""

    clear_gradings: int = 3
    temp_margin_c: float = 3.0
    repeated: int = 2

    def __post_init__(self) -> None:
        if int(self.clear_gradings) < 1 or int(self.repeated) < 1:
            raise ValueError("clear_gradings and repeated must be at least 1")
        if not self.temp_margin_c >= 0:
            raise ValueError("temp_margin_c must be >= 0")


@dataclass(frozen=True)
class PortHealth:
    """One grading of ``n`` ports, arrays of length ``n``.

    ``guid`` (integers) and ``port`` (0..255): the port identity; ``node``: its node's index in the current
    fabric (-1: none), ``node_name`` names them; ``ber_grade``: :func:`~.grade.grade_ber`'s ``grade``
    (-1 unknown .. 2 error); ``raw_ber``/``eff_ber``: the figures the message gives; ``temp`` (°C) and
    ``temp_th`` ``[n, 4]`` (alarm low, warning low, warning high, alarm high); ``rx_power``/``tx_power``
    ``[n, lanes]`` and ``rx_power_th``/``tx_power_th`` ``[n, 4]``; ``downs_24h``: downs in the last 24 h
    (-1: not known).
    """

    guid: np.ndarray
    port: np.ndarray
    node: np.ndarray
    node_name: Sequence[str]
    ber_grade: np.ndarray
    raw_ber: np.ndarray
    eff_ber: np.ndarray
    temp: np.ndarray
    temp_th: np.ndarray
    rx_power: np.ndarray
    rx_power_th: np.ndarray
    tx_power: np.ndarray
    tx_power_th: np.ndarray
    downs_24h: np.ndarray

    def check(self) -> None:
        """ValueError for arrays of the wrong shape or kind."""
        n = column("guid", self.guid, None, "i").size
        port = column("port", self.port, n, "i")
        if n and (port.min() < 0 or port.max() > 255):
            raise ValueError("port: port numbers must be 0..255")
        column("node", self.node, n, "i")
        for name in ("ber_grade", "downs_24h"):
            column(name, getattr(self, name), n, "i")
        for name in ("raw_ber", "eff_ber", "temp"):
            column(name, getattr(self, name), n, "f")
        for name in ("temp_th", "rx_power", "rx_power_th", "tx_power", "tx_power_th"):
            arr = np.asarray(getattr(self, name))
            if arr.ndim != 2 or arr.shape[0] != n or (name.endswith("_th") and arr.shape[1] != 4):
                raise ValueError(f"{name}: shape {arr.shape}, expected ({n}, {4 if name.endswith('_th') else 'lanes'})")
            if arr.dtype.kind not in "iuf":
                raise ValueError(f"{name}: dtype {arr.dtype}, expected numbers")


def _lanes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest lane of ``[n, lanes]`` (NaN where a port has none), without warnings."""
    known = ~np.isnan(values)
    some = known.any(axis=1)
    low = np.where(some, np.where(known, values, np.inf).min(axis=1, initial=np.inf), np.nan)
    high = np.where(some, np.where(known, values, -np.inf).max(axis=1, initial=-np.inf), np.nan)
    return low, high


def _num(x) -> float | None:
    """``x`` to 6 significant digits (a BER of 1e-13 stays one); None unless finite (JSON has no NaN)."""
    x = float(x)
    return float(f"{x:.6g}") if np.isfinite(x) else None


class HealthConditions:
    """Per-port health condition state across gradings (see the module docstring)."""

    def __init__(self, rules: HealthRules | None = None) -> None:
        self.rules = rules or HealthRules()
        k = len(HEALTH_CONDITION_KINDS)
        self.slots = PortSlots()
        self.active = np.zeros((0, k), bool)
        self.since = np.zeros((0, k))
        self.calm = np.zeros((0, k), np.int64)  # calm gradings in a row while active
        self.count = np.zeros((0, k), np.int64)
        self.critical = np.zeros((0, k), bool)  # the newest bad grading's severity
        self.evidence = np.full((0, 8), np.nan)  # newest figures: raw, eff, temp, warn, alarm, power lo, hi, downs
        self.node = np.zeros(0, np.int64)
        self.names: Sequence[str] = ()
        self._fired = np.zeros(0, np.complex128)  # link_down_long episodes alerted: slot + 1j * start

    def _grow(self) -> None:
        n, old = len(self.slots), self.active.shape[0]
        if n > old:
            extra = n - old
            for name, fill in (("active", False), ("since", np.nan), ("calm", 0), ("count", 0), ("critical", False),
                               ("evidence", np.nan)):
                arr = getattr(self, name)
                setattr(self, name, np.concatenate([arr, np.full((extra, *arr.shape[1:]), fill, arr.dtype)]))
            self.node = np.concatenate([self.node, np.full(extra, -1, np.int64)])

    def update(self, ph: PortHealth, t: float) -> list[dict]:
        """Advance by one grading at ``t``; the open conditions as alerts."""
        ph.check()
        r = self.rules
        rows = self.slots.lookup(np.asarray(ph.guid, np.uint64), np.asarray(ph.port, np.int64))
        self._grow()
        self.node[:] = -1  # node indices of the current fabric only (ports not read: named by GUID)
        self.node[rows] = ph.node
        self.names = ph.node_name
        grade = np.asarray(ph.ber_grade)
        temp = np.asarray(ph.temp, np.float64)
        th = np.asarray(ph.temp_th, np.float64)
        lo_rx, hi_rx = _lanes(np.asarray(ph.rx_power, np.float64))
        lo_tx, hi_tx = _lanes(np.asarray(ph.tx_power, np.float64))
        rx_th, tx_th = np.asarray(ph.rx_power_th, np.float64), np.asarray(ph.tx_power_th, np.float64)
        # NaN compares false: a reading or threshold not known is neither out of range nor in it
        p_alarm = (lo_rx < rx_th[:, 0]) | (hi_rx > rx_th[:, 3]) | (lo_tx < tx_th[:, 0]) | (hi_tx > tx_th[:, 3])
        p_warn = (lo_rx < rx_th[:, 1]) | (hi_rx > rx_th[:, 2]) | (lo_tx < tx_th[:, 1]) | (hi_tx > tx_th[:, 2])
        p_known = ~np.isnan(lo_rx) | ~np.isnan(lo_tx)
        downs = np.asarray(ph.downs_24h, np.int64)
        bad = np.stack([grade >= WARNING, temp > th[:, 2], p_warn | p_alarm, downs >= r.repeated], 1)
        calm = np.stack([grade == NORMAL, temp < th[:, 2] - r.temp_margin_c, p_known & ~p_warn & ~p_alarm,
                         (downs >= 0) & (downs < r.repeated)], 1)
        critical = np.stack([grade >= ERROR, temp > th[:, 3], p_alarm, np.zeros(grade.size, bool)], 1)
        need = np.array([r.clear_gradings, 1, r.clear_gradings, 1])
        was = self.active[rows]
        run = np.where(calm, self.calm[rows] + 1, np.where(bad, 0, self.calm[rows]))  # not known: the run holds
        now = bad | (was & (run < need[None, :]))
        starts = now & ~was
        self.since[rows] = np.where(now, np.where(starts, t, self.since[rows]), np.nan)
        self.count[rows] += starts
        self.calm[rows] = np.where(now & ~bad, run, 0)
        self.active[rows] = now
        self.critical[rows] = np.where(bad, critical, self.critical[rows] & now)
        low = np.fmin(lo_rx, lo_tx)
        high = np.fmax(hi_rx, hi_tx)
        new = np.stack([np.asarray(ph.raw_ber, np.float64), np.asarray(ph.eff_ber, np.float64), temp, th[:, 2],
                        th[:, 3], low, high, np.where(downs >= 0, downs, np.nan)], 1)
        self.evidence[rows] = np.where(np.isnan(new), self.evidence[rows], new)  # a figure not read: the last one
        return self.conditions()

    def conditions(self) -> list[dict]:
        """The open conditions as alerts (few: the loop runs over the open ones only)."""
        out = []
        for row, c in np.argwhere(self.active).tolist():
            kind = HEALTH_CONDITION_KINDS[c]
            what, evidence = self._evidence(c, self.evidence[row])
            out.append({**self._port(row), "kind": kind, "severity": _SEVERITY[int(self.critical[row, c])],
                        "condition": True, "since": round(float(self.since[row, c]), 3),
                        "count": int(self.count[row, c]), "evidence": evidence,
                        **self._named(row, what)})
        return out

    def _port(self, row: int) -> dict:
        guid, port = int(self.slots.guid[row]), int(self.slots.port[row])
        return {"port": f"{self._who(row)} port {port}", "guid": f"0x{guid:016x}", "ports": [port]}

    def _who(self, row: int) -> str:
        node = int(self.node[row])
        return str(self.names[node]) if 0 <= node < len(self.names) else f"0x{int(self.slots.guid[row]):016x}"

    def _named(self, row: int, what: str) -> dict:
        node = int(self.node[row]) if 0 <= int(self.node[row]) < len(self.names) else -1
        return named(f"{{0}} port {int(self.slots.port[row])}: {what}", [node], [self._who(row)])

    def _evidence(self, c: int, e: np.ndarray) -> tuple[str, dict]:
        r = self.rules
        if c == _BER:
            ev = {"raw_ber": _num(e[0]), "effective_ber": _num(e[1]), "clear_gradings": r.clear_gradings}
            return (f"high bit error rate (raw {e[0]:.2e}, effective {e[1]:.2e}; clears after "
                    f"{r.clear_gradings} normal gradings)"), ev
        if c == _TEMP:
            ev = {"temperature_c": _num(e[2]), "warning_c": _num(e[3]), "alarm_c": _num(e[4]),
                  "margin_c": r.temp_margin_c}
            return (f"module at {e[2]:.1f} °C (warning {e[3]:.0f} °C, alarm {e[4]:.0f} °C; clears under "
                    f"{e[3] - r.temp_margin_c:.0f} °C)"), ev
        if c == _POWER:
            ev = {"power_min": _num(e[5]), "power_max": _num(e[6]), "clear_gradings": r.clear_gradings}
            return f"module RX/TX power out of range (lanes {e[5]:.2f} .. {e[6]:.2f})", ev
        ev = {"downs_24h": int(e[7]) if not np.isnan(e[7]) else None, "repeated": r.repeated}
        return f"{int(np.nan_to_num(e[7]))} downs in 24 h (condition at {r.repeated})", ev

    def downs_long(self, tracker: DownTracker) -> list[dict]:
        """``link_down_long`` alerts of the episodes of ``tracker`` proven longer than its job-killing time and
        not alerted before (each once); ports are named as the newest grading named them."""
        e = tracker.episodes()
        crit = np.flatnonzero(e["critical"])
        if not crit.size:
            return []
        rows = self._rows(e["guid"][crit], e["port"][crit])
        self._grow()
        key = e["slot"][crit] + 1j * e["start_hi"][crit]
        new = ~np.isin(key, self._fired)
        self._fired = key  # the tracker keeps an episode until it forgets it for good
        crit_s = tracker.config.critical_s
        out = []
        for k in np.flatnonzero(new).tolist():  # the new critical downs only
            i, row = int(crit[k]), int(rows[k])
            lo, hi = float(e["duration_lo"][i]), float(e["duration_hi"][i])
            still = bool(e["open"][i])
            span = (f"{lo:.0f} s so far, still down" if still else f"at least {lo:.0f} s" if not np.isfinite(hi)
                    else f"{lo:.0f} .. {hi:.0f} s")
            out.append({**self._port(row), "kind": "link_down_long", "severity": "critical",
                        "t": round(float(e["start_hi"][i]), 3), "since": round(float(e["start_hi"][i]), 3),
                        "count": int(e["downs"][i]), "start": _num(e["start_hi"][i]),
                        "end": None if still else _num(e["end_hi"][i]), "duration_min_s": round(lo, 3),
                        "duration_max_s": round(hi, 3) if np.isfinite(hi) else None,
                        "evidence": {"critical_s": crit_s, "open": still},
                        **self._named(row, f"link down longer than the job-killing time {crit_s:g} s ({span})")})
        return out

    def _rows(self, guid: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Rows of port identities that may repeat (several episodes of one port)."""
        g, p = np.asarray(guid, np.uint64), np.asarray(port, np.int64)
        _, first, inverse = np.unique(np.stack([g, p.astype(np.uint64)], 1), axis=0, return_index=True,
                                         return_inverse=True)
        return self.slots.lookup(g[first], p[first])[inverse.reshape(-1)]
