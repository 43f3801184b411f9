"""The one interface of per-port history, what it answers, and the chart bins both backends share.

``range``, ``ranges`` and ``ports_of_switch`` answer ``points`` bins of equal width ``(end - start) / points``:
bin ``i`` covers ``[start + i*w, start + (i+1)*w)`` and holds the series reduced over it by its aggregation
(:class:`~.series.Series` ``agg``), NaN where nothing was stored. Missing is never zero.

``stats`` and ``fabric_stats`` answer the same bins with more than one reduction each (what one-minute summaries
serve: how many samples, their mean and peak; across a fabric, sums and extremes over its ports): a count is 0 where
nothing was stored, the other values NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["TOP", "FabricStats", "Range", "Ranges", "Stats", "SwitchRange", "TimeSeriesStore", "bin_edges",
           "fabric_list", "top_order"]

#: One row of a top-N answer: the fabric, the port's identity and its value over the window.
TOP = np.dtype([("fabric", "<i8"), ("guid", "<u8"), ("port", "<u2"), ("value", "<f8")])


@dataclass(frozen=True)
class Range:
    """A port's series downsampled: ``t`` float64 ``[points]`` (bin starts, s), ``values`` float64 ``[points]``."""

    t: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class SwitchRange:
    """A switch's ports side by side: ``ports`` uint16 ``[P]`` ascending, ``t`` and ``values`` ``[P, points]``."""

    ports: np.ndarray
    t: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class Ranges:
    """Ports side by side: ``ports`` :data:`~.series.PORT_ID` ``[P]`` as asked, ``t`` ``[points]`` and ``values``
    ``[P, points]``."""

    ports: np.ndarray
    t: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class Stats:
    """Ports side by side, several reductions of each bin: ``ports`` :data:`~.series.PORT_ID` ``[P]`` as asked,
    ``t`` ``[points]``; ``count`` int64 ``[P, points]`` (samples in the bin, 0: none), ``mean``, ``max`` and
    ``sum`` float64 ``[P, points]`` (NaN where ``count`` is 0); ``sample_s``: the seconds one counted sample stands
    for (the bucket of the tier read), None where a sample is one sweep (the writer's interval)."""

    ports: np.ndarray
    t: np.ndarray
    count: np.ndarray
    mean: np.ndarray
    max: np.ndarray
    sum: np.ndarray
    sample_s: float | None


@dataclass(frozen=True)
class FabricStats:
    """Every port of a fabric together, per bin (``t`` ``[points]``): ``count`` samples summed over the ports,
    ``sweeps`` the most samples of one port (the sweeps that measured some port), ``sum`` of every sample, ``max``
    of every sample, ``short`` the most samples of one port under its count (``count - sum`` of that port: for a 0/1
    series such as ``link_up``, its samples at 0); ``count`` and ``sweeps`` int64, the others float64 (NaN where
    ``count`` is 0); ``sample_s`` as :class:`Stats`'."""

    t: np.ndarray
    count: np.ndarray
    sweeps: np.ndarray
    sum: np.ndarray
    max: np.ndarray
    short: np.ndarray
    sample_s: float | None


@runtime_checkable
class TimeSeriesStore(Protocol):
    """Per-port series of fabrics, written one sweep at a time, read downsampled or ranked."""

    def write(self, fabric_id: int, t: float, ports: np.ndarray, values: Mapping[str, np.ndarray]) -> None:
        """Store one sweep at time ``t`` (s): ``values[name][k]`` is port ``ports[k]``'s (NaN: not measured)."""

    def range(self, fabric_id: int, port: tuple[int, int], series: str, start: float, end: float,
              points: int) -> Range:
        """Port ``(guid, port)``'s ``series`` over ``[start, end)`` in ``points`` bins."""

    def ranges(self, fabric_id: int, ports: np.ndarray, series: str, start: float, end: float,
               points: int) -> Ranges:
        """Ports ``ports`` (:data:`~.series.PORT_ID` ``[P]``) side by side, in their order, in ``points`` bins."""

    def top(self, fabric_ids: int | Sequence[int], series: str, start: float, end: float, n: int) -> np.ndarray:
        """The ``n`` ports of ``fabric_ids`` highest in ``series`` over the window (``min``: lowest), :data:`TOP`."""

    def ports_of_switch(self, fabric_id: int, guid: int, series: str, start: float, end: float,
                        points: int) -> SwitchRange:
        """Every stored port of node ``guid``, side by side, in ``points`` bins."""

    def stats(self, fabric_id: int, ports: np.ndarray, series: str, start: float, end: float,
              points: int) -> Stats:
        """Ports ``ports`` side by side in ``points`` bins, each bin's sample count, mean, peak and sum."""

    def fabric_stats(self, fabric_id: int, series: str, start: float, end: float, points: int) -> FabricStats:
        """Every port of the fabric together in ``points`` bins (:class:`FabricStats`)."""

    def close(self) -> None:
        """Release files and connections."""


def bin_edges(start: float, end: float, points: int) -> tuple[np.ndarray, float]:
    """Bin starts ``[points]`` and the bin width of a chart window; ``ValueError`` on an empty window."""
    if not end > start:
        raise ValueError(f"window: end {end} is not after start {start}")
    if points < 1:
        raise ValueError(f"points: {points} (at least 1)")
    width = (end - start) / points
    return start + width * np.arange(points, dtype=np.float64), width


def fabric_list(fabric_ids: int | Sequence[int]) -> list[int]:
    """``fabric_ids`` as a list of ints (one id or many)."""
    return [int(fabric_ids)] if isinstance(fabric_ids, (int, np.integer)) else [int(f) for f in fabric_ids]


def top_order(rows: np.ndarray, n: int, lowest: bool) -> np.ndarray:
    """The ``n`` rows of :data:`TOP` ``rows`` with the highest values (``lowest``: lowest), NaN left out."""
    rows = rows[~np.isnan(rows["value"])]
    key = rows["value"] if lowest else -rows["value"]
    order = np.lexsort((rows["port"], rows["guid"], rows["fabric"], key))
    return rows[order[:n]]
