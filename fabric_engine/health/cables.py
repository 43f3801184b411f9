"""Read ``ibdiagnet2.cables`` (``ibdiagnet --get_cable_info``): one block per cable end.

A block starts with a header naming the port, between lines of dashes::

    -------------------------------------------------------
    Port=1 Lid=0x0003 GUID=0x0002c90300a1b2c0 Port Name=sw01/P1
    -------------------------------------------------------

followed by ``Key: value`` lines. Keys are matched without regard to case or spacing: Vendor, OUI, PN,
SN, Rev, Length (``3 m``), Identifier/Type, FW Version, Temperature (``45C``), Voltage (``3.28 V`` or
``3280 mV``), per-lane ``RX<n> Power``, ``TX<n> Bias``, ``TX<n> Power`` (dBm; mW converted), module
thresholds (``High Temperature Alarm Threshold``, ``Low Voltage Warning Threshold``, ``RX Power High
Alarm Threshold`` ...) and flags (keys with ``Alarm`` or ``Warning`` and no ``Threshold``: a non-zero
value is a raised flag, per-lane values comma separated). Keys not listed are skipped silently, as
ibdiagnet versions add fields. A value line outside a block, or a header naming a port out of range, is an
error naming its line; captured-terminal noise is skipped with warnings.
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
_TH = re.compile(r"(?:(high|low)\s+)?(temperature|voltage|rx\s*power|tx\s*power|tx\s*bias|bias)\s+(?:(high|low)\s+)?"
                 r"(alarm|warning)\s+threshold", re.I)


def looks_like(text: str) -> bool:
    """Whether ``text`` holds an ``ibdiagnet2.cables`` block header."""
    return re.search(r"^Port=\d+\s+Lid=\S+\s+GUID=0x", text[:1 << 20], re.M) is not None


def _value(text: str, unit_hint: str = "") -> float:
    m = re.match(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-zA-Z]*)", text)
    if m is None:
        return np.nan
    x = float(m.group(1))
    unit = m.group(2).lower()
    if unit == "mw":  # optical power in mW -> dBm
        return 10 * math.log10(x) if x > 0 else -np.inf
    if unit == "mv":
        return x / 1000.0
    if unit == "ua":
        return x / 1000.0
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
    flat = k.replace(" ", "")
    if "threshold" in k:
        m = _TH.fullmatch(k)
        if m:
            side = (m.group(1) or m.group(3) or "").lower()
            col = TH_COLUMN_OF.get((side, m.group(4).lower()))
            field = TH_FIELD_OF[m.group(2).lower().replace(" ", "")]
            if col is not None:
                th = v.setdefault(field, [np.nan] * 4)
                th[col] = _value(value)
        return
    if ("alarm" in k or "warning" in k) and "threshold" not in k:
        raised = sum(1 for x in re.split(r"[,\s]+", value) if x and x.lower() not in ("0", "0x0", "no", "n/a", "off"))
        v["flag_alarms" if "alarm" in k else "flag_warnings"] += raised
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
        if value and value.upper() != "N/A":
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
    elif flat == "voltage":
        v["voltage"] = _value(value)
