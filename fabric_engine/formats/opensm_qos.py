"""OpenSM QoS: the ``qos_*`` options of ``opensm.conf`` and the ``qos-policy.conf`` file.

``opensm.conf`` carries the VL tables (OpenSM man page, section QOS CONFIGURATION)::

    qos TRUE
    qos_max_vls 8
    qos_high_limit 4
    qos_vlarb_high 0:4,1:0          # VL:weight pairs, IBA 7.6.9, up to 64 entries
    qos_vlarb_low 0:0,1:4,2:4
    qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7    # VL of SL 0..15; VL 15 drops the SL

Options may also carry a port-type prefix (``qos_ca_``, ``qos_rtr_``, ``qos_sw0_``,
``qos_swe_``); :func:`parse_opensm_conf` keeps them apart.

``qos-policy.conf`` (``doc/QoS_management_in_OpenSM.txt``) maps path queries to QoS
levels. :func:`write_policy` emits the full-policy form: one ``qos-level`` per
service class (``sl``, ``mtu-limit``, ``rate-limit`` as IBTA codes), a mandatory
``DEFAULT`` level, and ``qos-match-rules`` that pick a level by P_Key.

Examples
--------
>>> t = QosTables(max_vls=2, high_limit=1, vlarb_high=[(1, 8)], vlarb_low=[(0, 4)], sl2vl=[0, 1] * 8)
>>> print(write_opensm_conf(t), end="")
qos TRUE
qos_max_vls 2
qos_high_limit 1
qos_vlarb_high 1:8
qos_vlarb_low 0:4
qos_sl2vl 0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1
>>> parse_opensm_conf(write_opensm_conf(t))["qos"] == t
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import FormatError

__all__ = [
    "QosTables", "QosLevel", "QosMatchRule", "DEFAULT_TABLES", "PORT_TYPES",
    "parse_sl2vl", "parse_vlarb", "format_sl2vl", "format_vlarb",
    "write_opensm_conf", "parse_opensm_conf", "write_policy", "parse_policy",
]

#: Option prefixes: subnet-wide, then per port type.
PORT_TYPES = ("qos", "qos_ca", "qos_rtr", "qos_sw0", "qos_swe")
MAX_VLARB_ENTRIES = 64
#: Most P_Keys named by all the match rules of one policy (each rule names each P_Key at most once).
MAX_POLICY_PKEYS = 1 << 20


@dataclass
class QosTables:
    """SL-to-VL map and VL arbitration of one port type.

    ``sl2vl`` has 16 VLs (index = SL; VL 15 drops the SL); ``vlarb_high`` and
    ``vlarb_low`` are lists of ``(vl, weight)`` with VL 0..14 and weight 0..255
    (units of 64 bytes); ``high_limit`` 0..255 bounds the high-priority bytes sent
    before a low-priority packet may go (255: unlimited).
    """

    max_vls: int = 15
    high_limit: int = 0
    vlarb_high: list[tuple[int, int]] = field(default_factory=list)
    vlarb_low: list[tuple[int, int]] = field(default_factory=list)
    sl2vl: list[int] = field(default_factory=lambda: list(range(15)) + [7])

    def validate(self, source: str = "qos") -> None:
        """Raise :class:`FormatError` naming the offending field."""
        if not 1 <= self.max_vls <= 15:
            raise FormatError(source, None, f"max_vls {self.max_vls}: must be 1..15")
        if not 0 <= self.high_limit <= 255:
            raise FormatError(source, None, f"high_limit {self.high_limit}: must be 0..255")
        parse_sl2vl(format_sl2vl(self.sl2vl), f"{source}: sl2vl")
        for name in ("vlarb_high", "vlarb_low"):
            parse_vlarb(format_vlarb(getattr(self, name)), f"{source}: {name}")


#: OpenSM's hard-coded defaults (man page).
DEFAULT_TABLES = QosTables(
    max_vls=15, high_limit=0,
    vlarb_high=[(0, 4)] + [(vl, 0) for vl in range(1, 15)],
    vlarb_low=[(0, 0)] + [(vl, 4) for vl in range(1, 15)],
    sl2vl=list(range(15)) + [7],
)


@dataclass
class QosLevel:
    """A ``qos-level``: SL plus optional MTU and rate limits (IBTA codes)."""

    name: str
    sl: int
    mtu_limit: int | None = None
    rate_limit: int | None = None
    use: str = ""


@dataclass
class QosMatchRule:
    """A ``qos-match-rule`` choosing ``level`` for queries on any of ``pkeys``."""

    level: str
    pkeys: list[int]
    use: str = ""


def _number(text: str, what: str, lo: int, hi: int, source: str, line: int | None) -> int:
    shown = text.strip()[:24]
    try:
        value = int(text.strip(), 0)
    except ValueError:
        raise FormatError(source, line, f"{what}: {shown!r} is not a number") from None
    if not lo <= value <= hi:
        raise FormatError(source, line, f"{what} {shown}: must be {lo}..{hi}")
    return value


def parse_sl2vl(text: str, source: str = "sl2vl", line: int | None = None) -> list[int]:
    """16 comma-separated VLs (0..15) -> list of 16 ints."""
    items = [s for s in text.split(",") if s.strip()]
    if len(items) != 16:
        raise FormatError(source, line, f"needs 16 VLs (one per SL 0..15), got {len(items)}")
    return [_number(s, f"VL of SL {sl}", 0, 15, source, line) for sl, s in enumerate(items)]


def parse_vlarb(text: str, source: str = "vlarb", line: int | None = None) -> list[tuple[int, int]]:
    """``VL:weight`` pairs separated by commas -> list of ``(vl, weight)``."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    if len(items) > MAX_VLARB_ENTRIES:
        raise FormatError(source, line, f"{len(items)} entries; a VL arbitration table holds at most 64")
    out = []
    for item in items:
        vl, sep, weight = item.partition(":")
        if not sep:
            raise FormatError(source, line, f"entry {item[:40]!r}: write VL:weight")
        out.append((_number(vl, "VL", 0, 14, source, line), _number(weight, f"weight of VL {vl.strip()[:24]}", 0, 255,
                                                                      source, line)))
    return out


