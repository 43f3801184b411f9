"""The raw BER trend of the ports graded warning or error: their last :data:`GRADINGS` gradings, for the port
panel (``GET /api/fabrics/fabrics/<slug>/health/ports/<node>/<port>/``).

A fabric's leader keeps, per tracked port, a ring of the log10 of its raw BER (the worst lane's, as graded) at
each grading as float16 (the log within 0.004 down to 1e-16, so the BER within 1 %: plenty for a sparkline
over decades), its overall grade at
each grading (int8; :data:`NOT_READ` where the port was not tracked or not read then) and its newest per-lane raw
BER (log10 float16, :data:`~fabric_engine.health.records.LANES` lanes, NaN where the tool gives no lane).
A port is tracked from its first grading at warning or error on, and dropped once every grading of its ring is
below warning (a ring of normal gradings: recovered) or, past :data:`MAX_TRACKED` ports, when it is among the
mildest (the lowest worst grade over its ring, then the lowest newest raw BER). Normal ports have no trend: a
ring for every port would cost 200,000 x (64 x 3 + 24) bytes, 43 MB, at 32,768 GPUs for lines saying "normal".

Bytes: per tracked port ``GRADINGS x 3`` (ring) + ``LANES x 2`` (lanes) + 8 (GUID) + 2 (port) = 226 bytes; at
most :data:`MAX_TRACKED` = 8,192 ports: 1.85 MB per fabric whatever its size (at 200,000 ports too), plus
``GRADINGS x 8`` bytes of grading times. A grading also builds a transient lookup of the graded rows by port slot
(an int64 per port of the fabric: 1.6 MB at 200,000 ports). No loop over ports: the update is vectorized; at
196,608 ports a grading's :func:`ibweb.live.health.keep.keep` measured 5-12 ms with 256 ports tracked and 13-40 ms
with 8,192, cache writes included (2 cores at a load average of 9).
"""

from __future__ import annotations

import numpy as np

from fabric_engine.health.grade import GRADES, WARNING
from fabric_engine.health.records import LANES
from fabric_engine.topology import Fabric
from ibweb.live.health.report import node_indices

__all__ = ["GRADINGS", "MAX_TRACKED", "NOT_READ", "BerTrend", "port_trend"]

#: Gradings a tracked port's ring keeps (at the default ``IBWEB_HEALTH_INTERVAL_S`` of 10 s: 10.7 minutes).
GRADINGS = 64
#: Most ports tracked per fabric.
MAX_TRACKED = 8192
#: Grade of a grading at which the port was not tracked or not read.
NOT_READ = -2


