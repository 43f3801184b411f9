"""What a fabric's leader keeps of each grading beyond the report, for the web processes: the raw BER trend of
the ports graded warning or error (:mod:`.trend`) and the cable inventory (:mod:`.cables`), both in the shared
cache (:mod:`ibweb.runtime.health`). :func:`keep` is the health publisher's one call at each grading. What is kept lives
as long as the process, per fabric: a process that hands a fabric over and leads it again resumes its trend (the
gap shows in the gradings' times)."""

from __future__ import annotations

import threading

import numpy as np

from fabric_engine.health.records import HealthRecords
from fabric_engine.topology import Fabric
from ibweb.live.health.cables import changed, columns, inventory
from ibweb.live.health.report import node_indices
from ibweb.live.health.trend import BerTrend
from ibweb.runtime import health as store

__all__ = ["keep", "forget"]


class _Kept:
    def __init__(self) -> None:
        self.trend = BerTrend()
        self.columns: dict[str, np.ndarray] | None = None  # the newest readings' inventory columns
        self.version: str | None = None  # the record version last inventoried


_kept: dict[int, _Kept] = {}
_lock = threading.Lock()


def keep(fabric_id: int, version: str | None, t: float, rec: HealthRecords, fabric: Fabric,
         ports: dict[str, np.ndarray]) -> None:
    """One grading of ``fabric_id``: ``rec`` read at ``t`` on ``fabric`` (record version ``version``), ``ports``
    its rows of nodes of ``fabric`` (:func:`~ibweb.live.health.report.port_series`)."""
    with _lock:
        kept = _kept.setdefault(fabric_id, _Kept())
    nodes = lane_rows = None
    if ports["node"].size != len(rec):  # port_series left out the rows of no node of the fabric
        nodes = node_indices(fabric, rec.guid)
        lane_rows = np.flatnonzero(nodes >= 0)
    kept.trend.observe(t, fabric, ports, rec["raw_ber_lane"], lane_rows)
    store.write_trend(fabric_id, kept.trend.snapshot())
    if kept.columns is None or kept.version != version or changed(rec, kept.columns):
        nodes = node_indices(fabric, rec.guid) if nodes is None else nodes
        store.write_cables(fabric_id, version, t, inventory(rec, nodes))
        kept.version = version
    kept.columns = columns(rec)  # equal to what was inventoried: the older arrays are let go


def forget(fabric_id: int) -> None:
    """Drop what was kept of ``fabric_id`` (tests; a fabric deleted)."""
    with _lock:
        _kept.pop(fabric_id, None)
