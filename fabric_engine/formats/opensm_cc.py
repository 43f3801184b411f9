"""OpenSM congestion control: the ``congestion_control`` and ``cc_*`` options of ``opensm.conf``.

The syntax is what OpenSM's own reader accepts (``opensm/osm_subnet.c`` of linux-rdma/opensm:
``osm_subn_parse_conf_file`` and the ``opts_parse_*`` functions its ``opt_tbl`` names) and what
``opensm -c FILE`` writes (``osm_subn_output_conf``)::

    congestion_control TRUE                       # exactly TRUE turns it on (opts_parse_boolean)
    cc_sw_cong_setting_control_map 0x1F           # numbers as C strtoul base 0: 31, 0x1f, 037
    cc_sw_cong_setting_victim_mask 0x...          # up to 64 hex digits, 0x optional (opts_parse_256bit)
    cc_sw_cong_setting_credit_starvation_return_delay 0:0   # shift:multiplier (opts_parse_cct_entry)
    cc_ca_cong_setting_ccti_timer 3 150           # SL then value, once per SL (parse_ca_cong_common)
    cc_cct 0:0,1:1,1:2                            # shift:multiplier,...  or (null) (opts_parse_cc_cct)

A line's first word is the option, the rest (trimmed, quotes removed: ``clean_val``) its value; ``#``
starts a comment. ``cc_key`` and ``cc_max_outstanding_mads`` (MAD transport, not the settings) and every
option that is not congestion control are ignored. OpenSM keeps at most ``OSM_CCT_ENTRY_MAX`` = 128 table
entries (``include/opensm/osm_subnet.h``) and silently drops the rest; here more is an error, as are other
inputs OpenSM skips with only a log line (a bad hex digit, an SL of 16 or more) or reads as ``FALSE``
(``congestion_control true``), an option given twice (OpenSM keeps the last) and an unknown ``cc_`` option.

>>> cc = parse_cc_conf("congestion_control TRUE\\ncc_ca_cong_setting_ccti_timer 3 150\\ncc_cct 0:0,1:1\\n")
>>> cc.enabled, cc.ccti_timer[3], cc.cct
(True, 150, ((0, 0), (1, 1)))
>>> parse_cc_conf(write_cc_conf(cc)) == cc
True
"""

from __future__ import annotations

import re

from ..backpressure.cc_params import N_SLS, CongestionControl
from ..errors import FabricEngineError, FormatError

__all__ = ["parse_cc_conf", "write_cc_conf", "OPENSM_CCT_ENTRY_MAX", "SCALAR_OPTIONS", "PER_SL_OPTIONS"]

#: Entries of ``cc_cct`` OpenSM keeps (``OSM_CCT_ENTRY_MAX``, include/opensm/osm_subnet.h).
OPENSM_CCT_ENTRY_MAX = 128
#: Bits of the switch port masks (``IB_CC_PORT_MASK_DATA_SIZE`` = 32 bytes, include/iba/ib_types.h).
MASK_BITS = 256

#: Scalar options -> :class:`CongestionControl` field, in the order ``opensm -c`` writes them.
SCALAR_OPTIONS: dict[str, str] = {
    "congestion_control": "enabled",
    "cc_sw_cong_setting_control_map": "sw_control_map",
    "cc_sw_cong_setting_victim_mask": "victim_mask",
    "cc_sw_cong_setting_credit_mask": "credit_mask",
    "cc_sw_cong_setting_threshold": "threshold",
    "cc_sw_cong_setting_packet_size": "packet_size",
    "cc_sw_cong_setting_credit_starvation_threshold": "cs_threshold",
    "cc_sw_cong_setting_credit_starvation_return_delay": "cs_return_delay",
    "cc_sw_cong_setting_marking_rate": "marking_rate",
    "cc_ca_cong_setting_port_control": "ca_port_control",
    "cc_ca_cong_setting_control_map": "ca_control_map",
    "cc_cct": "cct",
}
#: Per-SL options (``cc_ca_cong_setting_<name> <sl> <value>``) -> field.
PER_SL_OPTIONS: dict[str, str] = {
    "cc_ca_cong_setting_ccti_timer": "ccti_timer",
    "cc_ca_cong_setting_ccti_increase": "ccti_increase",
    "cc_ca_cong_setting_trigger_threshold": "trigger_threshold",
    "cc_ca_cong_setting_ccti_min": "ccti_min",
}
#: ``cc_*`` options OpenSM knows that carry no setting of the fabric (read and ignored).
IGNORED_OPTIONS = frozenset({"cc_key", "cc_max_outstanding_mads"})
#: Largest value OpenSM's reader takes per option (the C type it parses into: opts_parse_uint8/net16/net32);
#: :meth:`CongestionControl.validate` then applies the IBA ranges.
_C_MAX = {"sw_control_map": 0xFFFFFFFF, "threshold": 0xFF, "packet_size": 0xFF, "cs_threshold": 0xFF,
          "marking_rate": 0xFFFF, "ca_port_control": 0xFFFF, "ca_control_map": 0xFFFF, "ccti_timer": 0xFFFF,
          "ccti_increase": 0xFF, "trigger_threshold": 0xFF, "ccti_min": 0xFF}
