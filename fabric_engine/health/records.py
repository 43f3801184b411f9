"""One columnar record set of link health, every reader's output: numpy arrays per field, one row per port.

A row is keyed by the port's identity: node GUID and port number where the tool prints a GUID, else the
node's name (a device, ``lid:12`` for a LID-addressed ``perfquery``) and the port. Values a tool did not
give are NaN (floats), -1 (small integers) or ``""`` (strings), so readers of different tools can be
merged row by row (:func:`merge`) and graded at once (:mod:`.grade`) without a loop over ports.

Per-lane fields have :data:`LANES` columns (PortExtendedSpeedsCounters counts 12 lanes), column-major so one
lane of all ports is contiguous; module
thresholds have four columns, :data:`TH_COLUMNS` (alarm low, warning low, warning high, alarm high).

In memory a record set can be made compact (:func:`compact`, what a telemetry-fed source keeps): lanes no port has are
left out (:func:`same_lanes` widens such columns where they meet others), a column alike for every row is one
broadcast row, float counts are float32; every value stays what it was.

A record set pickles compactly (the readings store keeps one per fabric in the cache): a field alike for every row
(most are "not given") is one row, read back as a read-only broadcast column; a field alike but for a few rows keeps
those; lanes no row has are left out; float64 values float32 holds exactly are stored as float32; strings are a
table and a small code per row.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError
from ..topology.limits import MAX_FABRIC_PORTS

__all__ = ["LANES", "HIST_BINS", "TH_COLUMNS", "TH_COLUMN_OF", "TH_FIELD_OF", "FIELDS", "LANE_GBPS", "CATEGORIES",
           "HealthRecords", "Builder", "merge", "empty", "take_rows", "compact", "same_lanes"]

#: Lanes of per-lane columns (PortExtendedSpeedsCounters has lanes 0..11).
LANES = 12
#: Bins of the RS-FEC error histogram (PPCNT RS-FEC histogram group, UFM ``hist0..hist15``).
HIST_BINS = 16
#: Columns of a module threshold field.
TH_COLUMNS = ("alarm_low", "warning_low", "warning_high", "alarm_high")
#: The column of a threshold by ``(side, kind)`` as the tools name it: ``("low", "alarm")`` -> 0, ...
TH_COLUMN_OF = {tuple(c.split("_")[::-1]): i for i, c in enumerate(TH_COLUMNS)}
#: The threshold field of a quantity as the tools name it (lower case, no spaces).
TH_FIELD_OF = {"temperature": "temp_th", "temp": "temp_th", "voltage": "voltage_th", "vcc": "voltage_th",
               "rxpower": "rx_power_th", "txpower": "tx_power_th", "txbias": "bias_th", "bias": "bias_th"}
#: Line rate of one lane in Gb/s by IB speed (IBA Vol. 2 signalling rates; PAM4 from HDR on), for BER
#: computed from counters: error bits / (lane rate x lanes x interval).
LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.3125, "FDR": 14.0625, "EDR": 25.78125,
             "HDR": 53.125, "NDR": 106.25, "XDR": 212.5}

#: Names of the categorical fields, stored as their index here (0 = not given), so grading looks thresholds
#: up by small integers: lane speed (IB, or an Ethernet port's total), active FEC, cable type.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "speed": ("", *LANE_GBPS, *(f"ETH-{g}G" for g in (1, 10, 25, 40, 50, 100, 200, 400, 800, 1600))),
    "fec": ("", "none", "fc_fec", "rs_fec", "kp4_rs_fec", "ll_rs_fec", "ll_rs_fec_plr"),
    "cable": ("", "dac", "acc", "aoc", "optical"),
}
_CODE = {field: {name: i for i, name in enumerate(names)} for field, names in CATEGORIES.items()}
_F, _I, _S, _C = np.float64, np.int16, object, np.int8
#: Field name -> (dtype, columns or 0 for one value, fill for "not given").
FIELDS: dict[str, tuple[type, int, object]] = {
    "lanes": (_I, 0, -1), "lane_gbps": (_F, 0, np.nan), "speed": (_C, 0, 0), "fec": (_C, 0, 0),
    "cable": (_C, 0, 0), "up": (_I, 0, -1), "window_s": (_F, 0, np.nan), "t": (_F, 0, np.nan),
    "raw_ber": (_F, 0, np.nan), "eff_ber": (_F, 0, np.nan), "sym_ber": (_F, 0, np.nan),
    "raw_ber_lane": (_F, LANES, np.nan),
    "raw_errors": (_F, 0, np.nan), "eff_errors": (_F, 0, np.nan), "sym_errors": (_F, 0, np.nan),
    "raw_errors_lane": (_F, LANES, np.nan), "fec_corrected": (_F, 0, np.nan),
    "fec_uncorrectable": (_F, 0, np.nan), "link_down": (_F, 0, np.nan), "link_recovery": (_F, 0, np.nan),
    "hist": (_F, HIST_BINS, np.nan), "status_opcode": (np.int32, 0, -1), "recommendation": (_S, 0, ""),
    "present": (_I, 0, -1), "temp": (_F, 0, np.nan), "voltage": (_F, 0, np.nan),
    "bias": (_F, LANES, np.nan), "rx_power": (_F, LANES, np.nan), "tx_power": (_F, LANES, np.nan),
    "temp_th": (_F, 4, np.nan), "voltage_th": (_F, 4, np.nan), "bias_th": (_F, 4, np.nan),
    "rx_power_th": (_F, 4, np.nan), "tx_power_th": (_F, 4, np.nan),
    "flag_alarms": (_I, 0, -1), "flag_warnings": (_I, 0, -1),
    "identifier": (_S, 0, ""), "vendor": (_S, 0, ""), "pn": (_S, 0, ""), "sn": (_S, 0, ""), "rev": (_S, 0, ""),
    "length_m": (_F, 0, np.nan), "fw": (_S, 0, ""),
}


def _column(name: str, n: int) -> np.ndarray:
    dtype, cols, fill = FIELDS[name]
    shape = (n, cols) if cols else (n,)
    out = np.empty(shape, dtype=dtype, order="F")  # a lane's column contiguous: grading works lane by lane
    out[...] = fill
    return out


@dataclass
class HealthRecords:
    """Rows of port health: ``guid`` (0 = not given), ``name``, ``port`` and one array per :data:`FIELDS`."""

    guid: np.ndarray
    name: np.ndarray
    port: np.ndarray
    data: dict[str, np.ndarray]
    source: np.ndarray  # file each row came from

    def __len__(self) -> int:
        return int(self.port.size)

    def __getitem__(self, field: str) -> np.ndarray:
        return self.data[field]

    def names(self, field: str) -> np.ndarray:
        """The names of a categorical field (:data:`CATEGORIES`) per row."""
        return np.array(CATEGORIES[field], dtype=object)[self.data[field]]

    def __reduce__(self):
        """Pickled compactly (:func:`_pack`): the cache keeps one record set per fabric, most of its fields empty or
        alike for every port; read back with the same values (float columns bit for bit)."""
        return _unpack, (_pack(self),)

    def __copy__(self) -> HealthRecords:  # copies are not pickles: the same arrays (shallow) or copies of them
        return HealthRecords(self.guid, self.name, self.port, self.data, self.source)

    def __deepcopy__(self, memo: dict) -> HealthRecords:
        return HealthRecords(*(copy.deepcopy(x, memo) for x in (self.guid, self.name, self.port, self.data,
                                                                   self.source)))

    def keys(self) -> np.ndarray:
        """One identity string per row: ``0x<guid>/<port>`` or ``<name>/<port>``."""
        ident = np.where(self.guid != 0, np.char.add("0x", np.char.zfill(
            np.char.lower(np.char.mod("%x", self.guid.astype(np.uint64))), 16)), self.name.astype(str))
        return np.char.add(np.char.add(ident.astype(str), "/"), self.port.astype(str))


def take_rows(col: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The rows ``rows`` of a column: a broadcast column (one value for every row) stays one, per-lane columns stay
    column-major (a lane of all rows contiguous, as grading reads them)."""
    col = np.asarray(col)
    if col.ndim and col.shape[0] and col.strides[0] == 0:
        return np.broadcast_to(col[0], (len(rows), *col.shape[1:]))
    return np.take(col.T, rows, axis=1).T if col.ndim == 2 else col[rows]


