"""Read ``ibswinfo`` output: the vitals of an unmanaged switch (stanford-rc/ibswinfo, ``ibswinfo.sh``).

ibswinfo reads the switch's registers with MFT's ``mlxreg`` (MGIR firmware and uptime, MSGI part and serial
numbers, MSPS power supplies, MTMP temperatures, MFCR/MFSM fans, FORE fan alerts) and prints one record a line
with ``out_kv``: ``printf "%-18s %s %s"`` - the key padded to 18, then ``|`` (the full output) or ``:`` (one
category, ``-o inventory|status|vitals``), then the value; a record with no value is not printed. The full
output starts with a line of 49 ``=``, the node description after a space, and another line of ``=``; lines
of 49 ``-`` separate its blocks. Keys read (full output / ``-o`` output):

* ``part number``/``part_number``, ``serial number``/``serial``, ``product name``/``product_name``,
  ``revision``, ``PSID``, ``GUID``, ``firmware version``/``fw_version`` (``%d.%04d.%04d``), ``CPLD``/``cpld``,
  ``ports``, ``node_desription`` (sic, ``-o inventory``);
* ``uptime (d-h:m:s)`` (``%dd-%02d:%02d:%02d``) or ``uptime (sec)``;
* per power supply N: ``PSUN status`` then ``     P/N``, ``     S/N``, ``     DC power``, ``     fan status``,
  ``     power (W)`` (indented keys belong to the PSU above), or ``psuN.status``, ``psuN.dc``, ``psuN.fan``,
  ``psuN.power (W)``, ``psuN.part_number``, ``psuN.serial``; status values ``OK`` or ``ERROR`` (a PSU whose
  present bit is not set is ``ERROR`` too); the fan status is absent on managed switches; no power is printed
  when the register reads 0. A :class:`~.vitals.Psu` is ``ok`` unless its status is ``ERROR`` (``-o vitals``
  prints no status); a PSU's fan becomes a :class:`~.vitals.Fan` ``PSU<N> fan`` without rpm;
* ``temperature (C)``/``cur.temp (C)`` and ``max temp (C)``/``max.temp (C)`` of the ASIC (MTMP sensor 0,
  read /8), ``warn threshold (C)`` as ``<low>/<high> (low/high)`` (MTMP ``temperature_threshold_lo/hi``);
  with ``-T`` one ``QSFP#NN (C)``/``QSFP#NN.temp (C)`` per module;
* ``fan status``/``fans`` (``OK``, or ``ERROR`` when FORE reports a fan under or over its limit; it does not say which
  fan) and ``fan#N (rpm)``/``fan#N.speed (rpm)`` per active tachometer; a fan at 0 rpm is not ``ok``.

``error: ...`` lines (ibswinfo's ``err`` on stderr, which stops it) are the device's errors; ``warning: ...``
lines, MFT's ``-E-``/``-W-`` messages and terminal noise are skipped with a warning. A capture may hold several
runs: a run starts at the ``=`` header, where a key repeats, or at a command line naming another ``-d``
(the ``-o`` outputs of one switch make one record); a run is named by its node description, else
its GUID, else the ``-d`` of the command line the capture shows, else the file name.
"""

from __future__ import annotations

import re

from ..captured import noise
from ..errors import FormatError
from ..health._lines import Skipper, lines_of
from ._text import MAX_FIELD_CHARS, firmware, float_of, guid_of, int_of
from .vitals import DeviceVitals, Fan, Psu, Temperature

__all__ = ["read", "looks_like", "FAN_STATUS_ERROR", "MAX_FANS", "MAX_MODULES"]

