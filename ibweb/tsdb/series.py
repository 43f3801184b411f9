"""What the history stores: the series catalog and port identities.

A **series** is one per-port quantity per sweep or tick (:data:`SERIES`): transmit and receive rates, utilization,
XmitWait, every error counter's rate (:data:`fabric_engine.telemetry.counters.ERROR_COUNTERS`), link state and the
link-health series. Each says how it is reduced over a time bucket (:class:`Series` ``agg``): ``mean`` for rates,
``max`` for what is judged by its worst (BER, temperature), ``min`` for link state (a down within a bucket shows).
The top-N of a series is its highest values, or its lowest for a ``min`` series (the ports that were down).

A **port** is named by its identity (:data:`PORT_ID`: node GUID, port number), not by a directed-link index: a
re-cabled port keeps its identity and its history (``ibweb.live.history.link_identity.PORT`` arrays are taken as
they are, by field position).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fabric_engine.telemetry.counters import ERROR_COUNTERS

__all__ = ["AGGREGATIONS", "PORT_ID", "SERIES", "Series", "port_ids", "series_of", "checked_sweep"]

#: A port's identity: node GUID and port number.
PORT_ID = np.dtype([("guid", "<u8"), ("port", "<u2")])
AGGREGATIONS = ("mean", "max", "min")


@dataclass(frozen=True)
class Series:
    """One stored per-port series: ``name`` (also the Prometheus metric's suffix), ``unit``, ``agg``."""

    name: str
    unit: str
    agg: str = "mean"


def _catalog() -> dict[str, Series]:
    rows = [
        Series("tx_bytes_per_s", "bytes/s"),
        Series("rx_bytes_per_s", "bytes/s"),
        Series("utilization", "ratio"),
        Series("xmit_wait_per_s", "ticks/s"),
        Series("link_up", "bool", "min"),
        # link health (the health issues' readings, per port)
        Series("effective_ber", "ratio", "max"),
        Series("symbol_ber", "ratio", "max"),
        Series("module_temperature_c", "celsius", "max"),
        Series("module_rx_power_dbm", "dBm", "min"),
    ]
    rows += [Series(f"error_{name}_per_s", "1/s") for name in ERROR_COUNTERS]
    return {s.name: s for s in rows}


#: Every series the store takes, by name.
SERIES: dict[str, Series] = _catalog()


def series_of(name: str) -> Series:
    """The catalog's series ``name``; ``KeyError`` naming it and the known names otherwise."""
    try:
        return SERIES[name]
    except KeyError:
        raise KeyError(f"unknown series {name!r}; known: {', '.join(sorted(SERIES))}") from None


def port_ids(ports: np.ndarray) -> np.ndarray:
    """``ports`` as :data:`PORT_ID` ``[K]``: a structured array whose first two fields are GUID and port number."""
    ports = np.asarray(ports)
    if ports.dtype.names is None or len(ports.dtype.names) < 2 or ports.ndim != 1:
        raise TypeError(f"ports: expected a 1-d structured array (guid, port), got {ports.dtype} {ports.shape}")
    out = np.empty(len(ports), dtype=PORT_ID)
    out["guid"], out["port"] = ports[ports.dtype.names[0]], ports[ports.dtype.names[1]]
    return out


#: The port set last found unique: a fabric's sweeps list the same ports sweep after sweep (one compare, no sort).
_unique: list[bytes] = [b""]


def checked_sweep(ports: np.ndarray, values: Mapping[str, np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """One sweep's ports (:data:`PORT_ID`, unique) and series (float64 ``[K]`` each), checked; errors name the field."""
    keys = port_ids(ports)
    fingerprint = keys.tobytes()
    if fingerprint != _unique[0]:
        order = np.lexsort((keys["port"], keys["guid"]))
        same = (np.diff(keys["guid"][order]) == 0) & (np.diff(keys["port"][order]) == 0)
        if same.any():
            raise ValueError(f"ports: {int(same.sum())} duplicate port identities in one sweep")
        _unique[0] = fingerprint
    out = {}
    for name, array in values.items():
        series_of(name)
        array = np.asarray(array, dtype=np.float64)
        if array.shape != (len(keys),):
            raise ValueError(f"series {name!r}: shape {array.shape}, expected ({len(keys)},) (one value per port)")
        out[name] = array
    return keys, out
