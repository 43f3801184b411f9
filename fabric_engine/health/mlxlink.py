"""Read ``mlxlink`` (NVIDIA MFT / mstflint) output, as text and as ``--json``, IB and Ethernet ports alike.

Text, as ``MlxlinkCmdPrint`` prints it: an empty line, a section title, a line of dashes as long as the
title, then one record per line, the key padded to the record's width and ``": "`` before the value
(``State                              : Active``). Values may be coloured: the ANSI escape comes before
the value and the colour reset at the start of the next line (removed here). A value the link does not
give (link down, cable unplugged) is ``N/A``; per-lane values are comma separated; module readings carry
the module's thresholds as ``45 [-5..75]``. Errors and notes go to stderr (``-E- ...``, ``-W- ...``).

JSON (``--json``): ``{"result": {"output": {<section title>: {<key>: value}}}, "status": {...}}``; arrays
(per-lane values, the FEC histogram's bins) are ``{"values": [...]}``. Several runs may be concatenated.

``mlxlink --cable --ddm`` (the module pages' monitors as ``mlxcables`` shows them too) prints Cable DDM
Information (temperature, voltage, RX/TX power and TX bias per channel), DDM Flags, Channel <n> Flags
(alarm/warning high/low per quantity) and DDM Thresholds (four rows: temperature, voltage, RX power, TX
power, TX bias); these are read into the same module fields.

Sections read: Operational Info (State, Speed, Width, FEC), Troubleshooting Info (Status Opcode,
Recommendation; opcode 1024 is an unplugged cable), Physical Counters and BER Info (Time Since Last Clear
[Min], Symbol Errors/BER, Effective Physical Errors/BER, Raw Physical Errors Per Lane, Raw Physical BER
[Per Lane], Link Down Counter, Link Error Recovery Counter), Histogram of FEC Errors, Module Info
(Identifier, Cable Technology/Type, Vendor Name, Part and Serial Number, Rev, FW Version, Transfer
Distance, temperature, voltage, bias and RX/TX power per lane with thresholds, fault flags). Other
sections are skipped whole. mlxlink prints no device name: a port is named by ``-d``/``-p`` of the command
line when the capture shows it, else by the file name, and numbered by Port Info's Label Port if shown.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..errors import FormatError
from ._lines import Skipper, lines_of
from .records import LANE_GBPS, Builder, HealthRecords
from .thresholds import normalize_cable, normalize_fec

__all__ = ["read", "read_json", "looks_like", "looks_like_json"]

_COMMAND = re.compile(r"\bmlxlink\b(.*)")
_DEVICE = re.compile(r"(?:-d|--device)[ =](\S+)")
_PORT = re.compile(r"(?:-p|--port)[ =](\d{1,3})\b")
_THRESH = re.compile(r"(.*?)\s*\[\s*([-+0-9.eE]+|N/A)\s*\.\.\s*([-+0-9.eE]+|N/A)\s*\]")
_UP_STATES = {"active", "linkup", "up"}
UNPLUGGED_OPCODE = 1024
_FLAG_KEYS = ("Module FW Fault", "DataPath FW Fault", "Tx Fault [per lane]", "Tx LOS [per lane]",
              "Tx CDR LOL [per lane]", "Rx LOS [per lane]", "Rx CDR LOL [per lane]", "Tx Adaptive EQ Fault [per lane]")
_SECTIONS = ("Operational Info", "Troubleshooting Info", "Physical Counters and BER Info", "Histogram of FEC Errors",
             "Module Info", "Port Info", "Cable DDM Information", "DDM Flags", "DDM Thresholds")
_CHANNEL_FLAGS = re.compile(r"Channel(?: \d+)? Flags")
# ``mlxlink --cable --ddm`` threshold rows: temperature, voltage, RX power, TX power, TX bias, in that order
_DDM_ROWS = (("High alarm threshold", 3), ("High warning threshold", 2), ("Low warning threshold", 1),
             ("Low alarm threshold", 0))
_DDM_COLUMNS = ("temp_th", "voltage_th", "rx_power_th", "tx_power_th", "bias_th")
MAX_VALUE_CHARS = 4096


def looks_like(text: str) -> bool:
    """Whether ``text`` is mlxlink text output (an Operational Info or BER or Module section)."""
    pattern = r"^(Operational Info|Physical Counters and BER Info|Module Info|Cable DDM Information)\s*\n-{8,}"
    return re.search(pattern, text, re.M) is not None


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is mlxlink ``--json`` output."""
    head = text.lstrip()[:4096]
    return head.startswith(("{", "[")) and '"result"' in text[:1 << 20] and '"output"' in text[:1 << 20]


