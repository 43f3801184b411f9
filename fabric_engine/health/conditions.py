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

``cable_swap`` is one-shot too (:func:`cable_swap_alerts`): a changed module serial on a port is one ``info`` alert
per swap, with the port end, ``from``/``to`` (the old and new serial) and ``t`` (when it was seen).

Alerts have the shape of :mod:`fabric_engine.telemetry.counter_conditions`' ``{"kind", "severity",
"condition": True, "port": "name port N", "guid", "ports": [N], "nodes", "since", "count", "evidence",
"message", "text"}`` (``text``/``nodes``: :func:`~fabric_engine.telemetry.alerts.named`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from fabric_engine.telemetry.alerts import named

from .downs import DownTracker
from .figures import hex_guids, sci2
from .figures import num as _num
from .figures import nums as _nums
from .grade import ERROR, NORMAL, WARNING
from .port_slots import PortSlots, column

__all__ = ["HEALTH_CONDITION_KINDS", "HealthRules", "PortHealth", "HealthConditions", "cable_swap_alerts"]

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
    #: ``(low, high)`` lanes of ``rx_power`` and ``tx_power`` when the caller reduced them already
    #: (:func:`~.grade.module_status`'s ``ranges``; a quantity no port has: None); None: reduced here.
    power_ranges: tuple | None = None

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


def _lanes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Lowest and highest lane of ``[n, lanes]`` (NaN where a port has none), without warnings; None when no port
    has a lane. Lanes no port has a value for cost one cheap check each (most ports read 4 of 12 lanes, many none)."""
    values = np.asarray(values, np.float64)
    # a lane is checked by one reduction; a broadcast column (one value for every port) by its first row
    cols = [col for col in (values[:, k] for k in range(values.shape[1]))
            if not np.isnan(np.fmax.reduce(col[:1] if col.strides[0] == 0 else col))] if values.shape[0] else []
    if not cols:
        return None
    low, high = cols[0].copy(), cols[0].copy()
    for col in cols[1:]:  # fmin/fmax: a lane not given is skipped, all lanes not given stay NaN
        np.fmin(low, col, out=low)
        np.fmax(high, col, out=high)
    return low, high


#: Evidence columns each kind's alert shows (what decides whether its alert must be built again).
_SHOWN = np.array([[0, 1, 1], [2, 3, 4], [5, 6, 6], [7, 7, 7]])


def _objects(items: list) -> np.ndarray:
    """``items`` as a one-dimensional object array (dicts each one element)."""
    out = np.empty(len(items), object)
    out[:] = items
    return out


class HealthConditions:
    """Per-port health condition state across gradings (see the module docstring)."""

    def __init__(self, rules: HealthRules | None = None) -> None:
        self.rules = rules or HealthRules()
        k = len(HEALTH_CONDITION_KINDS)
        self.slots = PortSlots()
        self.active = np.zeros((0, k), bool)
        # when each open condition started, by cell (slot x kinds + kind), sorted: few are open
        self._since_cell = np.zeros(0, np.int64)
        self._since_t = np.zeros(0)
        # calm gradings in a row while active (below clear_gradings, so a byte mostly)
        self.calm = np.zeros((0, k), np.int8 if self.rules.clear_gradings < 127 else np.int64)
        self.count = np.zeros((0, k), np.int32)
        self.critical = np.zeros((0, k), bool)  # the newest bad grading's severity
        # newest figures, one column each (written column by column): raw, eff, temp, warn, alarm, power lo, hi, downs
        self.evidence = np.full((0, 8), np.nan, order="F")
        self.node = np.zeros(0, np.int32)
        self.names: Sequence[str] = ()
        self._fired = np.zeros(0, np.complex128)  # link_down_long episodes alerted: slot + 1j * start
        # the alerts of the last call: their cells (ascending), what each showed and the alerts
        self._built: tuple[np.ndarray, np.ndarray, np.ndarray] = (np.zeros(0, np.int64), np.zeros((0, 9), np.int64),
                                                                  np.zeros(0, object))
        self._inverse: tuple[np.ndarray, np.ndarray] | None = None  # the last rows and each slot's place in them
        self._in_order: tuple | None = None  # the last rows, the slots then and whether they were every slot in order

    def _grow(self) -> None:
        n, old = len(self.slots), self.active.shape[0]
        if n > old:
            extra = n - old
            for name, fill in (("active", False), ("calm", 0), ("count", 0), ("critical", False),
                               ("evidence", np.nan)):
                arr = getattr(self, name)
                grown = np.full((n, *arr.shape[1:]), fill, arr.dtype, order="F" if name == "evidence" else "C")
                grown[:old] = arr
                setattr(self, name, grown)
            self.node = np.concatenate([self.node, np.full(extra, -1, self.node.dtype)])

    def update(self, ph: PortHealth, t: float) -> list[dict]:
        """Advance by one grading at ``t``; the open conditions as alerts.

        Every port read is judged at once; only the state of the ports bad now or with a condition open can change
        (any other port has no condition and no calm run), so only those rows are gathered and written back.
        """
        ph.check()
        r = self.rules
        rows = self.slots.lookup(np.asarray(ph.guid, np.uint64), np.asarray(ph.port, np.int64))
        self._grow()
        n = len(self.slots)
        full = self._full(rows, n)  # every port, in slot order: the usual case, no gather or scatter
        if full:
            self.node = np.asarray(ph.node).astype(np.int32)
        else:
            self.node[:] = -1  # node indices of the current fabric only (ports not read: named by GUID)
            self.node[rows] = ph.node
        if ph.node_name is not self.names:  # alerts name nodes: none built with other names is given again
            self._built = (np.zeros(0, np.int64), np.zeros((0, 9), np.int64), np.zeros(0, object))
        self.names = ph.node_name
        grade = np.asarray(ph.ber_grade)
        temp = np.asarray(ph.temp, np.float64)
        th = np.asarray(ph.temp_th, np.float64)
        m = grade.size
        # RX and TX power: NaN compares false, a reading or threshold not known is neither out of range nor in it
        p_alarm, p_warn, p_known = np.zeros(m, bool), np.zeros(m, bool), np.zeros(m, bool)
        low = high = None  # the lowest and highest lane of either (None: no port has one)
        ranges = ph.power_ranges or (_lanes(ph.rx_power), _lanes(ph.tx_power))
        for lanes, limits in zip(ranges, (ph.rx_power_th, ph.tx_power_th), strict=True):
            if lanes is None:
                continue
            lo, hi = lanes
            limits = np.asarray(limits, np.float64)
            p_alarm |= (lo < limits[:, 0]) | (hi > limits[:, 3])
            p_warn |= (lo < limits[:, 1]) | (hi > limits[:, 2])
            p_known |= ~np.isnan(lo)
            low, high = (lo, hi) if low is None else (np.fmin(low, lo), np.fmax(high, hi))
        downs = np.asarray(ph.downs_24h, np.int64)
        bads = (grade >= WARNING, temp > th[:, 2], p_warn | p_alarm, downs >= r.repeated)
        # the rows whose state may change: bad now, or with a condition open
        pos = self._open_rows()
        if not full and pos.size:
            pos = self._where(rows, n)[pos]
            pos = pos[pos >= 0]
        sel = np.union1d(np.flatnonzero(bads[0] | bads[1] | bads[2] | bads[3]), pos)
        if sel.size:
            self._judge(sel, rows[sel], t, grade[sel], temp[sel], th[sel], p_known[sel], p_warn[sel], p_alarm[sel],
                        downs[sel], np.stack([b[sel] for b in bads], 1))
        figures = (ph.raw_ber, ph.eff_ber, temp, th[:, 2], th[:, 3], low, high, np.where(downs >= 0, downs, np.nan))
        for j, value in enumerate(figures):  # a figure not read: the last one stays
            if value is not None:
                self._keep(j, rows, full, np.asarray(value, np.float64))
        return self.conditions()

    def _full(self, rows: np.ndarray, n: int) -> bool:
        """Whether ``rows`` are every slot in order (kept while the grading's rows are the same array, as the slots'
        lookup gives them for the same ports)."""
        cached = self._in_order
        if cached is None or cached[0] is not rows or cached[1] != n:
            full = rows.size == n and (n == 0 or (rows[0] == 0 and rows[-1] == n - 1 and np.array_equal(
                rows, np.arange(n))))
            self._in_order = cached = (rows, n, full)
        return cached[2]

    def _keep(self, j: int, rows: np.ndarray, full: bool, value: np.ndarray) -> None:
        """Evidence column ``j`` of the slots ``rows``: ``value`` where given."""
        col = self.evidence[:, j]
        if value.size and value.strides[0] == 0:  # one value for every port (a shared column)
            if not np.isnan(value[0]):
                if full:
                    col.fill(value[0])
                else:
                    col[rows] = value[0]
            return
        given = ~np.isnan(value)
        if full:
            np.copyto(col, value, where=given)
        elif given.all():
            col[rows] = value
        elif given.any():
            col[rows[given]] = value[given]

    def _since(self, rows: np.ndarray, kinds: np.ndarray | None = None) -> np.ndarray:
        """When the conditions of ``rows`` started (NaN: none open): ``[rows, kinds]``, or one per row of ``kinds``."""
        k = len(HEALTH_CONDITION_KINDS)
        cells = rows[:, None] * k + np.arange(k) if kinds is None else rows * k + kinds
        if not self._since_cell.size:
            return np.full(cells.shape, np.nan)
        pos = np.minimum(np.searchsorted(self._since_cell, cells), self._since_cell.size - 1)
        return np.where(self._since_cell[pos] == cells, self._since_t[pos], np.nan)

    def _set_since(self, rows: np.ndarray, since: np.ndarray) -> None:
        """The start of every condition of ``rows`` (``[rows, kinds]``, NaN: not open)."""
        k = len(HEALTH_CONDITION_KINDS)
        cells = rows[:, None] * k + np.arange(k)
        judged = np.zeros(len(self.slots), bool)  # a flag per slot: cheaper than sorting the cells (np.isin)
        judged[rows] = True
        keep = ~judged[self._since_cell // k]
        open_ = ~np.isnan(since)
        cell = np.concatenate([self._since_cell[keep], cells[open_]])
        t = np.concatenate([self._since_t[keep], since[open_]])
        order = np.argsort(cell, kind="stable")
        self._since_cell, self._since_t = cell[order], t[order]

    def _open_rows(self) -> np.ndarray:
        """Slots with a condition open (one pass over the state: its four flags of a slot read as one word)."""
        active = np.ascontiguousarray(self.active)
        if active.shape[1] == 4:
            return np.flatnonzero(active.view(np.uint32)[:, 0])
        return np.flatnonzero(active.any(axis=1))

    def _where(self, rows: np.ndarray, n: int) -> np.ndarray:
        """Position of each slot in ``rows`` (-1: not read); kept while the grading's rows are the same array."""
        cached = self._inverse
        if cached is None or cached[0] is not rows or cached[1].size != n:
            where = np.full(n, -1, np.int32)
            where[rows] = np.arange(rows.size, dtype=np.int32)
            self._inverse = cached = (rows, where)
        return cached[1]

    def _judge(self, sel: np.ndarray, rows: np.ndarray, t: float, grade, temp, th, p_known, p_warn, p_alarm, downs,
               bad) -> None:
        """The hysteresis of the slots ``rows``, the ports at ``sel`` of the grading (``bad``: ``[k, kinds]``)."""
        r = self.rules
        calm = np.stack([grade == NORMAL, temp < th[:, 2] - r.temp_margin_c, p_known & ~p_warn & ~p_alarm,
                         (downs >= 0) & (downs < r.repeated)], 1)
        critical = np.stack([grade >= ERROR, temp > th[:, 3], p_alarm, np.zeros(sel.size, bool)], 1)
        need = np.array([r.clear_gradings, 1, r.clear_gradings, 1])
        was = self.active[rows]
        before = self.calm[rows].astype(np.int64)
        run = np.where(calm, before + 1, np.where(bad, 0, before))  # not known: the run holds
        now = bad | (was & (run < need[None, :]))
        starts = now & ~was
        self._set_since(rows, np.where(now, np.where(starts, t, self._since(rows)), np.nan))
        self.count[rows] += starts.astype(self.count.dtype)
        self.calm[rows] = np.where(now & ~bad, run, 0)  # below ``need`` where kept
        self.active[rows] = now
        self.critical[rows] = np.where(bad, critical, self.critical[rows] & now)

    def conditions(self) -> list[dict]:
        """The open conditions as alerts (few: the loop runs over the open ones only). An alert is built again only
        when what it shows changed since the last call (its severity, start, count, figures or node); else the same
        dict is given again."""
        open_rows = self._open_rows()
        cells = np.argwhere(self.active[open_rows])
        cells[:, 0] = open_rows[cells[:, 0]]
        row, c = cells[:, 0], cells[:, 1]
        cell = row * len(HEALTH_CONDITION_KINDS) + c  # ascending, as the alerts are listed
        since = self._since(row, c)
        ev = self.evidence[row[:, None], _SHOWN[c]]
        shown = np.column_stack([self.critical[row, c], since.view(np.int64), self.count[row, c], self.node[row],
                                 ev.view(np.int64)])  # NaN == NaN bitwise
        old_cell, old_shown, old_alerts = self._built
        same = hit = np.zeros(cell.size, bool)
        pos = np.zeros(cell.size, np.int64)
        if old_cell.size and cell.size:
            pos = np.minimum(np.searchsorted(old_cell, cell), old_cell.size - 1)
            before = old_shown[pos]
            # the same condition, severity, start, count and node: only its figures may have changed
            same = (old_cell[pos] == cell) & (before[:, :4] == shown[:, :4]).all(axis=1)
            hit = same & (before[:, 4:] == shown[:, 4:]).all(axis=1)
        out = np.empty(cell.size, object)  # the alerts in cell order: kept ones and new ones placed at once
        if hit.any():
            out[hit] = old_alerts[pos[hit]]
        refig = np.flatnonzero(same & ~hit)
        if refig.size:  # the alert before with its figures, message and text made again
            out[refig] = _objects(self._refigured(row[refig], c[refig], ev[refig], old_alerts[pos[refig]].tolist()))
        miss = np.flatnonzero(~same)
        if miss.size:  # built from plain Python values, read for these cells at once
            out[miss] = _objects(self._alerts(row[miss], c[miss], since[miss], ev[miss]))
        self._built = (cell, shown, out)
        return out.tolist()

    def _figures(self, c: np.ndarray, ev: np.ndarray) -> tuple[list[str], list[dict]]:
        """The message part and evidence of each alert of the kinds ``c`` showing the figures ``ev``, each kind's at
        once (:meth:`_evidence_of`)."""
        whats: list = [None] * c.size
        evidences: list = [None] * c.size
        for kind in np.unique(c).tolist():  # the four kinds, each at once
            at = np.flatnonzero(c == kind)
            for i, what, evidence in zip(at.tolist(), *self._evidence_of(kind, ev[at]), strict=True):
                whats[i], evidences[i] = what, evidence
        return whats, evidences

    def _refigured(self, row: np.ndarray, c: np.ndarray, ev: np.ndarray, old: list[dict]) -> list[dict]:
        """The alerts ``old`` of the slots ``row`` again with the figures ``ev``: a copy of each (its port, node,
        severity, start and count as they were; its ``ports`` and ``nodes`` lists shared, alerts are read, never
        changed) with a new ``evidence``, ``text`` and ``message``: what :meth:`_alerts` would build, for less."""
        out = []
        add = out.append
        for alert, port, what, evidence in zip(old, self.slots.port[row].tolist(), *self._figures(c, ev),
                                               strict=True):
            alert = alert.copy()
            alert["evidence"] = evidence
            alert["text"] = f"{{0}} port {port}: {what}"
            alert["message"] = f"{alert['port']}: {what}"
            add(alert)
        return out

    def _alerts(self, row: np.ndarray, c: np.ndarray, since: np.ndarray, ev: np.ndarray) -> list[dict]:
        """The alerts of the open conditions ``c`` of the slots ``row`` (started at ``since``, showing the evidence
        ``ev``, its :data:`_SHOWN` columns). Their parts are made a column at a time (names, GUIDs and the figures of
        each kind at once, :mod:`.figures`); the one loop builds each alert's dict of them."""
        node = self.node[row].astype(np.int64)
        known = (node >= 0) & (node < len(self.names))
        hexes = hex_guids(self.slots.guid[row])
        who = hexes
        if known.any():
            named_ = np.asarray(self.names, dtype=object)[np.where(known, node, 0)].tolist()  # free: an array
            who = [str(x) if k else h for x, k, h in zip(named_, known.tolist(), hexes, strict=True)]
        whats, evidences = self._figures(c, ev)
        kinds = np.array(HEALTH_CONDITION_KINDS, object)[c].tolist()
        severity = np.array(_SEVERITY, object)[self.critical[row, c].astype(np.int64)].tolist()
        nodes = np.where(known, node, -1).tolist()
        starts, at = np.unique(since, return_inverse=True)  # few: the times of the gradings that opened them
        sinces = np.array([round(x, 3) for x in starts.tolist()], object)[at.reshape(-1)].tolist()
        out = []
        add = out.append
        for w, hex_guid, port, nd, kind, sev, start, count, what, evidence in zip(
                who, hexes, self.slots.port[row].tolist(), nodes, kinds, severity, sinces,
                self.count[row, c].tolist(), whats, evidences, strict=True):
            head = f"{w} port {port}"
            # the parts :func:`~fabric_engine.telemetry.alerts.named` gives (text, nodes, message), made in place
            add({"port": head, "guid": hex_guid, "ports": [port], "kind": kind, "severity": sev, "condition": True,
                 "since": start, "count": count, "evidence": evidence, "text": f"{{0}} port {port}: {what}",
                 "nodes": [nd], "message": f"{head}: {what}"})
        return out

    def _evidence_of(self, c: int, e: np.ndarray) -> tuple[list[str], list[dict]]:
        """The messages and evidence of alerts of kind ``c`` from their figures ``e`` (``[k, 3]``, the :data:`_SHOWN`
        evidence columns), all at once."""
        r = self.rules
        if c == _BER:  # raw, effective: the many (a new 1 % of a fabric's ports is thousands)
            tail = f"; clears after {r.clear_gradings} normal gradings)"
            evs = [{"raw_ber": a, "effective_ber": b, "clear_gradings": r.clear_gradings}
                   for a, b in zip(_nums(e[:, 0]), _nums(e[:, 1]), strict=True)]
            return [f"high bit error rate (raw {a}, effective {b}{tail}"
                    for a, b in zip(sci2(e[:, 0]), sci2(e[:, 1]), strict=True)], evs
        cols = [e[:, j].tolist() for j in range(3)]
        if c == _TEMP:  # temperature, warning, alarm
            m = r.temp_margin_c
            evs = [{"temperature_c": a, "warning_c": b, "alarm_c": d, "margin_c": m}
                   for a, b, d in zip(_nums(e[:, 0]), _nums(e[:, 1]), _nums(e[:, 2]), strict=True)]
            return [f"module at {a:.1f} °C (warning {b:.0f} °C, alarm {d:.0f} °C; clears under {b - m:.0f} °C)"
                    for a, b, d in zip(*cols, strict=True)], evs
        if c == _POWER:  # lowest, highest lane
            cg = r.clear_gradings
            evs = [{"power_min": a, "power_max": b, "clear_gradings": cg}
                   for a, b in zip(_nums(e[:, 0]), _nums(e[:, 1]), strict=True)]
            return [f"module RX/TX power out of range (lanes {a:.2f} .. {b:.2f})"
                    for a, b in zip(cols[0], cols[1], strict=True)], evs
        rep = r.repeated
        downs = np.nan_to_num(e[:, 0])
        counted = [int(x) for x in downs.tolist()]
        evs = [{"downs_24h": k if not math.isnan(x) else None, "repeated": rep}
               for k, x in zip(counted, cols[0], strict=True)]
        return [f"{k} downs in 24 h (condition at {rep})" for k in counted], evs

    def _port(self, row: int) -> dict:
        guid, port = int(self.slots.guid[row]), int(self.slots.port[row])
        return {"port": f"{self._who(row)} port {port}", "guid": f"0x{guid:016x}", "ports": [port]}

    def _who(self, row: int) -> str:
        node = int(self.node[row])
        return str(self.names[node]) if 0 <= node < len(self.names) else f"0x{int(self.slots.guid[row]):016x}"

    def _named(self, row: int, what: str) -> dict:
        node = int(self.node[row]) if 0 <= int(self.node[row]) < len(self.names) else -1
        return named(f"{{0}} port {int(self.slots.port[row])}: {what}", [node], [self._who(row)])

    def downs_long(self, tracker: DownTracker,
                   jobs_of: Callable[[np.ndarray], list[list[dict]]] | None = None) -> list[dict]:
        """``link_down_long`` alerts of the episodes of ``tracker`` proven longer than its job-killing time and
        not alerted before (each once); ports are named as the newest grading named them. ``jobs_of``: the jobs of
        episode tags (:meth:`~.down_jobs.DownJobs.jobs`): an alert lists those on the link when it went down
        (``jobs``, their ids, and ``"; jobs a, b"`` after its message, as the twin's alerts list theirs)."""
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
        fresh = np.flatnonzero(new)
        hit = jobs_of(e["tag"][crit[fresh]]) if jobs_of is not None else [[] for _ in fresh]
        out = []
        for k, on in zip(fresh.tolist(), hit, strict=True):  # the new critical downs only
            i, row = int(crit[k]), int(rows[k])
            ids = [str(j["id"]) for j in on]
            listed = f"; jobs {', '.join(ids[:5])}".replace("{", "{{").replace("}", "}}") if ids else ""
            lo, hi = float(e["duration_lo"][i]), float(e["duration_hi"][i])
            still = bool(e["open"][i])
            span = (f"{lo:.0f} s so far, still down" if still else f"at least {lo:.0f} s" if not np.isfinite(hi)
                    else f"{lo:.0f} .. {hi:.0f} s")
            out.append({**self._port(row), "kind": "link_down_long", "severity": "critical",
                        "t": round(float(e["start_hi"][i]), 3), "since": round(float(e["start_hi"][i]), 3),
                        "count": int(e["downs"][i]), "start": _num(e["start_hi"][i]),
                        "end": None if still else _num(e["end_hi"][i]), "duration_min_s": round(lo, 3),
                        "duration_max_s": round(hi, 3) if np.isfinite(hi) else None,
                        "evidence": {"critical_s": crit_s, "open": still}, **({"jobs": ids} if ids else {}),
                        **self._named(row, f"link down longer than the job-killing time {crit_s:g} s ({span})"
                                      + listed)})
        return out

    def _rows(self, guid: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Rows of port identities that may repeat (several episodes of one port)."""
        g, p = np.asarray(guid, np.uint64), np.asarray(port, np.int64)
        _, first, inverse = np.unique(np.stack([g, p.astype(np.uint64)], 1), axis=0, return_index=True,
                                         return_inverse=True)
        return self.slots.lookup(g[first], p[first])[inverse.reshape(-1)]


def cable_swap_alerts(swaps: Sequence[dict], node_name: Sequence[str]) -> list[dict]:
    """One ``cable_swap`` alert per swap of ``swaps`` (``{"node", "node_index", "guid", "port", "t", "from",
    "to"}`` each, as the health publisher lists them; ``node_index`` in a fabric of nodes ``node_name``, -1: none)."""
    out = []
    for s in swaps:  # the swaps seen since the last grading (few)
        node, port = int(s.get("node_index", -1)), int(s["port"])
        who = str(node_name[node]) if 0 <= node < len(node_name) else str(s.get("node") or s.get("guid"))
        guid = s.get("guid")
        old, new = (str(s[k]).replace("{", "{{").replace("}", "}}") for k in ("from", "to"))
        out.append({"kind": "cable_swap", "severity": "info", "port": f"{who} port {port}",
                    **({"guid": guid} if guid else {}), "ports": [port], "t": round(float(s["t"]), 3),
                    "since": round(float(s["t"]), 3), "from": str(s["from"]), "to": str(s["to"]),
                    **named(f"{{0}} port {port}: cable swapped (module serial {old} -> {new})",
                            [node if 0 <= node < len(node_name) else -1], [who])})
    return out