# C strtoul(s, NULL, 0): hex with 0x, octal with a leading 0, else decimal (opts_strtoul).
_C_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
_HEX = re.compile(r"[0-9a-fA-F]+")


def _number(text: str, what: str, hi: int, source: str, line: int) -> int:
    shown = text[:24]
    if not _C_NUMBER.fullmatch(text):
        raise FormatError(source, line, f"{what}: {shown!r} is not a number (decimal, 0x hex or 0 octal)")
    value = int(text, 16) if text[:2] in ("0x", "0X") else int(text, 8) if text.startswith("0") else int(text)
    if value > hi:
        raise FormatError(source, line, f"{what} {shown}: must be 0..{hi}")
    return value


def _mask(text: str, what: str, source: str, line: int) -> int:
    digits = text[2:] if text[:2] in ("0x", "0X") else text
    if not _HEX.fullmatch(digits):
        raise FormatError(source, line, f"{what}: {text[:24]!r} is not a hex bit mask")
    if len(digits) > MASK_BITS // 4:
        raise FormatError(source, line, f"{what}: {len(digits)} hex digits, at most {MASK_BITS // 4} "
                                        f"({MASK_BITS} ports)")
    return int(digits, 16)


def _entry(text: str, what: str, source: str, line: int) -> tuple[int, int]:
    shift, sep, mult = text.partition(":")
    if not sep:
        raise FormatError(source, line, f"{what} {text.strip()[:24]!r}: write shift:multiplier")
    return (_number(shift.strip(), f"{what} shift", 0xFF, source, line),
            _number(mult.strip(), f"{what} multiplier", 0xFFFF, source, line))


def _cct(text: str, source: str, line: int) -> tuple[tuple[int, int], ...]:
    if text == "(null)":
        return ()
    items = [s for s in text.split(",") if s.strip()]  # strtok: empty items vanish
    if len(items) > OPENSM_CCT_ENTRY_MAX:
        raise FormatError(source, line, f"cc_cct has {len(items)} entries; OpenSM keeps at most "
                                        f"{OPENSM_CCT_ENTRY_MAX}")
    return tuple(_entry(s, f"cc_cct entry {i}", source, line) for i, s in enumerate(items))


def _value(field: str, key: str, text: str, source: str, line: int):
    if field == "enabled":
        if text not in ("TRUE", "FALSE"):
            raise FormatError(source, line, f"{key} {text[:24]!r}: write TRUE or FALSE (OpenSM reads anything "
                                            "but TRUE as FALSE)")
        return text == "TRUE"
    if field in ("victim_mask", "credit_mask"):
        return _mask(text, key, source, line)
    if field == "cs_return_delay":
        return _entry(text, key, source, line)
    if field == "cct":
        return _cct(text, source, line)
    return _number(text, key, _C_MAX[field], source, line)


