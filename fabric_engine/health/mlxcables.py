"""Read ``mlxcables`` (NVIDIA MFT) module pages: ``mlxcables -d <cable> -q`` and ``--DDM``, one block per cable.

mlxcables is not open source. Its query page is read as the MFT manual prints it ("mlxcables - Cables Tool" for
the options; "MTUSB Cable Board" for a whole ``-q`` output: ``Querying Cables ....``, ``Cable #1:``, ``Cable name``,
``FW version``, ``FW Dev ID``, ``FW GW version``, ``-------- Cable EEPROM --------``, ``Identifier : QSFP+ (0dh)``,
``Technology : 850 nm VCSEL (00h)``, ``Compliance``, ``Wavelength``, ``OUI``, ``Vendor``, ``Serial number``,
``Part number``, ``Revision``, ``Temperature : 31 C``, ``Length : 1 m``; keys padded to one column). No manual
shows a ``--DDM`` page: it is read as mstflint's ``mlxlink --cable --ddm`` prints the same monitors from the same
cable pages (``MlxlinkCablesCommander::prepareDDMOutput``: ``Temperature`` ``%dC``, ``Voltage`` ``%.4fV``,
``Channels``, then ``RX Power``/``TX Power`` ``%.3fdBm`` and ``TX Bias`` ``%.3fmA`` one column per channel,
comma separated; ``setPrintDDMFlagsSection``: ``<quantity> Alarm high`` ... ``Alarm low`` under ``DDM Flags`` and
``Channel <n> Flags``; ``getDDMThresholdRow``: four threshold rows in the order of the ``Thresholds`` row), and
per-channel keys (``RX Power Ch1``) or mW/mV units as other releases may print them.
Keys are matched without regard to case or spacing, so releases that add or rename a field read alike:

* a cable starts at ``Cable #<n>:`` (or at the first line of a capture without one) and is named by its
  ``Cable name`` (``mt4123_pciconf0_cable_0``: device ``mt4123_pciconf0``, port 1 = cable index + 1), else
  by the ``-d`` of the command line in the capture, else by the file name; pages of one cable (its query
  and its DDM) become one row;
* query fields: Identifier, Technology (cable type), Vendor, Serial number, Part number, Revision, FW
  version, Length (``3 m``), Temperature (``41 C``; ``N/A`` for a passive copper cable);
* DDM: Temperature, Voltage (``3.2979 V`` or mV), per channel RX Power / TX Power (dBm; mW converted) and
  TX Bias (mA), either one key with the channels comma separated (``-1.02dBm ,-0.85dBm ...``) or one key
  per channel (``RX Power Ch1``, ``Rx1 Power``, ``Channel 1 RX Power``); thresholds as rows (``High alarm
  threshold : 80C ,3.630V ,...`` in the order of the ``Thresholds :`` row) or one key each (``Temperature
  High Alarm Threshold``); flags (a key with Alarm/Warning and no Threshold, under ``DDM Flags`` or
  ``Channel <n> Flags``): a non-zero value is a raised flag.

Lines the grammar does not read are terminal noise (a prompt, ``-E-``/``-W-`` messages: skipped with a
warning), tool banners (``Querying Cables ....``, ``>> No FW data to show``, lines of dashes) or an
error naming the file and line. Keys not listed are skipped, as MFT versions add fields.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..errors import FormatError
from ._lines import Skipper, lines_of
from .records import LANES, TH_COLUMN_OF, TH_FIELD_OF, Builder, HealthRecords, merge
from .thresholds import normalize_cable

__all__ = ["read", "looks_like"]

_COMMAND = re.compile(r"\bmlxcables\b(.*)")
_DEVICE = re.compile(r"(?:-d|--dev)[ =](\S+)")
_CABLE = re.compile(r"Cable\s*#\s*(\d{1,3})\s*:?")
_CABLE_NAME = re.compile(r"(.+?)_cable_(\d{1,3})")
_BANNER = re.compile(r"Querying Cables?\b.*|>>.*|-+(?:\s*[\w ]+\s*-+)?|Cable DDM\s*:?|DDM\s*:?|Thresholds?\s*:?")
_NUMBER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z]*)\s*")
_LANE_KEY = re.compile(r"(?:channel|ch|lane)?(\d{1,2})?(rx|tx)(\d{1,2})?(power|bias)(?:current)?(?:ch|channel|lane)?"
                       r"(\d{1,2})?")
_THRESHOLD_KEY = re.compile(r"(high|low)?(temperature|temp|voltage|vcc|rxpower|txpower|txbias|bias)(high|low)?"
                            r"(alarm|warning)(high|low)?threshold")
_THRESHOLD_ROW = re.compile(r"(high|low)(alarm|warning)threshold")
_TEXT = {"vendor": "vendor", "vendorname": "vendor", "serialnumber": "sn", "vendorserialnumber": "sn",
         "partnumber": "pn", "vendorpartnumber": "pn", "revision": "rev", "rev": "rev", "fwversion": "fw",
         "firmwareversion": "fw", "identifier": "identifier"}
_NOT_GIVEN = ("", "N/A", "NA", "-")
MAX_VALUE_CHARS = 4096


def looks_like(text: str) -> bool:
    """Whether ``text`` is mlxcables output: its ``Cable name`` field or its query banner (a session that only
    ran ``mlxcables`` without either is read when named as such: :func:`read`)."""
    return re.search(r"^\s*(?:Cable name\s*:|Querying Cables)", text[:1 << 20], re.M) is not None


def _flat(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def _value(text: str) -> float:
    """A reading in the base unit (C, V, dBm, mA, m); NaN where not given."""
    t = text.strip()
    if t.upper() in _NOT_GIVEN:
        return math.nan
    m = _NUMBER.match(t)
    if m is None:
        return math.nan
    x, unit = float(m.group(1)), m.group(2).lower()
    if unit == "mw":
        return 10 * math.log10(x) if x > 0 else -math.inf
    if unit in ("mv", "ua"):
        return x / 1000.0
    return x


def _values(text: str) -> list[float]:
    return [_value(v) for v in text.split(",")] if text.strip() else []


class _Cable:
    """One cable's fields as they are read."""

    def __init__(self, line: int, index: int | None) -> None:
        self.line, self.index = line, index
        self.name: str | None = None
        self.v: dict = {"present": 1}
        self.th_order: list[str] = []  # the fields of the threshold rows' columns, from the "Thresholds" row
        self.alarms = self.warnings = 0
        self.flags_seen = False

    def lanes(self, field: str) -> list[float]:
        return self.v.setdefault(field, [math.nan] * LANES)

    def th(self, field: str) -> list[float]:
        return self.v.setdefault(field, [math.nan] * 4)