#: The fields with a column per lane (or histogram bin), which :func:`compact` may leave narrower (not thresholds).
_BY_LANE = frozenset(f for f, (_dtype, cols, _fill) in FIELDS.items() if cols in (LANES, HIST_BINS))


def same_lanes(field: str, cols: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The columns ``cols`` of ``field`` with as many lanes each (the narrower ones widened with lanes "not given",
    as :func:`compact` leaves them narrower), so they concatenate or combine row by row."""
    if field not in _BY_LANE or len({c.shape[1] for c in cols}) <= 1:
        return list(cols)
    width = max(c.shape[1] for c in cols)
    out = []
    for c in cols:
        if c.shape[1] < width:
            wide = np.empty((c.shape[0], width), c.dtype, order="F")
            wide[:, c.shape[1]:] = FIELDS[field][2]
            wide[:, :c.shape[1]] = c
            c = wide
        out.append(c)
    return out


def _alike(col: np.ndarray) -> bool:
    """Every row of ``col`` the same (floats bit for bit: NaN equal to NaN), one pass that stops at a difference
    only per chunk of rows."""
    if not col.shape[0] or (col.ndim and col.strides[0] == 0):
        return True
    if col.dtype.kind == "O":
        return bool((col == col[0]).all()) if col.ndim == 1 else False
    bits = col.view(np.dtype(f"u{col.dtype.itemsize}")) if col.dtype.kind == "f" else col
    first = bits[:1]
    step = 8192  # chunks of rows, never a loop over ports: most columns that differ do so within the first rows
    return all((bits[start:start + step] == first).all() for start in range(0, col.shape[0], step))


def compact(rec: HealthRecords) -> HealthRecords:
    """``rec`` as few bytes hold it, every value as it was: a column alike for every row becomes that row,
    broadcast (read-only, as the readings store gives a field no port has); a per-lane column keeps only its leading
    lanes some row has (at least one: :func:`same_lanes` widens it again where columns meet). A port without lane
    readings then costs nothing in the lanes it lacks, and 4-lane ports cost 4 lanes of the 12
    (PortExtendedSpeedsCounters') or 4 bins of the 16 of the FEC histogram. What a grading reads of it is the same:
    lanes no row has are skipped there too (:mod:`.grade`). A float column whose every value float32 holds exactly
    (counts: the FEC histogram, lane error counters, ``LinkDownedCounter``) is kept as float32: the same values,
    read as float64 by every computation that mixes it with one (grading thresholds are float64)."""
    n = len(rec)
    data = {}
    for f, col in rec.data.items():
        col = np.asarray(col)
        spec = FIELDS.get(f)
        if spec is None or not n:
            data[f] = col
            continue
        if f in _BY_LANE and col.ndim == 2 and col.strides[0] != 0:
            given = _given(col, spec[2]).any(axis=0)
            keep = max(int(np.flatnonzero(given)[-1]) + 1 if given.any() else 1, 1)
            if keep < col.shape[1]:
                col = np.asfortranarray(col[:, :keep]).copy(order="F")  # not a view: the wide buffer goes
        if _alike(col) and col.strides[0] != 0:
            col = np.broadcast_to(col[0], col.shape)
        elif col.dtype == np.float64 and col.strides[0] != 0:  # counts (histogram, lane errors, downs): float32
            small = _narrow(col)
            col = np.asfortranarray(small) if small.ndim == 2 else small
        data[f] = col
    source = rec.source
    if n and _alike(np.asarray(source)):
        source = np.broadcast_to(np.asarray(source)[:1], (n,))
    return HealthRecords(rec.guid, rec.name, rec.port, data, source)


def empty(n: int, source: str = "") -> HealthRecords:
    """``n`` rows with every field "not given" (``n`` checked against the bound of one subnet first)."""
    if n > MAX_FABRIC_PORTS:
        raise FormatError(source or "health records", None,
                          f"{n:,} ports: more than the {MAX_FABRIC_PORTS:,} ports one subnet has")
    return HealthRecords(np.zeros(n, np.uint64), np.full(n, "", object), np.zeros(n, np.int16),
                         {f: _column(f, n) for f in FIELDS}, np.full(n, source, object))


class Builder:
    """Rows gathered one port at a time by a reader, then turned into arrays by :meth:`build`."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.rows: list[tuple[int, str, int, dict]] = []

    def add(self, guid: int, name: str, port: int, values: dict, line: int | None = None) -> None:
        """Add one port; ``values`` maps :data:`FIELDS` names to a value or a per-lane/threshold sequence."""
        if len(self.rows) >= MAX_FABRIC_PORTS:
            raise FormatError(self.source, line, f"more than {MAX_FABRIC_PORTS:,} ports: more than one subnet has")
        unknown = set(values) - FIELDS.keys()
        if unknown:  # a reader's own mistake, never the input's
            raise KeyError(f"unknown health fields {sorted(unknown)}")
        if not 0 <= port <= 255 or not 0 <= guid < 1 << 64:
            raise FormatError(self.source, line, f"port {port} or GUID {guid:#x} out of range")
        for field, value in values.items():
            dtype = FIELDS[field][0]
            if np.issubdtype(dtype, np.integer) and field not in _CODE:
                info = np.iinfo(dtype)
                if not isinstance(value, int | np.integer) or not info.min <= value <= info.max:
                    raise FormatError(self.source, line, f"{field} {value!r} out of range")
        self.rows.append((guid, name, port, values))

    def build(self) -> HealthRecords:
        """The rows as a :class:`HealthRecords`."""
        out = empty(len(self.rows), self.source)
        for i, (guid, name, port, values) in enumerate(self.rows):
            out.guid[i], out.name[i], out.port[i] = guid, name, port
            for field, value in values.items():
                col = out.data[field]
                if field in _CODE:
                    value = code(field, value)
                if FIELDS[field][1] and not np.isscalar(value):
                    vals = list(value)[: col.shape[1]]
                    col[i, : len(vals)] = vals
                else:
                    col[i] = value
        return out


def code(field: str, name: str) -> int:
    """The code of ``name`` in the categorical ``field`` (an unknown name is "not given")."""
    return _CODE[field].get(name, 0)


def _concat(parts: Sequence[HealthRecords]) -> HealthRecords:
    total = sum(len(p) for p in parts)
    if total > MAX_FABRIC_PORTS:
        raise FormatError(", ".join(sorted({str(s) for p in parts for s in p.source[:1]})), None,
                          f"{total:,} ports in all: more than the {MAX_FABRIC_PORTS:,} ports one subnet has")
    return HealthRecords(np.concatenate([p.guid for p in parts]) if parts else np.zeros(0, np.uint64),
                         np.concatenate([p.name for p in parts]) if parts else np.zeros(0, object),
                         np.concatenate([p.port for p in parts]) if parts else np.zeros(0, np.int16),
                         {f: np.concatenate(same_lanes(f, [p.data[f] for p in parts])) if parts else _column(f, 0)
                          for f in FIELDS},
                         np.concatenate([p.source for p in parts]) if parts else np.zeros(0, object))


def merge(parts: Iterable[HealthRecords]) -> HealthRecords:
    """One row per port identity: the rows of ``parts`` with the same key combined, the first given value of
    each field kept (so a port's BER from ``mlxlink`` and its module from ``ibdiagnet2.cables`` meet)."""
    rec = _concat(list(parts))
    if not len(rec):
        return rec
    _, first, inverse = np.unique(rec.keys(), return_index=True, return_inverse=True)
    if first.size == len(rec):
        return rec
    order = np.argsort(inverse, kind="stable")  # rows grouped by key, in input order within a key
    group = inverse[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    out_data = {}
    for f, (_dtype, _cols, fill) in FIELDS.items():
        col = rec.data[f][order]
        given = ~np.isnan(col) if col.dtype.kind == "f" else (col != fill)
        # index of the first given row of each group, per column: rows not given are pushed past the group end
        idx = np.arange(len(col))
        idx_b = idx[:, None] if col.ndim == 2 else idx
        pos = np.where(given, idx_b, len(col))
        firsts = np.minimum.reduceat(pos, starts, axis=0)
        fallback = starts[:, None] if col.ndim == 2 else starts
        pick = np.where(firsts < len(col), firsts, fallback)
        out_data[f] = np.take_along_axis(col, pick, axis=0) if col.ndim == 2 else col[pick]
    head = order[starts]
    return HealthRecords(rec.guid[head], rec.name[head], rec.port[head], out_data, rec.source[head])


# ------------------------------------------------------------------ compact pickling
# A column is stored as one of: ("base", row) every row alike (a field no port has: its "not given" row);
# ("except", row, idx, values) alike but for the rows ``idx``; ("dense", values) every row. Per-lane fields keep
# only their leading lanes some port has (the rest are "not given"); float64 values that float32 holds exactly
# are stored as float32. Strings are a table (joined by NUL) and a small integer code per row.
_SPARSE = 4  # "except" when at most one row in this many differs from the common row


def _given(col: np.ndarray, fill) -> np.ndarray:
    """Per element: a value given (not the field's "not given")."""
    return ~np.isnan(col) if col.dtype.kind == "f" else col != fill


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` as float32 when that holds every value exactly (NaN too), else as they are."""
    if values.dtype == np.float64 and values.size:
        small = values.astype(np.float32)
        if np.array_equal(small.astype(np.float64), values, equal_nan=True):
            return small
    return values


def _pack_column(col: np.ndarray, fill) -> tuple:
    n = col.shape[0]
    lanes = col.shape[1] if col.ndim == 2 else 0
    if lanes:  # leading lanes some port has; trailing ones not given
        given = _given(col, fill).any(axis=0) if n else np.zeros(lanes, bool)
        keep = int(np.flatnonzero(given)[-1]) + 1 if given.any() else 0
        col = col[:, :keep]
    if col.dtype.kind != "O" and (not n or (col.ndim == 2 and not col.shape[1]) or col.strides[0] == 0):
        return ("base", lanes, np.array(col[:1] if n and col.size else np.full((1, *col.shape[1:]), fill, col.dtype)))
    if col.dtype.kind == "O":
        return ("strings", *_pack_strings(col))
    first = col[:1]
    bits = np.dtype(f"u{col.dtype.itemsize}") if col.dtype.kind == "f" else None  # floats compared bit for bit
    differ = col.view(bits) != first.view(bits) if bits is not None else col != first
    if differ.ndim == 2:
        differ = differ.any(axis=1)
    idx = np.flatnonzero(differ)
    if idx.size <= n // _SPARSE:
        return ("except", lanes, np.array(first), idx.astype(np.int32), _narrow(np.ascontiguousarray(col[idx])))
    return ("dense", lanes, _narrow(np.ascontiguousarray(col) if col.ndim == 1 else np.asfortranarray(col)))


def _pack_strings(col: np.ndarray) -> tuple[str | list, np.ndarray]:
    """A string column as its distinct values (joined by NUL where none holds one) and each row's code."""
    values = col.tolist()
    index = {v: i for i, v in enumerate(dict.fromkeys(values))}  # distinct, in first-seen order
    names = list(index)
    dtype = np.uint8 if len(names) <= 1 << 8 else np.uint16 if len(names) <= 1 << 16 else np.uint32
    codes = np.zeros(len(values), dtype) if len(names) == 1 else np.array([index[v] for v in values], dtype)
    try:  # one string when no value holds a NUL (and every one is a string)
        joined = "\0".join(names)
    except TypeError:
        return names, codes
    return (joined if joined.count("\0") == len(names) - 1 else names), codes


def _unpack_strings(names: str | list, codes: np.ndarray) -> np.ndarray:
    table = np.array(names.split("\0") if isinstance(names, str) else names, dtype=object)
    return table[codes] if table.size else np.empty(codes.size, object)


def _unpack_column(packed: tuple, n: int, dtype, fill) -> np.ndarray:
    kind = packed[0]
    if kind == "strings":
        return _unpack_strings(packed[1], packed[2])
    lanes, row = packed[1], packed[2]
    if kind == "dense":
        row = row.astype(dtype, copy=False)
        if row.ndim == 2 and row.shape[1] < lanes:
            out = np.empty((n, lanes), dtype=dtype, order="F")
            out[:, row.shape[1]:] = fill
            out[:, :row.shape[1]] = row
            return out
        return row
    shape = (n, lanes) if lanes else (n,)
    base = np.full(shape[1:], fill, dtype)  # the common row
    if lanes:
        base[:row.shape[1]] = row[0]
    else:
        base[...] = row[0]
    if kind == "base" or not packed[3].size:  # every row alike: one row, shared (read-only, as broadcast columns are)
        return np.broadcast_to(base, shape)
    out = np.empty(shape, dtype=dtype, order="F")
    out[...] = base
    values = packed[4].astype(dtype, copy=False)
    if lanes:
        out[packed[3], :values.shape[1]] = values
    else:
        out[packed[3]] = values
    return out


def _pack(rec: HealthRecords) -> dict:
    fields = {f: np.asarray(v) for f, v in rec.data.items() if f in FIELDS}
    return {"n": len(rec), "guid": np.asarray(rec.guid), "port": np.asarray(rec.port),
            "name": _pack_column(np.asarray(rec.name, object), ""),
            "source": _pack_column(np.asarray(rec.source, object), ""),
            "data": {f: (v.dtype.str, _pack_column(v, FIELDS[f][2])) for f, v in fields.items()},
            "extra": {f: v for f, v in rec.data.items() if f not in FIELDS}}


def _unpack(packed: dict) -> HealthRecords:
    n = packed["n"]
    data = {f: _unpack_column(v, n, np.dtype(dtype), FIELDS[f][2]) for f, (dtype, v) in packed["data"].items()}
    return HealthRecords(packed["guid"], _unpack_column(packed["name"], n, object, ""), packed["port"],
                         {**data, **packed["extra"]}, _unpack_column(packed["source"], n, object, ""))