def format_sl2vl(sl2vl: list[int]) -> str:
    return ",".join(str(int(v)) for v in sl2vl)


def format_vlarb(entries: list[tuple[int, int]]) -> str:
    return ",".join(f"{int(vl)}:{int(w)}" for vl, w in entries)


def write_opensm_conf(tables: QosTables, per_type: dict[str, QosTables] | None = None) -> str:
    """The ``qos_*`` lines of ``opensm.conf`` (with ``qos TRUE``) for subnet-wide and per-type tables."""
    lines = ["qos TRUE"]
    for prefix, t in [("qos", tables), *sorted((per_type or {}).items())]:
        if prefix not in PORT_TYPES:
            raise ValueError(f"unknown QoS port type {prefix!r}; known: {', '.join(PORT_TYPES)}")
        t.validate(prefix)
        lines += [f"{prefix}_max_vls {t.max_vls}", f"{prefix}_high_limit {t.high_limit}",
                  f"{prefix}_vlarb_high {format_vlarb(t.vlarb_high)}",
                  f"{prefix}_vlarb_low {format_vlarb(t.vlarb_low)}",
                  f"{prefix}_sl2vl {format_sl2vl(t.sl2vl)}"]
    return "\n".join(lines) + "\n"


_OPT_RE = re.compile(r"^(qos(?:_ca|_rtr|_sw0|_swe)?)_(max_vls|high_limit|vlarb_high|vlarb_low|sl2vl)$")


def parse_opensm_conf(text: str, source: str = "opensm.conf") -> dict[str, QosTables]:
    """The QoS tables set in an ``opensm.conf`` text, by prefix (``"qos"``, ``"qos_ca"``, ...).

    Options not given keep OpenSM's defaults; lines that are not ``qos_*`` are ignored.
    """
    found: dict[str, dict] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, value = line.partition(" ")
        m = _OPT_RE.match(key)
        if not m:
            continue
        prefix, opt = m.groups()
        value = value.strip()
        if opt == "sl2vl":
            parsed = parse_sl2vl(value, source, lineno)
        elif opt.startswith("vlarb"):
            parsed = parse_vlarb(value, source, lineno)
        else:
            parsed = _number(value, key, 1 if opt == "max_vls" else 0, 15 if opt == "max_vls" else 255, source, lineno)
        found.setdefault(prefix, {})[opt] = parsed
    base = DEFAULT_TABLES
    return {p: QosTables(**{**{k: getattr(base, k) for k in ("max_vls", "high_limit", "vlarb_high", "vlarb_low",
                                                               "sl2vl")}, **opts})
            for p, opts in found.items()}


def write_policy(levels: list[QosLevel], rules: list[QosMatchRule], default_sl: int = 0) -> str:
    """A full ``qos-policy.conf``: ``qos-levels`` (with ``DEFAULT``) and ``qos-match-rules`` by P_Key."""
    names = {lv.name for lv in levels}
    out = ["qos-levels", "    qos-level", "        name: DEFAULT", "        use: ibweb default",
           f"        sl: {default_sl}", "    end-qos-level"]
    for lv in levels:
        if lv.name == "DEFAULT" or not re.fullmatch(r"[A-Za-z0-9_.-]+", lv.name):
            raise ValueError(f"QoS level name {lv.name!r}: letters, digits, '_', '.', '-' only, not DEFAULT")
        out += ["    qos-level", f"        name: {lv.name}"]
        if lv.use:
            out.append(f"        use: {lv.use}")
        out.append(f"        sl: {lv.sl}")
        if lv.mtu_limit is not None:
            out.append(f"        mtu-limit: {lv.mtu_limit}")
        if lv.rate_limit is not None:
            out.append(f"        rate-limit: {lv.rate_limit}")
        out.append("    end-qos-level")
    out.append("end-qos-levels")
    if rules:
        out.append("qos-match-rules")
        for r in rules:
            if r.level not in names:
                raise ValueError(f"match rule names unknown QoS level {r.level!r}")
            out.append("    qos-match-rule")
            if r.use:
                out.append(f"        use: {r.use}")
            out += [f"        pkey: {', '.join(f'0x{p:04x}' for p in r.pkeys)}", f"        qos-level-name: {r.level}",
                    "    end-qos-match-rule"]
        out.append("end-qos-match-rules")
    return "\n".join(out) + "\n"