def _field(c: _Cable, key: str, value: str, source: str, line: int) -> None:
    flat = _flat(key)
    if flat == "cablename":
        c.name = value or None
        return
    if flat in _TEXT:
        if value.upper() not in _NOT_GIVEN:
            c.v[_TEXT[flat]] = value
        return
    if flat in ("technology", "cabletechnology", "cabletype", "type"):
        cable = normalize_cable(value) or ("dac" if "copper" in value.lower() and "active" not in value.lower()
                                           else "")
        if cable:
            c.v["cable"] = cable
        return
    if flat in ("length", "cablelength", "lengthm"):
        c.v["length_m"] = _value(value)
        return
    if flat in ("temperature", "moduletemperature", "temperaturec"):
        c.v["temp"] = _value(value)
        return
    if flat in ("voltage", "supplyvoltage", "vcc"):
        c.v["voltage"] = _value(value)
        return
    if flat in ("thresholds", "threshold"):
        c.th_order = [TH_FIELD_OF.get(_flat(v), "") for v in value.split(",")]
        return
    m = _THRESHOLD_ROW.fullmatch(flat)
    if m is not None:
        for field, x in zip(c.th_order or ["temp_th", "voltage_th", "rx_power_th", "tx_power_th", "bias_th"],
                            _values(value), strict=False):
            if field:
                c.th(field)[TH_COLUMN_OF[(m.group(1), m.group(2))]] = x
        return
    m = _THRESHOLD_KEY.fullmatch(flat)
    if m is not None:
        side = m.group(1) or m.group(3) or m.group(5)
        if side is not None:
            c.th(TH_FIELD_OF[m.group(2)])[TH_COLUMN_OF[(side, m.group(4))]] = _value(value)
        return
    if "alarm" in flat or "warning" in flat:
        raised = sum(1 for x in value.split(",") if x.strip() and x.strip().upper() not in ("0", "0X0", "NO", "N/A",
                                                                                              "OFF", "FALSE"))
        c.flags_seen = True
        if "alarm" in flat:
            c.alarms += raised
        else:
            c.warnings += raised
        return
    m = _LANE_KEY.fullmatch(flat)
    if m is not None:
        field = "bias" if m.group(4) == "bias" else f"{m.group(2)}_power"
        number = m.group(1) or m.group(3) or m.group(5)
        if number is None:  # one key, the channels comma separated
            vals = _values(value)
            if len(vals) > LANES:
                raise FormatError(source, line, f"{key}: {len(vals)} channels, more than the {LANES} lanes a port has")
            c.lanes(field)[: len(vals)] = vals
            return
        n = int(number)
        if not 1 <= n <= LANES:
            raise FormatError(source, line, f"{key}: channel {n} out of range 1..{LANES}")
        c.lanes(field)[n - 1] = _value(value)