def _clean(value: str) -> str:
    """The value as OpenSM's ``clean_val`` leaves it: trimmed, one pair of enclosing quotes removed."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value


def parse_cc_conf(text: str, source: str = "opensm.conf") -> CongestionControl:
    """The congestion control settings of an ``opensm.conf`` text; options not given keep OpenSM's defaults.

    Raises :class:`FormatError` naming ``source``, the line and the option for a value OpenSM would not take,
    a value out of its IBA range, an SL outside 0..15 and an option (or an SL of a per-SL option) given twice.
    """
    found: dict[str, object] = {}
    seen: dict[tuple[str, int | None], int] = {}
    field_line: dict[str, int] = {}
    per_sl = {f: [0] * N_SLS for f in PER_SL_OPTIONS.values()}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        parts = raw.split("#", 1)[0].split(None, 1)
        if not parts:
            continue
        key, value = parts[0], _clean(parts[1] if len(parts) > 1 else "")
        if key in SCALAR_OPTIONS:
            sl = None
        elif key in PER_SL_OPTIONS:
            words = value.split()
            if len(words) != 2:
                raise FormatError(source, lineno, f"{key}: write the SL and the value ({key} <sl> <value>)")
            sl = _number(words[0], f"{key} SL", 0xFF, source, lineno)
            if sl >= N_SLS:
                raise FormatError(source, lineno, f"{key}: SL {words[0][:24]} is out of range 0..{N_SLS - 1}")
            value = words[1]
        elif key.startswith("cc_") and key not in IGNORED_OPTIONS:
            raise FormatError(source, lineno, f"unknown congestion control option {key[:60]!r}")
        else:
            continue
        where = (key, sl)
        if where in seen:
            what = key if sl is None else f"{key} of SL {sl}"
            raise FormatError(source, lineno, f"{what} is given twice (first on line {seen[where]})")
        seen[where] = lineno
        if not value:
            raise FormatError(source, lineno, f"{key} needs a value")
        if sl is None:
            field = SCALAR_OPTIONS[key]
            found[field] = _value(field, key, value, source, lineno)
        else:
            field = PER_SL_OPTIONS[key]
            per_sl[field][sl] = _number(value, f"{key} of SL {sl}", _C_MAX[field], source, lineno)
        field_line.setdefault(field, lineno)
        field_line[f"{field}/{sl}"] = lineno
    cc = CongestionControl(**found, **{f: tuple(v) for f, v in per_sl.items()})
    _validate(cc, source, field_line)
    return cc


def _validate(cc: CongestionControl, source: str, field_line: dict[str, int]) -> None:
    """:meth:`CongestionControl.validate` as a :class:`FormatError` naming the line of the offending option."""
    try:
        cc.validate(source)
    except FormatError:
        raise
    except FabricEngineError as exc:
        message = str(exc).removeprefix(f"{source}: ")
        line = None
        for key, field in [*SCALAR_OPTIONS.items(), *PER_SL_OPTIONS.items()]:
            if message.startswith(key + " "):
                sl = re.match(r"of SL (\d+)", message[len(key) + 1:])
                line = field_line.get(f"{field}/{sl.group(1)}" if sl else field)
                break
        raise FormatError(source, line, message) from None


def _hex_mask(value: int) -> str:
    return f"0x{value:0{MASK_BITS // 4}X}"


def write_cc_conf(cc: CongestionControl) -> str:
    """The ``congestion_control`` and ``cc_*`` lines of ``opensm.conf`` for ``cc``, as ``opensm -c`` writes them.

    Per-SL lines are written for the SLs with a non-zero setting (``osm_subn_output_conf`` does the same).
    Raises :class:`FabricEngineError` for settings out of range and :class:`ValueError` for a table OpenSM
    would cut.
    """
    cc.validate("congestion control")
    if len(cc.cct) > OPENSM_CCT_ENTRY_MAX:
        raise ValueError(f"cc_cct has {len(cc.cct)} entries; OpenSM keeps at most {OPENSM_CCT_ENTRY_MAX}")
    lines = [
        f"congestion_control {'TRUE' if cc.enabled else 'FALSE'}",
        f"cc_sw_cong_setting_control_map 0x{cc.sw_control_map:X}",
        f"cc_sw_cong_setting_victim_mask {_hex_mask(cc.victim_mask)}",
        f"cc_sw_cong_setting_credit_mask {_hex_mask(cc.credit_mask)}",
        f"cc_sw_cong_setting_threshold 0x{cc.threshold:02X}",
        f"cc_sw_cong_setting_packet_size {cc.packet_size}",
        f"cc_sw_cong_setting_credit_starvation_threshold 0x{cc.cs_threshold:02X}",
        f"cc_sw_cong_setting_credit_starvation_return_delay {cc.cs_return_delay[0]}:{cc.cs_return_delay[1]}",
        f"cc_sw_cong_setting_marking_rate {cc.marking_rate}",
        f"cc_ca_cong_setting_port_control 0x{cc.ca_port_control:04X}",
        f"cc_ca_cong_setting_control_map 0x{cc.ca_control_map:04X}",
    ]
    for sl in range(N_SLS):
        values = [getattr(cc, field)[sl] for field in PER_SL_OPTIONS.values()]
        if any(values):
            lines += [f"{key} {sl} {v}" for key, v in zip(PER_SL_OPTIONS, values, strict=True)]
    lines.append("cc_cct " + (",".join(f"{s}:{m}" for s, m in cc.cct) if cc.cct else "(null)"))
    return "\n".join(lines) + "\n"