def _log10(values: np.ndarray) -> np.ndarray:
    """log10 of BERs as float16 (0: -inf, not read: NaN)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(np.asarray(values, np.float64)).astype(np.float16)


class BerTrend:
    """One fabric's tracked ports (rows: ``guid`` uint64, ``port`` int16) and their rings (columns: slots of the
    gradings, ``t`` their times; :attr:`head` the slot the next grading writes)."""

    def __init__(self, gradings: int = GRADINGS, capacity: int = MAX_TRACKED) -> None:
        self.gradings, self.capacity = int(gradings), int(capacity)
        self.t = np.full(self.gradings, np.nan)
        self.head = 0
        self.guid = np.zeros(0, np.uint64)
        self.port = np.zeros(0, np.int16)
        self.log_raw = np.full((0, self.gradings), np.nan, np.float16)
        self.grade = np.full((0, self.gradings), NOT_READ, np.int8)
        self.lanes = np.full((0, LANES), np.nan, np.float16)

    def __len__(self) -> int:
        return int(self.guid.size)

    @property
    def nbytes(self) -> int:
        """Bytes the trend holds (its arrays)."""
        return sum(a.nbytes for a in (self.t, self.guid, self.port, self.log_raw, self.grade, self.lanes))

    def _rows(self, fabric: Fabric, node: np.ndarray, port: np.ndarray) -> np.ndarray:
        """The graded row (index into ``node``, ``port``) of each tracked port, -1 where not graded now."""
        nports = np.asarray(fabric.nports, np.int64)
        table = np.full(int(nports.sum()), -1, np.int64)
        ok = (node >= 0) & (port >= 1) & (port <= nports[np.maximum(node, 0)])
        table[fabric.port_offset[node[ok]] + port[ok] - 1] = np.flatnonzero(ok)
        tn = node_indices(fabric, self.guid)
        tp = self.port.astype(np.int64)
        tok = (tn >= 0) & (tp >= 1) & (tp <= nports[np.maximum(tn, 0)])
        rows = np.full(len(self), -1, np.int64)
        rows[tok] = table[fabric.port_offset[tn[tok]] + tp[tok] - 1]
        return rows

    def observe(self, t: float, fabric: Fabric, ports: dict[str, np.ndarray], lanes: np.ndarray | None,
                lane_rows: np.ndarray | None = None) -> None:
        """One grading at ``t``: ``ports`` as :func:`~ibweb.live.health.report.port_series` gives them (``node``,
        ``port``, ``raw``, ``grade``, rows of nodes of ``fabric``), ``lanes`` the per-lane raw BER ``[n, <= LANES]``
        of the readings (None: not read), ``lane_rows`` the row of ``lanes`` of each row of ``ports`` (None: the
        same rows)."""
        node, port = ports["node"].astype(np.int64), ports["port"].astype(np.int64)
        grade = ports["grade"].astype(np.int8)
        rows = self._rows(fabric, node, port)
        seen = np.zeros(node.size, bool)
        seen[rows[rows >= 0]] = True
        new = np.flatnonzero((grade >= WARNING) & ~seen)
        if new.size:
            self._append(np.asarray(fabric.guid, np.uint64)[node[new]], port[new].astype(np.int16))
            rows = np.concatenate([rows, new])
        slot = self.head
        self.t[slot] = t
        self.head = (slot + 1) % self.gradings
        self.log_raw[:, slot] = np.nan
        self.grade[:, slot] = NOT_READ
        read = np.flatnonzero(rows >= 0)
        r = rows[read]
        self.log_raw[read, slot] = _log10(ports["raw"][r])
        self.grade[read, slot] = grade[r]
        if lanes is not None:  # readings may leave out the trailing lanes no port has (records.compact)
            got = _log10(lanes[r if lane_rows is None else lane_rows[r]])
            width = min(got.shape[1], LANES)
            self.lanes[read, width:] = np.nan
            self.lanes[read, :width] = got[:, :width]
        self._drop()

    def _append(self, guid: np.ndarray, port: np.ndarray) -> None:
        k = guid.size
        self.guid = np.concatenate([self.guid, guid])
        self.port = np.concatenate([self.port, port])
        self.log_raw = np.concatenate([self.log_raw, np.full((k, self.gradings), np.nan, np.float16)])
        self.grade = np.concatenate([self.grade, np.full((k, self.gradings), NOT_READ, np.int8)])
        self.lanes = np.concatenate([self.lanes, np.full((k, LANES), np.nan, np.float16)])

    def _drop(self) -> None:
        """Drop the recovered ports (no grading of the ring at warning or worse), then the mildest past
        :attr:`capacity`."""
        worst = self.grade.max(axis=1) if len(self) else np.zeros(0, np.int8)
        keep = np.flatnonzero(worst >= WARNING)
        if keep.size > self.capacity:
            newest = self.log_raw[keep, (self.head - 1) % self.gradings].astype(np.float64)
            order = np.lexsort((np.nan_to_num(newest, nan=-np.inf), worst[keep]))
            keep = np.sort(keep[order[-self.capacity:]])
        if keep.size == len(self):
            return
        self.guid, self.port = self.guid[keep], self.port[keep]
        self.log_raw, self.grade, self.lanes = self.log_raw[keep], self.grade[keep], self.lanes[keep]

    def snapshot(self) -> dict:
        """The tracked ports with their rings oldest grading first: ``{"t" [G], "guid" [m], "port" [m],
        "log_raw" [m, G], "grade" [m, G], "lanes" [m, LANES]}`` (copies; slots never written have ``t`` NaN)."""
        order = (self.head + np.arange(self.gradings)) % self.gradings
        return {"t": self.t[order], "guid": self.guid.copy(), "port": self.port.copy(),
                "log_raw": self.log_raw[:, order], "grade": self.grade[:, order], "lanes": self.lanes.copy()}


def port_trend(snapshot: dict, guid: int, port: int) -> dict | None:
    """One port's trend in a :meth:`BerTrend.snapshot`: ``{"t", "raw", "grade", "lanes"}`` as JSON takes them
    (BERs, not logs; None where not read; gradings never made left out), None when the port is not tracked."""
    hit = np.flatnonzero((snapshot["guid"] == np.uint64(guid)) & (snapshot["port"] == port))
    if not hit.size:
        return None
    i = int(hit[0])
    made = ~np.isnan(snapshot["t"])

    def ber(logs: np.ndarray) -> list[float | None]:
        values = np.power(10.0, logs.astype(np.float64))
        return [None if np.isnan(v) else float(f"{v:.3g}") for v in values.tolist()]

    grades = snapshot["grade"][i][made].tolist()
    return {"t": [round(x, 3) for x in snapshot["t"][made].tolist()], "raw": ber(snapshot["log_raw"][i][made]),
            "grade": [GRADES[g + 1] if g != NOT_READ else None for g in grades], "lanes": ber(snapshot["lanes"][i])}