def read(text: str, source: str = "mlxcables", warnings: list | None = None) -> HealthRecords:
    """The cables of mlxcables ``-q``/``--DDM`` output (one or more cables, one or more runs)."""
    warnings = warnings if warnings is not None else []
    lines = lines_of(text, source, warnings)
    skip = Skipper(source, "mlxcables", warnings)
    cables: list[tuple[_Cable, str | None]] = []
    device: str | None = None
    current: _Cable | None = None
    for i, ln in enumerate(lines, 1):
        s = ln.strip()
        if not s:
            continue
        m = _CABLE.fullmatch(s)
        if m is not None:
            current = _Cable(i, int(m.group(1)))
            cables.append((current, device))
            continue
        key, colon, value = s.partition(":")
        if colon and key.strip() and key[:1].isalpha() and len(key) <= 80 and (not value or value[0] in " \t"):
            value = value.strip()
            if len(value) > MAX_VALUE_CHARS:
                raise FormatError(source, i, f"{key.strip()}: value longer than {MAX_VALUE_CHARS} characters")
            if current is None or _flat(key) == "cablename" and current.name is not None:
                current = _Cable(i, None)  # a run without "Cable #n", or the next run's first cable
                cables.append((current, device))
            _field(current, key.strip(), value, source, i)
            continue
        nxt = lines[i].strip() if i < len(lines) else ""
        if _BANNER.fullmatch(s) or nxt and set(nxt) == {"-"} and re.fullmatch(r"[A-Za-z][\w /()-]*", s):
            continue  # a banner, or a section title over its line of dashes ("DDM Flags", "Channel 1 Flags")
        before = len(warnings)
        skip.skip(i, ln)
        cmd = _COMMAND.search(s)
        if cmd is not None and len(warnings) > before and warnings[-1]["reason"] == "shell prompt":
            d = _DEVICE.search(cmd.group(1))
            device = d.group(1) if d else None
            current = None  # a new command: its output starts a new cable
    skip.finish()
    out = Builder(source)
    default_name = source.rsplit("/", 1)[-1]
    for c, dev in reversed(cables):  # the later page of a cable first: its readings win
        if len(c.v) == 1 and c.name is None:  # a "Cable #n" header with nothing read under it
            continue
        name, port = _identity(c.name or dev, c.index, default_name)
        if c.flags_seen:
            c.v["flag_alarms"], c.v["flag_warnings"] = min(c.alarms, 32767), min(c.warnings, 32767)
        if "temp" in c.v and np.isnan(c.v["temp"]) and "temp_th" not in c.v and "rx_power" not in c.v:
            del c.v["temp"]  # a passive cable: no monitors
        out.add(0, name, port, c.v, c.line)
    return merge([out.build()])  # a cable's query and DDM pages, or two runs of one cable: one row, the last winning


def _identity(cable: str | None, index: int | None, default: str) -> tuple[str, int]:
    """(device, port) of a cable: ``<device>_cable_<k>`` is port k + 1; ``Cable #n`` numbers from 1."""
    if cable:
        m = _CABLE_NAME.fullmatch(cable.rsplit("/", 1)[-1])
        if m is not None:
            return m.group(1), int(m.group(2)) + 1
        return cable, index if index is not None else 1
    return default, index if index is not None else 1
