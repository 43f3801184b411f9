"""Read UFM Telemetry records pushed as CSV (``/csv/xcset/low_freq_debug``) or JSON, by field name.

Field names are UFM Enterprise's "Low-Frequency (Secondary) Telemetry Fields" (matched without regard to
case): ``Node_GUID``, ``Port_Number``, ``node_description``, ``phy_state`` (5 is LinkUp),
``Link_speed_active``, ``Link_width_active``, ``Active_FEC``, ``Total_Raw_BER``, ``Effective_BER``,
``Symbol_BER``, ``Raw_Errors_Lane_<n>``, ``Effective_Errors``, ``Symbol_Errors``,
``Time_since_last_clear_Min`` (minutes, as its name says and as mlxlink computes it), ``hist0..hist15``,
``Link_Down``, ``LinkErrorRecoveryCounter`` (or ``Link_Error_Recovery``), ``Module_Temperature`` (or
``Temperature``), ``rx_power_lane_<n>``/``tx_power_lane_<n>``, ``tx_bias_lane_<n>``, and the cable's
``vendor_name``/``vendor_pn``/``vendor_sn``/``fw_version``/``cable_length`` where present. Empty cells and
``N/A`` are "not given"; a JSON record is an object, a list of objects, or ``{"records": [...]}``.
A row without ``Node_GUID`` and ``Port_Number`` is an error naming its line.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from ..errors import FormatError
from ..topology.limits import MAX_FABRIC_PORTS, MAX_NODE_PORTS
from .records import HIST_BINS, LANE_GBPS, LANES, HealthRecords, code, empty
from .thresholds import normalize_fec

__all__ = ["read_csv", "read_json", "looks_like_csv", "looks_like_json"]

_SPEEDS = {s.lower(): s for s in LANE_GBPS}
_SPEEDS.update({"1": "SDR", "2": "DDR", "4": "QDR", "17": "FDR10", "8": "FDR", "32": "EDR", "64": "HDR",
                "128": "NDR", "256": "XDR"})  # LinkSpeedActive/ExtActive codes, as UFM may print them


def looks_like_csv(text: str) -> bool:
    """Whether the first line is a UFM telemetry CSV header."""
    head = text.lstrip("\ufeff").split("\n", 1)[0].lower()
    return "node_guid" in head and "port_number" in head and "," in head


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is a JSON UFM telemetry record."""
    t = text.lstrip("\ufeff \t\r\n")[:1 << 16].lower()
    return t.startswith(("{", "[")) and '"node_guid"' in t


_MISSING = ("", "N/A", "NA", "NONE", "NAN")


class _Columns:
    """The cells of a table by lower-cased column name, one list per column, and each row's file line."""

    def __init__(self, columns: dict[str, list[str]], lines: list[int | None], source: str) -> None:
        self.columns, self.lines, self.source = columns, lines, source
        self.n = len(lines)

    def _cells(self, *names: str) -> np.ndarray | None:
        for name in names:
            col = self.columns.get(name.lower())
            if col is not None:
                cells = np.array(col, dtype=str) if col else np.zeros(0, str)
                return np.char.strip(cells) if any(c[:1].isspace() or c[-1:].isspace() for c in col) else cells
        return None

    def floats(self, *names: str) -> np.ndarray:
        """The first of ``names`` as floats (``0x`` hex read as such); NaN where empty or ``N/A`` or absent."""
        cells = self._cells(*names)
        if cells is None:
            return np.full(self.n, np.nan)
        missing = np.isin(np.char.upper(cells), _MISSING)
        cells = np.where(missing, "nan", cells)
        try:
            return cells.astype(np.float64)
        except ValueError:  # hex cells, or a cell that is not a number: found and named
            out = np.empty(self.n)
            for i, c in enumerate(cells.tolist()):
                try:
                    out[i] = float(int(c, 16)) if c[:2].lower() == "0x" else float(c)
                except ValueError:
                    raise FormatError(self.source, self.lines[i], f"{names[0]}: {c[:40]!r} is not a number") from None
            return out

    def texts(self, *names: str) -> np.ndarray:
        """The first of ``names`` as stripped strings (``""`` where ``N/A`` or absent)."""
        cells = self._cells(*names)
        if cells is None:
            return np.full(self.n, "", object)
        return np.where(np.isin(np.char.upper(cells), _MISSING), "", cells).astype(object)


