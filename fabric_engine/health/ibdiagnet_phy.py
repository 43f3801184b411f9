"""Read the link health sections of ``ibdiagnet2.db_csv`` (``ibdiagnet --get_phy_info --get_cable_info``).

ibdiagnet's database is CSV tables between ``START_<NAME>`` and ``END_<NAME>`` lines, a header row first
(:mod:`fabric_engine.formats.ibdiagnet_db_csv`; ibutils2 ``ibdiag_types.h`` names the sections). Columns are
found by name, case-insensitively, so versions that add or reorder columns read alike; numbers are decimal
or ``0x`` hex. Every table is keyed by ``NodeGuid`` (or ``NodeGUID``) and ``PortNum`` (or ``PortNumber``).
A port is a row here when one of these sections has it:

* ``PHY_DB16``: the PPCNT *Physical Layer Statistical Counters* group (0x16) as ibdiagnet dumps an access
  register, its fields in register order as ``field0``, ``field1`` ... with each ``_high``/``_low`` pair
  one 64-bit value: ``field0`` time since last clear (ms), ``field1`` received bits, ``field2`` symbol errors,
  ``field3`` corrected bits, ``field4..field11`` raw errors of lanes 0..7, then ``field12``/``field13`` the raw
  BER's coefficient and magnitude, ``field14``/``15`` the effective BER's, ``field16``/``17`` the symbol
  BER's (BER = coefficient x 10^-magnitude, as ``mlxlink`` prints ``<coef>E-<magnitude>``; a coefficient of
  15 and magnitude of 254 or 255 is how the firmware says "no error seen"; a coefficient of 0 is a BER of 0).
  ibutils2's phy_diag plugin, which writes the section, is not public; the positions of the three BERs are
  those NVIDIA's own ibdiagnet analysis tool reads (``ib_analysis`` ``ber.py``: ``field12``..``field17`` as
  raw, effective and symbol mantissa and exponent). Where a version writes the PRM field names
  (``raw_ber_coef``, ``phy_raw_errors_lane0`` ...) those are read instead;
* ``CABLE_INFO`` (ibdiagnet's combined cable table): columns as ibutils2 names them (the fields of ``CableInfoRecord::
  CombinedCableInfo``, the record its db_csv parser reads the section into), matched with ``_`` and case
  ignored: ``Vendor``, ``PN``, ``SN``, ``Rev``, ``FWVersion``, ``IdentifierStr`` (``Identifier`` is the SFF code),
  ``TypeDesc`` (the transmitter technology's text; ``Type`` is its code), lengths ``LengthSMFiber``,
  ``LengthOM5`` .. ``LengthOM1``, ``LengthCopperOrActive`` (the first given wins), ``Temperature``; per lane
  ``RX<n>Power`` and ``TX<n>Power`` (16-bit module words in 0.1 uW, SFF-8636/CMIS, to dBm; a cell with its
  unit, ``-1.2 dBm`` or ``0.8 mW``, is read as written), ``TX<n>Bias`` (mA); thresholds
  ``AlarmTemperatureHighThresh`` .. ``WarnVoltageLowThresh``, ``RXPowerHighThresh``/``LowThresh`` and
  ``TXPower..``/``TXBias..`` (the module's alarm limits; powers in 0.1 uW as above); flags ``HighTemperatureAlarm``,
  ``LowRX<n>PowerWarning`` ... (0/1 each, or a lane mask: its set bits are raised flags, ``Yes``/``No`` read as
  1/0). A passive copper cable (``TypeDesc`` copper, unequalized or passive) has no monitors: its zero readings
  are not given; nor is a power or bias limit of zero (one the module does not set: as an alarm limit it would
  raise every reading). Versions that name columns otherwise (``SupplyVoltage``, ``HighTemperatureAlarmThreshold``,
  ``RX1 Power``) are read too;
* ``PM_INFO``: ibdiagnet's port counters, one row per port (``NodeGUID``, ``PortGUID``, ``PortNumber``), the
  attributes NVIDIA's ibdiagnet documentation lists for it ("Port Counters", IBUtils2 Utility Documentation
  v2.23: PortCounters, PortCountersExtended, PortRcvErrorDetails, PortXmitDiscardDetails, and with
  ``--extended_speeds`` PortExtendedSpeedsCounters). The writer (``IBDiag::DumpPortCountersToCSV``, declared in
  ibutils2 ``ibdiag.h``) is not public; the columns are defined by ibutils2's own reader of the section,
  ``PMInfoRecord`` (``ibdiag_csv_records.h``: the section read back into ibis's ``PM_PortCounters``,
  ``PM_PortCountersExtended``, ``PM_PortRcvErrorDetails`` and ``PM_PortXmitDiscardDetails``), whose fields ibis's
  ``packets/packets_layouts.h`` names and sizes (both as ibutils2 2025 ships them, read in
  github.com/cisco-system-traffic-generator/trex-core ``external_libs/ibverbs/x86_64/include/infiniband``, commit
  c7da344): PortCounters' ``LinkDownedCounter`` and ``LinkErrorRecoveryCounter`` are 8 bits wide (they stop at
  255); PortCountersExtended has 64-bit counters of the same names, which the section tells apart by a suffix,
  ``Ext`` for the error counters (``SymbolErrorCounterExt``, ``LinkErrorRecoveryCounterExt``,
  ``LinkDownedCounterExt`` ... ``QP1DroppedExt``) and ``Extended`` for the data counters
  (``PortXmitDataExtended`` ...), as readers of real files key them (NVIDIA's ``ib_analysis``: its anomaly
  columns ``LinkDownedCounter`` .. ``VL15Dropped``, ``SymbolErrorCounterExt`` .. ``ExcessiveBufferOverrunErrorsExt``).
  Read, row by row: ``LinkDownedCounterExt`` else ``LinkDownedCounter``, ``LinkErrorRecoveryCounterExt`` else
  ``LinkErrorRecoveryCounter``; ``N/A`` (an attribute the port did not answer) and the "counter not supported"
  values (``0xfffffffffffffffe``, ``0xffffffffffffffff``, ``-1``) are not given. Columns are found by name,
  so their order and the other counters do not matter.

Then, for those ports only: ``PORTS`` gives the width, lane speed and state (``LinkWidthActv``,
``LinkSpeedActv``/``LinkSpeedExtActv``, ``PortPhyState`` 5 or else ``PortState`` 4 is up) and the active FEC
(``FECActv``; else a ``FEC_MODE`` or ``PORT_INFO_EXTENDED`` column named like ``FECActv``/``FECModeActive``)
as ibdm's ``IBFECMode`` numbers it (ibutils2 ``Fabric.h``: 0 none, 1 Firecode, 2 RS(528,514), 3 RS(271,257),
4 RS(544,514), 9 Mellanox LL RS, 13/14 RS with PLR; 0xff not given) or named as ``mlxlink`` prints it, and
``NODES`` the node's description. Other sections are not parsed.

A missing ``END_`` line, a row shorter than its header, a GUID or port out of range, one port twice in a
section, a cell that is not a number where one is read are :class:`FormatError` naming the file and line.
Cells are parsed once per distinct value (``np.unique``), so 200,000 ports cost a few distinct parses.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..errors import FormatError
from ..formats.ibdiagnet import is_ibdiagnet
from ..formats.ibdiagnet_db_csv import Section, sections
from ..formats.ibdiagnet_fabric import EXT2_SPEED, EXT_SPEED, LINK_SPEED, LINK_WIDTH
from ..topology.limits import MAX_NODE_PORTS
from ..topology.speeds import SPEEDS
from .records import LANE_GBPS, LANES, TH_COLUMN_OF, TH_FIELD_OF, HealthRecords, code, empty
from .thresholds import normalize_cable, normalize_fec

__all__ = ["read", "looks_like", "ROW_SECTIONS", "HEALTH_SECTIONS"]

#: Sections whose ports become rows.
ROW_SECTIONS = ("PHY_DB16", "CABLE_INFO", "PM_INFO")
#: Every section read.
HEALTH_SECTIONS = (*ROW_SECTIONS, "PORTS", "FEC_MODE", "PORT_INFO_EXTENDED", "NODES")
_MISSING = frozenset({"", "N/A", "NA", "-", "NONE", "UNKNOWN"})
_NOT_SUPPORTED = (float(0xFFFFFFFFFFFFFFFE), float(0xFFFFFFFFFFFFFFFF), -1.0)
_NUMBER = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)")
# PHY_DB16 fields (register order, 64-bit pairs joined): name -> field index
_PHY16 = {"time_since_last_clear": 0, "phy_received_bits": 1, "phy_symbol_errors": 2, "phy_corrected_bits": 3,
          **{f"phy_raw_errors_lane{k}": 4 + k for k in range(8)},
          "raw_ber_coef": 12, "raw_ber_magnitude": 13, "effective_ber_coef": 14, "effective_ber_magnitude": 15,
          "symbol_ber_coef": 16, "symbol_ber_magnitude": 17}
_BER = (("raw_ber", "raw_ber"), ("eff_ber", "effective_ber"), ("sym_ber", "symbol_ber"))
# ibdm ``IBFECMode`` (ibutils2 ``Fabric.h``: the Mellanox Extended PortInfo ``FECModeActive``) -> table FEC name;
# 8 (strong RS), 10 (adaptive), 11 (COD) and 12 (ZL) have no row of their own: not given
IB_FEC_MODES = {0: "none", 1: "fc_fec", 2: "rs_fec", 3: "ll_rs_fec", 4: "kp4_rs_fec", 9: "ll_rs_fec",
                13: "ll_rs_fec_plr", 14: "ll_rs_fec_plr"}
_CABLE_TEXT = {"vendor": ("vendor", "vendorname"), "pn": ("pn", "partnumber", "vendorpn"),
               "sn": ("sn", "serialnumber", "vendorsn"), "rev": ("rev", "revision", "vendorrev"),
               "fw": ("fwversion", "fw", "firmwareversion"),
               "identifier": ("identifierstr", "identifier", "typedesc", "type", "cabletype")}
# the technology's text first: ibutils2 writes ``Type`` as the SFF code and ``TypeDesc`` as its name
_CABLE_KIND = ("typedesc", "technology", "cabletechnology", "type", "cabletype", "identifierstr", "identifier")
_CABLE_NUM = {"temp": ("temperature", "moduletemperature", "temp"), "voltage": ("supplyvoltage", "voltage", "vcc"),
              "length_m": ("length", "lengthsmfiber", "lengthom5", "lengthom4", "lengthom3", "lengthom2",
                           "lengthom1", "lengthcopperoractive", "lengthcopper", "cablelength")}
_LANE = re.compile(r"(rx|tx)(\d{1,2})(power|bias)|(rx|tx)(power|bias)(?:lane|ch|channel)?(\d{1,2})")
_THRESHOLD = re.compile(r"(alarm|warning|warn)?(high|low)?(temperature|temp|voltage|vcc|rxpower|txpower|txbias|bias)"
                        r"(high|low)?(alarm|warning|warn)?(high|low)?(?:threshold|thresh|th)")
_PLAIN = re.compile(r"\d+")  # a module word as ibutils2 writes powers in CABLE_INFO (0.1 uW)
_FLAG = re.compile(r".*(alarm|warning).*")


def looks_like(text: str) -> bool:
    """Whether ``text`` is an ``ibdiagnet2.db_csv`` (any of its sections may be read for health)."""
    return is_ibdiagnet(text) == "db_csv" or re.search(
        r"^START_(?:PHY_DB16|CABLE_INFO)[ \t]*\r?$", text[:1 << 16], re.M) is not None


def _flat(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _column(sec: Section, *flat_names: str) -> int | None:
    """Index of the first header cell whose flattened name is one of ``flat_names``."""
    index = {}
    for i, h in enumerate(sec.header):
        index.setdefault(_flat(h), i)
    return next((index[n] for n in flat_names if n in index), None)


def _cells(sec: Section, i: int) -> np.ndarray:
    """Column ``i`` as strings (the section's rows transposed once, in C: ``zip(*rows)``)."""
    columns = sec.__dict__.get("_columns")
    if columns is None:
        columns = list(zip(*sec.rows, strict=False)) if sec.rows else []  # cut to the shortest row: the header's
        sec.__dict__["_columns"] = columns
    if i >= len(columns):
        return np.zeros(0, str)
    cells = np.array(columns[i], dtype=str)
    if cells.size and (np.strings.endswith(cells, " ").any() or np.strings.endswith(cells, "\t").any()):
        cells = np.strings.strip(cells)  # the CSV reader drops leading blanks, not trailing ones
    return cells


def _parse_cell(cell: str, counter: bool) -> float | None:
    """One distinct cell as a number in the base unit (None: not a number); NaN where not given."""
    if cell.upper() in _MISSING:
        return math.nan
    if cell[:2] in ("0x", "0X"):
        try:
            x = float(int(cell, 16))
        except ValueError:
            return None
    else:
        m = _NUMBER.fullmatch(cell)
        if m is None:
            return None
        x = float(m.group(1))
        unit = m.group(2).lower()
        if unit in ("mw", "uw"):
            mw = x / 1000.0 if unit == "uw" else x
            x = 10 * math.log10(mw) if mw > 0 else -math.inf
        elif unit in ("mv", "ua"):
            x /= 1000.0
        elif unit == "km":  # single-mode fibre lengths (SFF-8636 byte 142 counts km)
            x *= 1000.0
        elif unit not in ("", "c", "v", "dbm", "ma", "m", "ms", "s"):
            return None
    return math.nan if counter and x in _NOT_SUPPORTED else x


def _numbers(sec: Section, i: int, counter: bool = False) -> np.ndarray:
    """Column ``i`` as floats, each distinct cell parsed once; a cell that is not a number names its line."""
    cells = _cells(sec, i)
    if not cells.size:
        return np.zeros(0)
    try:  # the common case: plain decimal numbers
        out = cells.astype(np.float64)
        if counter:
            out[np.isin(out, _NOT_SUPPORTED)] = np.nan
        return out
    except ValueError:
        pass
    uniq, inverse = np.unique(cells, return_inverse=True)
    values = [_parse_cell(u, counter) for u in uniq.tolist()]
    bad = next((k for k, v in enumerate(values) if v is None), None)
    if bad is not None:
        row = int(np.flatnonzero(inverse == bad)[0])
        raise FormatError(sec.source, int(sec.lines[row]), f"section {sec.name}, {sec.header[i].strip()}: "
                                                           f"{uniq[bad][:40]!r} is not a number")
    return np.array(values, dtype=np.float64)[inverse]


def _texts(sec: Section, i: int) -> np.ndarray:
    cells = _cells(sec, i)
    return np.where(np.isin(np.char.upper(cells), list(_MISSING)), "", cells).astype(object)


def _identity(sec: Section) -> tuple[np.ndarray, np.ndarray]:
    """(node GUID, port number) of every row, checked."""
    guid = sec.ints(sec.col("NodeGuid", "NodeGUID"), "NodeGuid", 1, dtype=np.uint64)
    port = sec.ints(sec.col("PortNum", "PortNumber"), "PortNum", 0, MAX_NODE_PORTS)
    return guid, port


class _Ports:
    """The union of the row sections' ports (sorted by GUID, then port); each section's rows mapped to it."""

    def __init__(self, found: dict[str, Section]) -> None:
        ids = {name: _identity(found[name]) for name in ROW_SECTIONS if name in found}
        g = np.concatenate([g for g, _ in ids.values()])
        p = np.concatenate([p for _, p in ids.values()])
        self.guids = np.unique(g)
        self.keys = np.unique(self._key(g, p))
        self.guid = self.guids[self.keys >> 8]
        self.port = (self.keys & 0xFF).astype(np.int16)
        self.rows: dict[str, np.ndarray] = {}
        for name, (sg, sp) in ids.items():
            rows = np.searchsorted(self.keys, self._key(sg, sp))
            _, first = np.unique(rows, return_index=True)
            if first.size < rows.size:  # a port twice: name the first repeat and the row it repeats
                seen = np.zeros(rows.size, bool)
                seen[first] = True
                j = int(np.flatnonzero(~seen)[0])
                earlier = int(np.flatnonzero(rows == rows[j])[0])
                sec = found[name]
                raise FormatError(sec.source, int(sec.lines[j]), f"section {name}: port {int(sp[j])} of "
                                                                 f"0x{int(sg[j]):016x} twice (also on line "
                                                                 f"{int(sec.lines[earlier])})")
            self.rows[name] = rows

    def _key(self, guid: np.ndarray, port: np.ndarray) -> np.ndarray:
        """GUID rank x 256 + port (the GUIDs must be among :attr:`guids`)."""
        return np.searchsorted(self.guids, guid).astype(np.int64) * 256 + port.astype(np.int64)

    def lookup(self, sec: Section) -> tuple[np.ndarray, np.ndarray]:
        """Row of every record of ``sec`` among the ports, and the mask of the records that are one."""
        g, p = _identity(sec)
        if not self.keys.size:
            return np.zeros(g.size, np.int64), np.zeros(g.size, bool)
        rank = np.minimum(np.searchsorted(self.guids, g), self.guids.size - 1)
        key = rank.astype(np.int64) * 256 + p.astype(np.int64)
        pos = np.minimum(np.searchsorted(self.keys, key), self.keys.size - 1)
        ok = (self.guids[rank] == g) & (self.keys[pos] == key)
        return pos, ok


def read(text: str, source: str = "ibdiagnet2.db_csv", warnings: list | None = None) -> HealthRecords:
    """The ports of an ``ibdiagnet2.db_csv`` that its PHY, cable or port counter sections name."""
    found = sections(text.lstrip("\ufeff"), source, set(HEALTH_SECTIONS))
    if not any(name in found for name in ROW_SECTIONS):
        raise FormatError(source, None, "no PHY_DB16, CABLE_INFO or PM_INFO section: ibdiagnet ran without "
                                        "--get_phy_info, --get_cable_info and port counters")
    ports = _Ports(found)
    rec = empty(len(ports.keys), source)
    rec.guid[:], rec.port[:] = ports.guid, ports.port
    if "PHY_DB16" in found:
        _phy16(found["PHY_DB16"], ports.rows["PHY_DB16"], rec)
    if "CABLE_INFO" in found:
        _cable_info(found["CABLE_INFO"], ports.rows["CABLE_INFO"], rec)
    if "PM_INFO" in found:
        _pm_info(found["PM_INFO"], ports.rows["PM_INFO"], rec)
    if "PORTS" in found:
        _port_rates(found["PORTS"], ports, rec)
    for name in ("PORTS", "FEC_MODE", "PORT_INFO_EXTENDED"):  # the first that gives a port's FEC wins
        if name in found:
            _fec(found[name], ports, rec)
    if "NODES" in found:
        _names(found["NODES"], rec)
    return rec


def _field(sec: Section, name: str) -> np.ndarray | None:
    """A PHY_DB16 value by its PRM name (a ``_high``/``_low`` pair joined), else by its ``field<n>`` position."""
    i = _column(sec, _flat(name))
    if i is not None:
        return _numbers(sec, i)
    hi, lo = _column(sec, _flat(name + "_high")), _column(sec, _flat(name + "_low"))
    if hi is not None and lo is not None:
        return _numbers(sec, hi) * 2.0 ** 32 + _numbers(sec, lo)
    i = _column(sec, f"field{_PHY16[name]}")
    return _numbers(sec, i) if i is not None else None


def _phy16(sec: Section, rows: np.ndarray, rec: HealthRecords) -> None:
    ms = _field(sec, "time_since_last_clear")
    if ms is not None:
        rec["window_s"][rows] = ms / 1000.0
    sym = _field(sec, "phy_symbol_errors")
    if sym is not None:
        rec["sym_errors"][rows] = sym
    lanes = [_field(sec, f"phy_raw_errors_lane{k}") for k in range(8)]
    for k, lane in enumerate(lanes):
        if lane is not None:
            rec["raw_errors_lane"][rows, k] = lane
    given = [lane for lane in lanes if lane is not None]
    if given:
        stacked = np.stack(given, axis=1)
        rec["raw_errors"][rows] = np.where(np.isnan(stacked).all(axis=1), np.nan, np.nansum(stacked, axis=1))
    for field, prefix in _BER:
        coef, mag = _field(sec, f"{prefix}_coef"), _field(sec, f"{prefix}_magnitude")
        if coef is None or mag is None:
            continue
        bad = np.flatnonzero((coef < 0) | (coef > 15) | (mag < 0) | (mag > 255))
        if bad.size:
            raise FormatError(sec.source, int(sec.lines[bad[0]]), f"section PHY_DB16: {prefix} coefficient "
                                                                  f"{coef[bad[0]]:g} or magnitude {mag[bad[0]]:g} "
                                                                  f"out of range (0..15, 0..255)")
        rec[field][rows] = coef * np.power(10.0, -mag)


def _cable_info(sec: Section, rows: np.ndarray, rec: HealthRecords) -> None:
    rec["present"][rows] = 1
    for field, names in _CABLE_TEXT.items():
        i = _column(sec, *names)
        if i is not None:
            rec[field][rows] = _texts(sec, i)
    passive = np.zeros(len(rows), bool)
    i = _column(sec, *_CABLE_KIND)
    if i is not None:
        kinds = _texts(sec, i).astype(str)
        for text in set(kinds.tolist()):  # a few distinct values
            kind = normalize_cable(text)
            rec["cable"][rows[kinds == text]] = code("cable", kind)
            passive |= (kinds == text) & (kind == "dac")
    for field, names in _CABLE_NUM.items():
        for name in names:  # the first column that gives a value wins, row by row (lengths by fibre type)
            i = _column(sec, name)
            if i is None:
                continue
            col = rec[field]
            vals = _numbers(sec, i)
            unset = np.isnan(col[rows])
            col[rows[unset]] = vals[unset]
    lanes = []  # (column, field, lane number)
    alarms = np.zeros(len(rows), np.int64)
    warns = np.zeros(len(rows), np.int64)
    for i, header in enumerate(sec.header):
        flat = _flat(header)
        m = _LANE.fullmatch(flat)
        if m is not None:
            direction, number, what = (m.group(1), m.group(2), m.group(3)) if m.group(1) else \
                (m.group(4), m.group(6), m.group(5))
            lanes.append((i, "bias" if what == "bias" else f"{direction}_power", int(number)))
            continue
        m = _THRESHOLD.fullmatch(flat)
        if m is not None:
            side = m.group(2) or m.group(4) or m.group(6)
            word = m.group(1) or m.group(5) or "alarm"  # no kind named (RXPowerHighThresh): the module's alarm limit
            kind = "warning" if word.startswith("warn") else "alarm"
            if side is not None:
                field = TH_FIELD_OF[m.group(3)]
                if field in ("rx_power_th", "tx_power_th", "bias_th"):  # a zero word: a limit the module has not
                    values = _powers(sec, i) if field != "bias_th" else _numbers(sec, i)
                    values = np.where(np.isneginf(values) | (values == 0), np.nan, values)
                else:
                    values = _numbers(sec, i)
                rec[field][rows, TH_COLUMN_OF[(side, kind)]] = values
            continue
        if _FLAG.fullmatch(flat) and "thresh" not in flat:
            raised = _raised(sec, i)
            if "alarm" in flat:
                alarms += raised
            else:
                warns += raised
    if lanes:
        base = 0 if min(n for _, _, n in lanes) == 0 else 1  # ibdiagnet numbers lanes from 1
        for i, field, number in lanes:
            k = number - base
            if k >= LANES:
                raise FormatError(sec.source, sec.line + 1, f"section CABLE_INFO, {sec.header[i].strip()}: lane "
                                                            f"{number} beyond the {LANES} lanes a port has")
            values = _numbers(sec, i) if field == "bias" else _powers(sec, i)
            rec[field][rows, k] = np.where(passive, np.nan, values)
    rec["flag_alarms"][rows] = np.minimum(alarms, np.iinfo(np.int16).max)
    rec["flag_warnings"][rows] = np.minimum(warns, np.iinfo(np.int16).max)


def _powers(sec: Section, i: int) -> np.ndarray:
    """An optical power column in dBm: a plain integer is the module's word in 0.1 uW (SFF-8636, CMIS: 0 is no light,
    -inf dBm); a cell with its unit is read as written."""
    cells = _cells(sec, i)
    if not cells.size:
        return np.zeros(0)
    uniq, inverse = np.unique(cells, return_inverse=True)
    values = []
    for u in uniq.tolist():
        if _PLAIN.fullmatch(u):
            mw = int(u) * 1e-4
            values.append(10 * math.log10(mw) if mw > 0 else -math.inf)
        else:
            values.append(_parse_cell(u, False))
    bad = next((k for k, v in enumerate(values) if v is None), None)
    if bad is not None:
        row = int(np.flatnonzero(inverse == bad)[0])
        raise FormatError(sec.source, int(sec.lines[row]), f"section {sec.name}, {sec.header[i].strip()}: "
                                                           f"{uniq[bad][:40]!r} is not a power")
    return np.array(values, dtype=np.float64)[inverse.reshape(-1)]


def _raised(sec: Section, i: int) -> np.ndarray:
    """Flags raised per row by a flag column: the set bits of a number (one per lane), or yes/no words."""
    cells = _cells(sec, i)
    words = np.char.lower(cells)
    yes, no = np.isin(words, ("yes", "on", "true")), np.isin(words, ("no", "off", "false"))
    if yes.any() or no.any():
        sub = Section(sec.name, sec.line, sec.header, [sec.rows[k] for k in np.flatnonzero(~yes & ~no).tolist()],
                      sec.lines[~yes & ~no], sec.source)
        v = np.zeros(cells.size)
        v[~yes & ~no] = _numbers(sub, i) if sub.rows else []
        v[yes] = 1
    else:
        v = _numbers(sec, i)
    mask = np.where(np.isfinite(v) & (v > 0) & (v < 2.0 ** 62), v, 0).astype(np.int64)
    return np.bitwise_count(mask) + ((v < 0) | (v >= 2.0 ** 62)).astype(np.int64)  # -1, inf: raised


def _pm_info(sec: Section, rows: np.ndarray, rec: HealthRecords) -> None:
    for field, names in (("link_down", ("linkdownedcounterext", "linkdownedcounter")),
                         ("link_recovery", ("linkerrorrecoverycounterext", "linkerrorrecoverycounter"))):
        for name in names:  # the 64-bit counter where the device has it, else the 8/32-bit one
            i = _column(sec, name)
            if i is not None:
                col = rec[field]
                unset = np.isnan(col[rows])
                col[rows[unset]] = _numbers(sec, i, counter=True)[unset]


def _each(values: np.ndarray, table: dict, fill: int) -> np.ndarray:
    """``table`` applied to an integer array (a few distinct values), ``fill`` where it has no entry."""
    uniq, inverse = np.unique(values, return_inverse=True)
    return np.array([table.get(int(v), fill) for v in uniq.tolist()], dtype=np.int64)[inverse.reshape(-1)]


def _port_rates(sec: Section, ports: _Ports, rec: HealthRecords) -> None:
    pos, ok = ports.lookup(sec)
    if not ok.any():
        return
    rows = pos[ok]

    def ints(*names: str) -> np.ndarray | None:
        i = _column(sec, *(_flat(n) for n in names))
        if i is None:
            return None
        v = _numbers(sec, i)[ok]
        return np.where(np.isfinite(v) & (np.abs(v) < 2.0 ** 62), v, -1).astype(np.int64)

    width = ints("LinkWidthActv", "LinkWidthActive")
    if width is not None:
        lanes = _each(width, LINK_WIDTH, -1)
        rec["lanes"][rows] = lanes
    speed = np.full(rows.size, -1, np.int64)
    for names, table in ((("LinkSpeedActv", "LinkSpeedActive"), LINK_SPEED),
                         (("LinkSpeedExtActv", "LinkSpeedExtActive"), EXT_SPEED),
                         (("LinkSpeedExt2Actv", "LinkSpeedExtActv2", "LinkSpeedExtActive2"), EXT2_SPEED)):
        v = ints(*names)
        if v is not None:
            hit = _each(v, table, -1)
            speed = np.where(hit >= 0, hit, speed)
    known = speed >= 0
    names = np.array(SPEEDS, dtype=object)[np.where(known, speed, 0)]
    rec["speed"][rows[known]] = [code("speed", n) for n in names[known].tolist()]
    rec["lane_gbps"][rows[known]] = [LANE_GBPS[n] for n in names[known].tolist()]
    phy, state = ints("PortPhyState"), ints("PortState")
    if phy is not None:
        rec["up"][rows] = np.where(phy < 0, -1, phy == 5)
    elif state is not None:
        rec["up"][rows] = np.where(state < 0, -1, state == 4)


def _fec(sec: Section, ports: _Ports, rec: HealthRecords) -> None:
    i = next((k for k, h in enumerate(sec.header) if re.fullmatch(r"fec(?:mode)?(?:actv|active)", _flat(h))), None)
    if i is None:
        return
    pos, ok = ports.lookup(sec)
    cells = _cells(sec, i)[ok]
    rows = pos[ok]
    unset = rec["fec"][rows] == 0
    for text in set(cells.tolist()):
        sel = (cells == text) & unset
        rec["fec"][rows[sel]] = code("fec", _fec_name(text))


def _fec_name(text: str) -> str:
    """PortInfoExtended ``FECModeActive`` (a number) or a FEC's name as a table name (``""``: not known)."""
    if re.fullmatch(r"0x[0-9a-fA-F]{1,8}|\d{1,9}", text):
        return IB_FEC_MODES.get(int(text, 0), "")
    return normalize_fec(text)


def _names(sec: Section, rec: HealthRecords) -> None:
    guid = sec.ints(sec.col("NodeGUID", "NodeGuid"), "NodeGUID", 1, dtype=np.uint64)
    desc = np.array(sec.col("NodeDesc"), dtype=object)
    order = np.argsort(guid, kind="stable")
    pos = np.minimum(np.searchsorted(guid[order], rec.guid), max(guid.size - 1, 0))
    if not guid.size:
        return
    hit = guid[order][pos] == rec.guid
    rec.name[hit] = desc[order][pos][hit]
