"""Device vitals series of ``/metrics`` (issue 38): switch fans, power supplies and temperatures from each fabric's
device readings (:mod:`ibweb.runtime.device_readings`), rendered by :mod:`fabric_engine.telemetry.device_metrics`.

A device is placed on the fabric's runtime record by its node GUID (else a port GUID): ``node`` is the record's
name of it, else the name its tool printed. What a view gets, as for the counters (:mod:`ibweb.access`): ``ALL``
every device, those the record lacks included; below ``ALL`` only devices of the record that are switches or hosts
the view may see (a device the record lacks, or no record: none). A scrape target's part (``nodes``) gets the
devices of its node range, and part 0 (or the whole) those the record lacks.

The readings are flattened once per version of them (:func:`~ibweb.runtime.device_readings.version`, a few bytes
read per scrape) and kept per process for the last :data:`_MEMO` fabrics.
"""

from __future__ import annotations

import numpy as np

from fabric_engine.telemetry.device_metrics import DEVICE_HELP, DeviceSeries, device_families, device_series
from ibweb.access import View, redaction
from ibweb.runtime import device_readings, record

__all__ = ["DEVICE_HELP", "vitals_families", "series_of"]

_MEMO = 64
_memo: dict[int, tuple[int, DeviceSeries]] = {}


def series_of(fabric_id: int) -> DeviceSeries | None:
    """The flattened vitals of the fabric's device readings (None: none stored)."""
    v = device_readings.version(fabric_id)
    if v is None:
        return None
    hit = _memo.get(fabric_id)
    if hit is not None and hit[0] == v:
        return hit[1]
    got = device_readings.read(fabric_id)
    if got is None:
        return None
    series = device_series(got.vitals)
    _memo.pop(fabric_id, None)
    _memo[fabric_id] = (v, series)
    while len(_memo) > _MEMO:
        del _memo[next(iter(_memo))]
    return series


def _nodes_of(f, guid: np.ndarray) -> np.ndarray:
    """The node of ``f`` each GUID is (its node GUID, else a port GUID's node); -1: none, or no GUID."""
    node_guid = np.asarray(f.guid, np.uint64)
    node = np.full(guid.size, -1, np.int64)
    if node_guid.size:
        order = np.argsort(node_guid, kind="stable")
        pos = np.minimum(np.searchsorted(node_guid[order], guid), node_guid.size - 1)
        node = np.where(node_guid[order][pos] == guid, order[pos], -1)
    by_port, _found = f.guid_index.nodes(guid)
    node = np.where(node >= 0, node, by_port)
    return np.where(guid != 0, node, -1).astype(np.int64)


def vitals_families(view: View, fabric, nodes: tuple[int, int] | None = None) -> dict[str, tuple[str, str]]:
    """The device vitals families of ``fabric`` (a row) as ``view`` may see them (empty: none); ``nodes``: only the
    devices of nodes ``first <= n < end`` (a scrape target's part; the record's unknown devices go to part 0)."""
    series = series_of(fabric.pk)
    if series is None or not len(series):
        return {}
    h = record.head_of(fabric)
    f = record.fabric(fabric.pk, h) if h is not None else None
    if f is None and not view.sees_all:
        return {}
    node = _nodes_of(f, series.guid) if f is not None else np.full(series.guid.size, -1, np.int64)
    keep = np.ones(node.size, bool)
    if not view.sees_all:
        shown = redaction(view, fabric, f)
        hidden = shown.hidden_nodes(f) if shown.host_guids is not None else np.zeros(f.num_nodes, bool)
        keep = (node >= 0) & ~hidden[np.maximum(node, 0)]
    if nodes is not None:
        keep &= ((node >= nodes[0]) & (node < nodes[1])) | ((node < 0) & (nodes[0] == 0))
    names = series.name.copy()
    if f is not None and (node >= 0).any():
        names[node >= 0] = np.asarray(f.node_name, dtype=object)[node[node >= 0]]
    return device_families(series, fabric.slug, names, keep)
