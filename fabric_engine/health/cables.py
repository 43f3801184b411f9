"""Read ``ibdiagnet2.cables`` (``ibdiagnet --get_cable_info``): one block per cable end.

ibutils2 writes the file (``COMBINED_CABLE_DUMP_FILE``, its ``CableRecord::ToFileStream``); its source is not
public, so the layout here is the one NVIDIA's documentation of the cable plugin shows ("Cable diagnostics":
``--get_cable_info``, ``--cable_info_disconnected``), with the quantities ``CableRecord`` keeps. A block starts
with a header naming the port between lines of dashes, then a blank line::

    -------------------------------------------------------
    Port=1 Lid=0x00a4 GUID=0xf45214030046a0a1 Port Name=sw01/U1/P1
    -------------------------------------------------------

followed by ``Key: value`` lines. Keys are matched without regard to case or spacing: Vendor, OUI, PN, SN,
Rev, Length (``2 m``; km converted), Type (the transmitter technology, ``Copper cable- unequalized``) or
Identifier, FW Version, Temperature (``45C``; ``N/A`` without a monitor), Voltage (``3.28 V`` or ``3280 mV``),
per lane ``RX<n> Power`` and ``TX<n> Power`` as ibdiagnet prints them, in mW and dBm (``0.000 mW, -999.999
dBm``: the dBm figure is read, -999.999 being how it prints no light, -inf), ``TX<n> Bias`` (``6.750 mA``).
Module thresholds and flags, which the documented example does not show, are read under either naming:
spelled out (``High Temperature Alarm Threshold``, ``RX Power Low Warning Threshold``) or as ibdiagnet names
its CSV columns (``AlarmTemperatureHighThresh``, ``RXPowerHighThresh``: no kind named is the alarm limit;
flags ``HighTemperatureAlarm``, ``LowRX1PowerWarning``: a non-zero value, or each set bit of a lane mask, or
``Yes``, is a raised flag). A passive copper cable (Type unequalized, or passive) has no monitors: its zero
readings (``0.000 mW``, ``0.000 mA``) are not given, nor is any power or bias limit of zero. Keys not listed
(PowerClass, NominalBitrate, CDREnableTxRx, Attenuation(5,7,12), RX power type ...) are skipped, as ibdiagnet
versions add fields. A value line outside a block, or a header naming a port out of range, is an error naming
its line; captured-terminal noise is skipped with warnings.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..errors import FormatError
from ..topology.limits import MAX_NODE_PORTS
from ._lines import Skipper, lines_of
from .records import LANES, TH_COLUMN_OF, TH_FIELD_OF, Builder, HealthRecords
from .thresholds import normalize_cable

__all__ = ["read", "looks_like"]

_HEADER = re.compile(r"Port=(\d{1,9})\s+Lid=(0x[0-9A-Fa-f]+|\d+)\s+GUID=(0x[0-9A-Fa-f]{1,16})(?:\s+Port Name=(.*))?")
_LANE = re.compile(r"(rx|tx)\s*(\d+)\s*(power|bias)", re.I)
# a threshold key with its spaces removed: kind, side and quantity in any of the orders the tools use
_TH = re.compile(r"(alarm|warning|warn)?(high|low)?(temperature|temp|voltage|vcc|rxpower|txpower|txbias|bias)"
                 r"(high|low)?(alarm|warning|warn)?(high|low)?(?:threshold|thresh)")
_PAIR = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-zA-Z]*)")
#: How ibdiagnet prints the dBm of no light (0 mW).
_NO_LIGHT_DBM = -999.0


def looks_like(text: str) -> bool:
    """Whether ``text`` holds an ``ibdiagnet2.cables`` block header."""
    return re.search(r"^Port=\d+\s+Lid=\S+\s+GUID=0x", text[:1 << 20], re.M) is not None


def _value(text: str) -> float:
    """A reading in the base unit (C, V, dBm, mA, m); NaN where not given. Of ``0.812 mW, -0.904 dBm`` the dBm."""
    pairs = _PAIR.findall(text)
    if not pairs:
        return np.nan
    by_unit = {unit.lower(): float(x) for x, unit in pairs}
    if "dbm" in by_unit:
        return -np.inf if by_unit["dbm"] <= _NO_LIGHT_DBM else by_unit["dbm"]
    x, unit = float(pairs[0][0]), pairs[0][1].lower()
    if unit in ("mw", "uw"):  # optical power in mW (uW) -> dBm
        mw = x / 1000.0 if unit == "uw" else x
        return 10 * math.log10(mw) if mw > 0 else -np.inf
    if unit in ("mv", "ua"):
        return x / 1000.0
    if unit == "km":
        return x * 1000.0
    return x


def read(text: str, source: str = "ibdiagnet2.cables", warnings: list | None = None) -> HealthRecords:
    """The cable ends of an ``ibdiagnet2.cables`` file."""
    warnings = warnings if warnings is not None else []
    lines = lines_of(text, source, warnings)
    skip = Skipper(source, "ibdiagnet", warnings)
    out = Builder(source)
    block: dict | None = None

    def close() -> None:
        if block is not None:
            _no_monitors(block["v"])
            out.add(block["guid"], block["name"], block["port"], block["v"], block["line"])

    for i, ln in enumerate(lines, 1):
        s = ln.strip()
        if not s or set(s) <= {"-", "="}:
            continue
        m = _HEADER.fullmatch(s)
        if m is not None:
            close()
            port = int(m.group(1))
            if port > MAX_NODE_PORTS:
                raise FormatError(source, i, f"port {port} out of range 0..{MAX_NODE_PORTS}")
            block = {"guid": int(m.group(3), 16), "name": (m.group(4) or "").strip(), "port": port, "line": i,
                     "v": {"present": 1, "flag_alarms": 0, "flag_warnings": 0}}
            continue
        key, colon, value = s.partition(":")
        if not colon or not key[:1].isalpha() or len(key) > 80 or block is None:
            skip.skip(i, ln)
            continue
        _field(block["v"], key.strip(), value.strip(), source, i)
    close()
    skip.finish()
    return out.build()


def _field(v: dict, key: str, value: str, source: str, line: int) -> None:
    k = " ".join(key.lower().split())
    flat = re.sub(r"[^a-z0-9]", "", k)
    m = _TH.fullmatch(flat)
    if m is not None:
        side = m.group(2) or m.group(4) or m.group(6)
        word = m.group(1) or m.group(5) or "alarm"  # no kind named (RXPowerHighThresh): the module's alarm limit
        if side is not None:
            th = v.setdefault(TH_FIELD_OF[m.group(3)], [np.nan] * 4)
            th[TH_COLUMN_OF[(side, "warning" if word.startswith("warn") else "alarm")]] = _value(value)
        return
    if "thresh" in flat:
        return
    if "alarm" in flat or "warning" in flat:
        v["flag_alarms" if "alarm" in flat else "flag_warnings"] += _raised(value)
        return
    lane = _LANE.fullmatch(re.sub(r"\s+", " ", k.replace("lane", "")).strip())
    if lane is not None:
        n = int(lane.group(2))
        index = n - 1 if n >= 1 else 0  # ibdiagnet numbers lanes from 1
        if index >= LANES:
            raise FormatError(source, line, f"{key}: lane {n} beyond the {LANES} lanes a port has")
        field = "bias" if lane.group(3).lower() == "bias" else f"{lane.group(1).lower()}_power"
        lanes = v.setdefault(field, [np.nan] * LANES)
        lanes[index] = _value(value)
        return
    text_fields = {"vendor": "vendor", "pn": "pn", "sn": "sn", "rev": "rev", "fwversion": "fw",
                   "identifier": "identifier", "type": "identifier"}
    if flat in text_fields:
        if value and value.upper() not in ("N/A", "NA"):
            v[text_fields[flat]] = value
            if flat in ("type", "identifier"):
                cable = normalize_cable(value)
                if cable:
                    v["cable"] = cable
        return
    if flat == "length":
        v["length_m"] = _value(value)
    elif flat == "temperature":
        v["temp"] = _value(value)
    elif flat in ("voltage", "supplyvoltage"):
        v["voltage"] = _value(value)


def _raised(value: str) -> int:
    """Flags raised by one value: per lane values comma or space separated, each a 0/1, a yes/no or a lane mask."""
    n = 0
    for x in re.split(r"[,\s]+", value.strip().lower()):
        if x in ("", "0", "0x0", "no", "n/a", "na", "off", "false"):
            continue
        try:
            n += max(1, int(x, 0).bit_count())  # a number: each set bit a lane's flag
        except ValueError:
            n += 1  # yes, on, true ...
    return n


def _no_monitors(v: dict) -> None:
    """A passive cable's zero readings and limits are not given (it has no monitors); nor is a zero power or bias
    limit of any module (one it does not set)."""
    if v.get("cable") == "dac":
        for field in ("rx_power", "tx_power", "bias"):
            v.pop(field, None)
    for field in ("rx_power_th", "tx_power_th", "bias_th"):
        if field in v:
            v[field] = [np.nan if x == 0 or x == -np.inf else x for x in v[field]]