def _records(t: _Columns) -> HealthRecords:
    """The columns of a UFM telemetry table as health records, checked before anything is kept."""
    n, source = t.n, t.source
    rec = empty(n, source)
    guid_text, port = t.texts("Node_GUID"), t.floats("Port_Number", "port_num")
    bad = np.flatnonzero((guid_text == "") | np.isnan(port))
    if bad.size:
        raise FormatError(source, t.lines[bad[0]], "a UFM telemetry record without Node_GUID and Port_Number")
    bad = np.flatnonzero((port < 0) | (port > MAX_NODE_PORTS) | (port != np.floor(port)))
    if bad.size:
        raise FormatError(source, t.lines[bad[0]], f"Port_Number {port[bad[0]]:g} out of range 0..{MAX_NODE_PORTS}")
    for i, g in enumerate(guid_text.tolist()):
        try:
            value = int(g, 16) if len(g) <= 18 else -1
        except ValueError:
            value = -1
        if not 0 < value < 1 << 64:
            raise FormatError(source, t.lines[i], f"Node_GUID {g[:40]!r} is not a 64-bit hexadecimal GUID")
        rec.guid[i] = value
    rec.port[:] = port
    rec.name[:] = t.texts("node_description")
    phy = t.floats("phy_state")
    rec["up"][:] = np.where(np.isnan(phy), -1, phy == 5)
    width = np.char.rstrip(t.texts("Link_width_active").astype(str), "xX")
    width_num = np.where(width == "", "nan", width)
    try:
        lanes = width_num.astype(np.float64)
    except ValueError:
        lanes = np.full(n, -2.0)
    bad = np.flatnonzero(~np.isnan(lanes) & ~np.isin(lanes, (1, 2, 4, 8, 12)))
    if bad.size:
        raise FormatError(source, t.lines[bad[0]], f"Link_width_active {width[bad[0]][:20]!r} is not a link width "
                                                   "(1, 2, 4, 8 or 12)")
    rec["lanes"][:] = np.where(np.isnan(lanes), -1, lanes)
    speeds = t.texts("Link_speed_active")
    for text in set(speeds.tolist()):  # a few distinct values
        name = _SPEEDS.get(text.lower().removeprefix("ib-"), "")
        if name:
            sel = speeds == text
            rec["speed"][sel] = code("speed", name)
            rec["lane_gbps"][sel] = LANE_GBPS[name]
    fecs = t.texts("Active_FEC")
    for text in set(fecs.tolist()):
        rec["fec"][fecs == text] = code("fec", normalize_fec(text))
    for field, names in (("raw_ber", ("Total_Raw_BER", "Raw_BER")), ("eff_ber", ("Effective_BER",)),
                         ("sym_ber", ("Symbol_BER",)), ("eff_errors", ("Effective_Errors",)),
                         ("sym_errors", ("Symbol_Errors",)), ("link_down", ("Link_Down",)),
                         ("link_recovery", ("LinkErrorRecoveryCounter", "Link_Error_Recovery")),
                         ("temp", ("Module_Temperature", "Temperature")), ("length_m", ("cable_length", "Length"))):
        rec[field][:] = t.floats(*names)
    rec["window_s"][:] = t.floats("Time_since_last_clear_Min") * 60.0
    for i in range(LANES):
        rec["raw_errors_lane"][:, i] = t.floats(f"Raw_Errors_Lane_{i}")
        rec["rx_power"][:, i] = t.floats(f"rx_power_lane_{i}")
        rec["tx_power"][:, i] = t.floats(f"tx_power_lane_{i}")
        rec["bias"][:, i] = t.floats(f"tx_bias_lane_{i}")
    for i in range(HIST_BINS):
        rec["hist"][:, i] = t.floats(f"hist{i}")
    lanes_given = ~np.isnan(rec["raw_errors_lane"]).all(axis=1)
    rec["raw_errors"][:] = np.where(lanes_given, np.nansum(rec["raw_errors_lane"], axis=1), np.nan)
    for field, names in (("vendor", ("vendor_name", "Vendor")), ("pn", ("vendor_pn", "PN")),
                         ("sn", ("vendor_sn", "SN")), ("fw", ("cable_fw_version", "module_fw_version")),
                         ("identifier", ("cable_identifier", "Identifier"))):
        rec[field][:] = t.texts(*names)
    rec["present"][:] = np.where(~np.isnan(rec["temp"]) | (rec["vendor"] != "") | (rec["sn"] != ""), 1, -1)
    return rec


def read_csv(text: str, source: str = "UFM telemetry CSV", warnings: list | None = None) -> HealthRecords:
    """Rows of a UFM telemetry CSV (header row first)."""
    text = text.lstrip("\ufeff")
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip().lower() for h in next(reader, [])]
        rows, lines = [], []
        for row in reader:
            if not row or len(row) == 1 and not row[0].strip():  # a blank line
                continue
            if len(row) != len(header):
                raise FormatError(source, reader.line_num, f"{len(row)} cells, the header has {len(header)}")
            if len(rows) >= MAX_FABRIC_PORTS:
                raise FormatError(source, reader.line_num, f"more than {MAX_FABRIC_PORTS:,} rows: more ports than "
                                                           "one subnet has")
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as exc:  # an unbalanced quote, a cell over the csv module's size limit
        raise FormatError(source, reader.line_num, f"not a CSV row: {exc}") from None
    columns = {h: [r[i] for r in rows] for i, h in enumerate(header)} if rows else {h: [] for h in header}
    return _records(_Columns(columns, lines, source))


def read_json(text: str, source: str = "UFM telemetry JSON", warnings: list | None = None) -> HealthRecords:
    """Records of a UFM telemetry JSON push (an object, a list of objects or ``{"records": [...]}``)."""
    try:
        doc = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise FormatError(source, exc.lineno, f"not JSON: {exc.msg}") from None
    except RecursionError:
        raise FormatError(source, None, "JSON nested too deeply: not a telemetry record") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise FormatError(source, None, f"not a telemetry record: {exc}") from None
    records = doc.get("records", doc) if isinstance(doc, dict) else doc
    records = [records] if isinstance(records, dict) else records
    if not isinstance(records, list):
        raise FormatError(source, 1, "expected a telemetry record, a list of them or {\"records\": [...]}")
    if len(records) > MAX_FABRIC_PORTS:
        raise FormatError(source, None, f"more than {MAX_FABRIC_PORTS:,} records: more ports than one subnet has")
    keys: dict[str, None] = {}
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            raise FormatError(source, None, f"record {i + 1} is not an object")
        keys.update(dict.fromkeys(str(k).lower() for k in r))
    lowered = [{str(k).lower(): v for k, v in r.items()} for r in records]
    columns = {k: ["" if (v := r.get(k)) is None else str(v) for r in lowered] for k in keys}
    return _records(_Columns(columns, [None] * len(records), source))