def _pkey_list(text: str, source: str, line: int) -> list[int]:
    """The P_Keys of ``a, b-c, ...`` (low 15 bits), sorted and each once: at most 32,768 whatever the ranges."""
    seen = np.zeros(0x8000, dtype=bool)
    for item in (s.strip() for s in text.split(",") if s.strip()):
        lo, dash, hi = item.partition("-")
        a = _number(lo, "P_Key", 0, 0xFFFF, source, line) & 0x7FFF
        b = _number(hi, "P_Key", 0, 0xFFFF, source, line) & 0x7FFF if dash else a
        seen[a:b + 1] = True
    return np.flatnonzero(seen).tolist()


def parse_policy(text: str, source: str = "qos-policy.conf") -> tuple[list[QosLevel], list[QosMatchRule], int]:
    """Levels, P_Key match rules and the default SL of a ``qos-policy.conf``.

    Reads ``qos-levels``, ``qos-match-rules`` (their ``pkey`` criterion) and the
    ``default`` / ``any, pkey`` lines of ``qos-ulps``; other sections are skipped.
    """
    levels: list[QosLevel] = []
    rules: list[QosMatchRule] = []
    default_sl = 0
    section = None
    item: dict | None = None
    pkeys = 0

    def counted(keys: list[int], lineno: int) -> list[int]:
        nonlocal pkeys
        pkeys += len(keys)
        if pkeys > MAX_POLICY_PKEYS:
            raise FormatError(source, lineno, f"the match rules name more than {MAX_POLICY_PKEYS:,} P_Keys in all")
        return keys

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line in ("qos-levels", "qos-match-rules", "qos-ulps", "port-groups", "qos-setup"):
            section = line
            continue
        if line.startswith("end-") and line[4:] == section:
            section = None
            continue
        if line in ("qos-level", "qos-match-rule"):
            item = {"line": lineno}
            continue
        if line in ("end-qos-level", "end-qos-match-rule"):
            if item is None:
                raise FormatError(source, lineno, f"{line} without its opening keyword")
            if line == "end-qos-level":
                if "name" not in item or "sl" not in item:
                    raise FormatError(source, item["line"], "qos-level needs a name and an sl")
                if item["name"] == "DEFAULT":
                    default_sl = item["sl"]
                else:
                    levels.append(QosLevel(item["name"], item["sl"], item.get("mtu-limit"), item.get("rate-limit"),
                                           item.get("use", "")))
            elif "pkey" in item and "qos-level-name" in item:
                rules.append(QosMatchRule(item["qos-level-name"], item["pkey"], item.get("use", "")))
            item = None
            continue
        if section == "qos-ulps":
            crit, sep, sl = line.rpartition(":")
            if not sep:
                raise FormatError(source, lineno, f"qos-ulps entry {line!r}: write 'match : SL'")
            sl_value = _number(sl, "SL", 0, 15, source, lineno)
            crit = " ".join(crit.split())
            if crit == "default":
                default_sl = sl_value
            elif crit.startswith("any, pkey "):
                name = f"ulp-line-{lineno}"
                levels.append(QosLevel(name, sl_value))
                rules.append(QosMatchRule(name, counted(_pkey_list(crit[len("any, pkey "):], source, lineno), lineno)))
            continue
        if item is not None and section in ("qos-levels", "qos-match-rules"):
            key, sep, value = line.partition(":")
            if not sep:
                raise FormatError(source, lineno, f"{line!r}: write 'keyword: value'")
            key, value = key.strip(), value.strip()
            if key == "sl":
                item[key] = _number(value, "sl", 0, 15, source, lineno)
            elif key in ("mtu-limit", "rate-limit"):
                item[key] = _number(value, key, 1, 255, source, lineno)
            elif key == "pkey":
                item[key] = counted(_pkey_list(value, source, lineno), lineno)
            else:
                item[key] = value
    if section is not None:
        raise FormatError(source, None, f"section {section} is not closed by end-{section}")
    return levels, rules, default_sl