#: The error a run gets when its ``fan status`` is ``ERROR`` (FORE names no fan).
FAN_STATUS_ERROR = "fan status: ERROR (a fan under or over its speed limit; ibswinfo does not say which)"
#: Most fans, PSUs and module sensors one switch may have (more is not a switch's output).
MAX_FANS, MAX_PSUS, MAX_MODULES = 64, 16, 256
MAX_UPTIME_S = 100 * 365 * 86_400
_KV = re.compile(r"(\S.*?|\s+\S.*?)\s*([|:]) (.*)")
_RULE = re.compile(r"(?:={10,}|-{10,})")
_COMMAND = re.compile(r"\bibswinfo(?:\.sh)?\b(.*)")
_DEVICE = re.compile(r"-d\s*(\S+)")
_UPTIME = re.compile(r"(\d{1,6})d-(\d\d):(\d\d):(\d\d)")
_THRESH = re.compile(r"(-?\d+)/(-?\d+) \(low/high\)")
_PSU = re.compile(r"(?:PSU(\d{1,2}) (status)|psu(\d{1,2})\.(status|dc|fan|power \(W\)|part_number|serial))")
_FAN = re.compile(r"fan#(\d{1,3})(?: \(rpm\)|\.speed \(rpm\))")
_QSFP = re.compile(r"QSFP#(\d{1,3})(?: \(C\)|\.temp \(C\))")
_PSU_SUB = {"P/N": "part_number", "S/N": "serial", "DC power": "dc", "fan status": "fan", "power (W)": "power (W)"}
_TEXT = {"part number": "part_number", "part_number": "part_number", "serial number": "serial", "serial": "serial",
         "product name": "product", "product_name": "product", "revision": "revision", "PSID": "psid",
         "firmware version": "firmware", "fw_version": "firmware", "CPLD": "cpld", "cpld": "cpld",
         "node_desription": "name", "ports": "ports", "GUID": "guid"}
_NUM = {"temperature (C)": "temp", "cur.temp (C)": "temp", "max temp (C)": "max_temp", "max.temp (C)": "max_temp",
        "uptime (sec)": "uptime", "uptime (d-h:m:s)": "uptime", "warn threshold (C)": "threshold",
        "fan status": "fan_status", "fans": "fan_status"}


def looks_like(text: str) -> bool:
    """Whether ``text`` is ibswinfo output (its header, or two of its keys as it pads them)."""
    head = text[:1 << 14]
    if re.search(r"^={49}\r?\n [^\n]*\r?\n={49}\r?$", head, re.M):
        return True
    keys = re.findall(r"^(?:part number|PSID|firmware version|fw_version|uptime \((?:sec|d-h:m:s)\)|fan status"
                      r"|cur\.temp \(C\)|psu\d\.status|fan#\d+(?:\.speed)? \(rpm\)|node_desription)\s+[|:] ",
                      head, re.M)
    return len(set(keys)) >= 2


class _Run:
    def __init__(self, line: int, device: str | None) -> None:
        self.line, self.device, self.desc = line, device, None
        self.text: dict[str, str] = {}
        self.nums: dict[str, str] = {}
        self.psus: dict[int, dict[str, str]] = {}
        self.fans: dict[int, str] = {}
        self.modules: dict[int, str] = {}
        self.errors: list[str] = []
        self.keys: set[str] = set()
        self.psu: int | None = None  # the PSU whose indented keys follow