def _num(text: str) -> float:
    t = text.strip()
    if not t or t.upper() in ("N/A", "NA", "-"):
        return np.nan
    m = re.match(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf", t)
    if m is None:
        return np.nan
    return float(m.group(0))


def _lanes(text: str) -> list[float]:
    t = text.strip()
    if not t or t.upper() == "N/A":
        return []
    return [_num(v) for v in t.split(",")]


def _port_values(records: dict[str, dict[str, object]], source: str, line: int | None) -> tuple[dict, int | None]:
    """Health fields from the records of one run, by section; also Port Info's label port."""
    v: dict = {}
    op = records.get("Operational Info", {})
    state = str(op.get("State", "")).strip()
    if state:
        v["up"] = 1 if state.lower().replace(" ", "") in _UP_STATES else 0
    width = _num(str(op.get("Width", "")))
    if not np.isnan(width):
        if width not in (1, 2, 4, 8, 12):
            raise FormatError(source, line, f"Width {op.get('Width')!r} is not a link width (1, 2, 4, 8 or 12 lanes)")
        v["lanes"] = int(width)
    speed = str(op.get("Speed", "")).strip()
    m = re.fullmatch(r"IB-(\w+)", speed)
    if m and m.group(1) in LANE_GBPS:
        v["speed"], v["lane_gbps"] = m.group(1), LANE_GBPS[m.group(1)]
    elif (m := re.fullmatch(r"(\d+)G(?:_(\d+)X)?", speed)) is not None:
        v["speed"] = f"ETH-{m.group(1)}G"
        lanes = int(m.group(2)) if m.group(2) else v.get("lanes")
        if lanes:
            v["lane_gbps"] = int(m.group(1)) / lanes
    fec = str(op.get("FEC", ""))
    if fec:
        v["fec"] = normalize_fec(fec)
    tr = records.get("Troubleshooting Info", {})
    opcode = _num(str(tr.get("Status Opcode", "")))
    if not np.isnan(opcode):
        if not 0 <= opcode < 1 << 31:
            raise FormatError(source, line, f"Status Opcode {tr.get('Status Opcode')!r} out of range")
        v["status_opcode"] = int(opcode)
    if tr.get("Recommendation"):
        v["recommendation"] = str(tr["Recommendation"]).strip()
    ber = records.get("Physical Counters and BER Info", {})
    minutes = _num(str(ber.get("Time Since Last Clear [Min]", "")))
    v["window_s"] = minutes * 60.0
    for key, field in (("Symbol Errors", "sym_errors"), ("Symbol BER", "sym_ber"),
                       ("Effective Physical Errors", "eff_errors"), ("Effective Physical BER", "eff_ber"),
                       ("Raw Physical BER", "raw_ber"), ("Link Down Counter", "link_down"),
                       ("Link Error Recovery Counter", "link_recovery")):
        if key in ber:
            v[field] = _num(str(ber[key]))
    if "Raw Physical Errors Per Lane" in ber:
        lanes = _lanes(str(ber["Raw Physical Errors Per Lane"]))
        v["raw_errors_lane"] = lanes
        v["raw_errors"] = float(np.nansum(lanes)) if lanes and not np.isnan(lanes).all() else np.nan
    if "Raw Physical BER Per Lane" in ber:
        v["raw_ber_lane"] = _lanes(str(ber["Raw Physical BER Per Lane"]))
    hist = records.get("Histogram of FEC Errors", {})
    bins = []
    for b in range(16):
        cell = str(hist.get(f"Bin {b}", ""))
        bins.append(_num(re.split(r"\]|,", cell)[-1]) if cell else np.nan)
    if any(not np.isnan(b) for b in bins):
        v["hist"] = bins
    _module(records.get("Module Info", {}), v)
    _ddm(records, v)
    if v.get("status_opcode") == UNPLUGGED_OPCODE:
        v["present"] = 0
    label = _num(str(records.get("Port Info", {}).get("Label Port", "")))
    if not np.isnan(label) and not 0 <= label <= 255:
        raise FormatError(source, line, f"Label Port {label:g} out of range")
    return v, None if np.isnan(label) else int(label)


def _module(mod: dict[str, object], v: dict) -> None:
    if not mod:
        return
    ident = str(mod.get("Identifier", "")).strip()
    v["present"] = 0 if ident.upper() in ("", "N/A") else 1
    for key, field in (("Identifier", "identifier"), ("Vendor Name", "vendor"), ("Vendor Part Number", "pn"),
                       ("Vendor Serial Number", "sn"), ("Rev", "rev"), ("FW Version", "fw")):
        text = str(mod.get(key, "")).strip()
        if text and text.upper() != "N/A":
            v[field] = text
    cable = normalize_cable(str(mod.get("Cable Technology", ""))) or normalize_cable(str(mod.get("Cable Type", "")))
    if cable:
        v["cable"] = cable
    v["length_m"] = _num(str(mod.get("Transfer Distance [m]", "")))
    for key, field, scale in (("Temperature [C]", "temp", 1.0), ("Voltage [mV]", "voltage", 1e-3),
                              ("Bias Current [mA]", "bias", 1.0), ("Rx Power Current [dBm]", "rx_power", 1.0),
                              ("Tx Power Current [dBm]", "tx_power", 1.0)):
        text = str(mod.get(key, "")).strip()
        m = _THRESH.fullmatch(text)
        reading = m.group(1) if m else text
        vals = [x * scale for x in _lanes(reading)]
        if field in ("temp", "voltage"):
            v[field] = vals[0] if vals else np.nan
        else:
            v[field] = vals
        if m:  # mlxlink shows the module's alarm thresholds (PDDR module info *_low_th/*_high_th)
            v[f"{field}_th"] = [_num(m.group(2)) * scale, np.nan, np.nan, _num(m.group(3)) * scale]
    raised, seen = 0, False
    for key in _FLAG_KEYS:
        text = str(mod.get(key, "")).strip()
        if not text or text.upper() == "N/A":
            continue
        seen = True
        raised += sum(1 for x in text.split(",") if x.strip() not in ("0", "No", "N/A", "", "0x0"))
    if seen:
        v["flag_alarms"] = raised


def _ddm(records: dict[str, dict[str, object]], v: dict) -> None:
    """``mlxlink --cable --ddm`` (``MlxlinkCablesCommander::prepareDDMOutput``): the module's readings, its
    alarm/warning flags per quantity and channel, and its four threshold rows."""
    info = records.get("Cable DDM Information")
    if info is None:
        return
    v["present"] = 1
    v["temp"] = _num(str(info.get("Temperature", "")))  # "45C"
    v["voltage"] = _num(str(info.get("Voltage", "")))  # "3.3000V"
    for key, field in (("RX Power", "rx_power"), ("TX Power", "tx_power"), ("TX Bias", "bias")):
        v[field] = _lanes(str(info.get(key, "")))  # "-1.234dBm     ,..."; bias in mA
    th = records.get("DDM Thresholds", {})
    for key, col in _DDM_ROWS:
        for field, value in zip(_DDM_COLUMNS, _lanes(str(th.get(key, ""))), strict=False):
            v.setdefault(field, [np.nan] * 4)[col] = value
    alarms = warns = 0
    for title, group in records.items():
        if title == "DDM Flags" or _CHANNEL_FLAGS.fullmatch(title):
            for key, value in group.items():
                raised = _num(str(value)) not in (0.0,) and not np.isnan(_num(str(value)))
                alarms += raised and " Alarm " in f" {key} "
                warns += raised and " Warning " in f" {key} "
    v["flag_alarms"], v["flag_warnings"] = int(alarms), int(warns)


def read(text: str, source: str = "mlxlink", warnings: list | None = None) -> HealthRecords:
    """The ports of mlxlink text output (one or more runs, each starting at its Operational Info)."""
    warnings = warnings if warnings is not None else []
    lines = lines_of(text, source, warnings)
    skip = Skipper(source, "mlxlink", warnings)
    out = Builder(source)
    default_name = source.rsplit("/", 1)[-1]
    command: tuple[str | None, int | None] = (None, None)
    runs: list[tuple[int, tuple[str | None, int | None], dict]] = []
    section: str | None = None
    keep = False
    i = 0
    while i < len(lines):
        ln = lines[i]
        stripped = ln.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not stripped:
            i += 1
            continue
        if nxt and set(nxt) == {"-"} and len(nxt) == len(stripped) and ":" not in stripped:
            section = stripped
            keep = section in _SECTIONS or _CHANNEL_FLAGS.fullmatch(section) is not None
            # a run starts at its Operational Info, or where a section repeats (a run without one)
            if section == "Operational Info" or not runs or keep and section in runs[-1][2]:
                runs.append((i + 1, command, {}))
            if keep:
                runs[-1][2][section] = {}
            i += 2
            continue
        key, colon, value = stripped.partition(":")
        if colon and key.strip() and (not value or value[0] == " ") and section is not None:
            if keep:
                key, value = key.strip(), value.strip()
                if len(value) > MAX_VALUE_CHARS:
                    raise FormatError(source, i + 1, f"{key}: value longer than {MAX_VALUE_CHARS} characters")
                runs[-1][2][section][key] = value
            i += 1
            continue
        cmd = _COMMAND.search(stripped)
        before = len(warnings)
        skip.skip(i + 1, ln)
        if cmd is not None and len(warnings) > before and warnings[-1]["reason"] == "shell prompt":
            d, p = _DEVICE.search(cmd.group(1)), _PORT.search(cmd.group(1))
            command = (d.group(1) if d else None, int(p.group(1)) if p else None)
        section = None
        i += 1
    skip.finish()
    for line, (device, port), records in runs:
        values, label = _port_values(records, source, line)
        out.add(0, device or default_name, port if port is not None else label if label is not None else 1,
                values, line)
    return out.build()


def read_json(text: str, source: str = "mlxlink --json", warnings: list | None = None) -> HealthRecords:
    """The ports of ``mlxlink --json`` output (one object per run; several may be concatenated)."""
    warnings = warnings if warnings is not None else []
    out = Builder(source)
    decoder = json.JSONDecoder()
    pos, n = 0, len(text)
    default_name = source.rsplit("/", 1)[-1]
    index = 0
    while True:
        while pos < n and text[pos] in " \t\r\n\ufeff":
            pos += 1
        if pos >= n:
            break
        line = text.count("\n", 0, pos) + 1
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise FormatError(source, text.count("\n", 0, exc.pos) + 1, f"not mlxlink JSON: {exc.msg}") from None
        except RecursionError:
            raise FormatError(source, line, "JSON nested too deeply: not mlxlink output") from None
        except ValueError as exc:  # an integer of more than 4,300 digits
            raise FormatError(source, line, f"not mlxlink JSON: {exc}") from None
        docs = doc if isinstance(doc, list) else [doc]
        for d in docs:
            output = d.get("result", {}).get("output") if isinstance(d, dict) and isinstance(d.get("result"), dict) \
                else None
            if not isinstance(output, dict):
                raise FormatError(source, line, "mlxlink JSON without result.output: not mlxlink --json output")
            records: dict[str, dict[str, object]] = {}
            for title, group in output.items():
                if title not in _SECTIONS and not _CHANNEL_FLAGS.fullmatch(title) or not isinstance(group, dict):
                    continue
                records[title] = {k: _json_value(val) for k, val in group.items()}
            status = d.get("status", {})
            if isinstance(status, dict) and status.get("code") not in (None, 0):
                warnings.append({"line": line, "text": str(status.get("message", ""))[:120],
                                 "reason": "mlxlink reported an error for this run (status code "
                                           f"{status.get('code')}); the sections it printed are read"})
            values, label = _port_values(records, source, line)
            out.add(0, default_name if len(docs) == 1 and index == 0 else f"{default_name}#{index + 1}",
                    label if label is not None else 1, values, line)
            index += 1
    return out.build()


def _json_value(value: object) -> str:
    if isinstance(value, dict) and "values" in value:
        vals = value["values"]
        return ",".join(str(x).strip() for x in vals) if isinstance(vals, list) else str(vals)
    return str(value)