def read(text: str, source: str = "ibswinfo", warnings: list | None = None) -> list[DeviceVitals]:
    """The switches of ibswinfo output (full or ``-o`` output, one or several runs)."""
    warnings = warnings if warnings is not None else []
    lines = lines_of(text, source, warnings)
    skip = Skipper(source, "ibswinfo", warnings)
    runs: list[_Run] = []
    device: str | None = None
    i = 0
    while i < len(lines):
        ln = lines[i].rstrip()
        lineno = i + 1
        if not ln.strip():
            i += 1
            continue
        if _RULE.fullmatch(ln):
            nxt = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
            after = lines[i + 2].rstrip() if i + 2 < len(lines) else ""
            if ln[0] == "=" and (not nxt or nxt[0] == " ") and after.startswith("=") and _RULE.fullmatch(after):
                name = nxt.strip()
                if len(name) > MAX_FIELD_CHARS:
                    raise FormatError(source, lineno + 1, f"node description longer than {MAX_FIELD_CHARS}")
                if not runs or runs[-1].keys or runs[-1].errors:
                    runs.append(_Run(lineno, device))
                runs[-1].line, runs[-1].desc = lineno, name or None
                i += 3
                continue
            i += 1
            continue
        stripped = ln.strip()
        if stripped.startswith("error: "):
            if not runs:
                runs.append(_Run(lineno, device))
            runs[-1].errors.append(stripped[7:7 + MAX_FIELD_CHARS])
            i += 1
            continue
        if stripped.startswith("warning: "):
            warnings.append({"line": lineno, "text": stripped[:120], "reason": "ibswinfo warning (stderr): skipped"})
            i += 1
            continue
        m = _KV.fullmatch(ln)
        key = m.group(1) if m else None
        if m is not None and (_known(key) or key[0] == " " and key.strip() in _PSU_SUB):
            _record(runs, lineno, key, m.group(3).strip(), source, device)
            i += 1
            continue
        cmd = _COMMAND.search(stripped)
        before = len(warnings)
        if m is not None and m.group(2) == "|" and noise(ln) is None:
            warnings.append({"line": lineno, "text": stripped[:120], "reason": "ibswinfo field not read: skipped"})
        else:
            skip.skip(lineno, ln)
        if cmd is not None and len(warnings) > before and warnings[-1]["reason"] == "shell prompt":
            d = _DEVICE.search(cmd.group(1))
            device = d.group(1) if d else None
            if runs and (runs[-1].keys or runs[-1].errors) and runs[-1].device != device:
                runs.append(_Run(lineno + 1, device))  # another switch (one switch's -o runs are one record)
        i += 1
    skip.finish()
    default = source.rsplit("/", 1)[-1]
    return [_vitals(r, source, default) for r in runs if r.keys or r.errors]


def _known(key: str) -> bool:
    return key in _TEXT or key in _NUM or _PSU.fullmatch(key) is not None or _FAN.fullmatch(key) is not None \
        or _QSFP.fullmatch(key.strip()) is not None


def _record(runs: list[_Run], lineno: int, key: str, value: str, source: str, device: str | None) -> None:
    if len(value) > MAX_FIELD_CHARS:
        raise FormatError(source, lineno, f"{key.strip()}: value longer than {MAX_FIELD_CHARS} characters")
    if key[0] == " ":  # an indented PSU key: belongs to the PSU record above
        if not runs or runs[-1].psu is None:
            raise FormatError(source, lineno, f"{key.strip()!r} outside a PSU record")
        run = runs[-1]
        field = _PSU_SUB[key.strip()]
        run.psus[run.psu][field] = value
        return
    qsfp = _QSFP.fullmatch(key.strip())
    psu = _PSU.fullmatch(key)
    fan = _FAN.fullmatch(key)
    slot = f"psu{psu.group(1) or psu.group(3)}.{psu.group(2) or psu.group(4)}" if psu else key.strip()
    if not runs or slot in runs[-1].keys:  # a key seen again: the next run
        runs.append(_Run(lineno, device))
    run = runs[-1]
    run.keys.add(slot)
    run.psu = None
    if key in _TEXT:
        run.text[_TEXT[key]] = value
    elif key in _NUM:
        run.nums[_NUM[key]] = value
        run.nums[_NUM[key] + "@"] = str(lineno)
    elif psu is not None:
        n = int(psu.group(1) or psu.group(3))
        if n not in run.psus and len(run.psus) >= MAX_PSUS:
            raise FormatError(source, lineno, f"more than {MAX_PSUS} power supplies")
        fields = run.psus.setdefault(n, {"@": str(lineno)})
        fields[psu.group(2) or psu.group(4)] = value
        if psu.group(1):
            run.psu = n
    elif fan is not None:
        if len(run.fans) >= MAX_FANS:
            raise FormatError(source, lineno, f"more than {MAX_FANS} fans")
        run.fans[int(fan.group(1))] = f"{value}@{lineno}"
    elif qsfp is not None:
        if len(run.modules) >= MAX_MODULES:
            raise FormatError(source, lineno, f"more than {MAX_MODULES} module sensors")
        run.modules[int(qsfp.group(1))] = f"{value}@{lineno}"


def _status(value: str | None, what: str, source: str, line: int) -> bool | None:
    if value is None:
        return None
    if value not in ("OK", "ERROR"):
        raise FormatError(source, line, f"{what} {value[:40]!r}: ibswinfo prints OK or ERROR")
    return value == "OK"


def _vitals(run: _Run, source: str, default: str) -> DeviceVitals:
    nums = run.nums

    def at(key: str) -> int:
        return int(nums.get(key + "@", run.line))

    errors = list(run.errors)
    uptime = None
    if "uptime" in nums:
        m = _UPTIME.fullmatch(nums["uptime"])
        uptime = (int(m.group(1)) * 86_400 + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4))) \
            if m else int_of(nums["uptime"], source, at("uptime"), "uptime", MAX_UPTIME_S)
        if uptime > MAX_UPTIME_S:
            raise FormatError(source, at("uptime"), f"uptime {uptime} s is more than a century")
    temps = []
    warn = None
    if "threshold" in nums:
        m = _THRESH.fullmatch(nums["threshold"])
        if m is None:
            raise FormatError(source, at("threshold"), f"warn threshold {nums['threshold'][:40]!r}: not "
                                                       "<low>/<high> (low/high)")
        warn = float_of(m.group(2), source, at("threshold"), "warn threshold", -60, 200)
    if "temp" in nums or "max_temp" in nums or warn is not None:
        temps.append(Temperature(
            "ASIC", float_of(nums["temp"], source, at("temp"), "temperature", -60, 200) if "temp" in nums else None,
            float_of(nums["max_temp"], source, at("max_temp"), "max temp", -60, 200) if "max_temp" in nums else None,
            warn, None))
    for n in sorted(run.modules):
        value, line = run.modules[n].rsplit("@", 1)
        temps.append(Temperature(f"QSFP#{n:02d}", float_of(value, source, int(line), "module temperature", -60, 200),
                                 None, None, None))
    fans = []
    for n in sorted(run.fans):
        value, line = run.fans[n].rsplit("@", 1)
        rpm = int_of(value, source, int(line), f"fan#{n} speed", 100_000)
        fans.append(Fan(f"fan#{n}", rpm, rpm > 0))
        if rpm == 0:
            errors.append(f"fan#{n}: 0 rpm")
    if _status(nums.get("fan_status"), "fan status", source, at("fan_status")) is False:
        errors.append(FAN_STATUS_ERROR)
    psus = []
    for n in sorted(run.psus):
        f = run.psus[n]
        line = int(f["@"])
        ok = _status(f.get("status"), f"PSU{n} status", source, line)
        dc = _status(f.get("dc"), f"PSU{n} DC power", source, line)
        fan_ok = _status(f.get("fan"), f"PSU{n} fan status", source, line)
        watts = float_of(f["power (W)"], source, line, f"PSU{n} power", 0, 100_000) if "power (W)" in f else None
        psus.append(Psu(f"PSU{n}", ok is not False, dc, watts))
        if fan_ok is not None:
            fans.append(Fan(f"PSU{n} fan", None, fan_ok))
        errors.extend(f"PSU{n} {what}: ERROR" for what, v in (("status", ok), ("DC power", dc), ("fan", fan_ok))
                      if v is False)
    text = run.text
    guid = guid_of(text["guid"], source, run.line) if text.get("guid") else None
    name = run.desc or text.get("name") or (f"0x{guid:016x}" if guid else None) or run.device or default
    fw = firmware(text["firmware"]) if text.get("firmware") else None
    return DeviceVitals(guid, name, f"{source}:{run.line}", text.get("part_number"), text.get("serial"),
                        text.get("psid"), fw, text.get("product"), uptime, tuple(fans), tuple(psus),
                        tuple(temps), tuple(errors))
