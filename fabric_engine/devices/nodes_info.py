"""Read ``ibdiagnet2.nodes_info``: hardware, firmware, PSID and uptime per node (ibdiagnet's GeneralInfo query).

ibdiagnet writes the file (``NODES_INFO_FILE`` in ibutils2 ``ibdiagnet_file_names.h``) after its header of
``#`` comment lines: per node a line of dashes, ``Node Name=<description>``, another line of dashes, then one
``<field>=<value>`` a line: ``GUID``, then the vendor-specific GeneralInfo fields, named as the database's
``NODES_INFO`` section names its columns (:mod:`.ibdiagnet_db`): ``HWInfo_DeviceID``,
``HWInfo_DeviceHWRevision``, ``HWInfo_UpTime`` (seconds), ``FWInfo_Major/Minor/SubMinor``, ``FWInfo_BuildID``,
``FWInfo_Year/Month/Day/Hour``, ``FWInfo_PSID`` (quoted), ``FWInfo_Extended_Major/Minor/SubMinor``,
``SWInfo_*``; numbers in hex. The firmware version is the extended fields when any is non-zero, else the
short ones (ibdiag ``fw_version_obj``). Fields this reader does not use are skipped; a field outside a node's
record, a node without ``GUID``, a number that is not one name the file and line.
"""

from __future__ import annotations

import re

from ..errors import FormatError
from ..health._lines import Skipper, lines_of
from ._text import MAX_FIELD_CHARS, guid_of, int_of
from .vitals import NodeInfo

__all__ = ["read", "looks_like", "node_info", "MAX_NODES", "NODE_INFO_FIELDS"]

#: Most nodes one file may describe (a subnet's unicast LIDs).
MAX_NODES = 49_151
MAX_UPTIME_S = 100 * 365 * 86_400
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_ ]{0,63})=(.*)")
_MISSING = frozenset({"", "N/A", "NA", "-"})
#: The GeneralInfo fields read (the others are skipped).
NODE_INFO_FIELDS = frozenset({"HWInfo_DeviceID", "HWInfo_DeviceHWRevision", "HWInfo_UpTime", "FWInfo_PSID",
                              *(f"FWInfo_{p}{k}" for p in ("", "Extended_") for k in ("Major", "Minor", "SubMinor"))})


def looks_like(text: str) -> bool:
    """Whether ``text`` is an ``ibdiagnet2.nodes_info`` (node records with GeneralInfo fields)."""
    head = text[:1 << 14]
    return re.search(r"^Node Name=", head, re.M) is not None and re.search(r"^(?:HWInfo|FWInfo)_\w+=", head,
                                                                         re.M) is not None


def _num(fields: dict[str, tuple[str, int]], key: str, source: str, memo: dict, hi: int = (1 << 32) - 1
         ) -> int | None:
    cell = fields.get(key)
    if cell is None:
        return None
    got = memo.get((cell[0], hi), memo)  # nodes of one fabric repeat their values: each distinct text parsed once
    if got is memo:
        got = None if cell[0].upper() in _MISSING else int_of(cell[0], source, cell[1], key, hi)
        memo[cell[0], hi] = got
    return got


def node_info(fields: dict[str, tuple[str, int]], guid: int, name: str, source: str, line: int,
              memo: dict | None = None) -> NodeInfo:
    """A :class:`NodeInfo` from GeneralInfo ``fields`` (name -> (value, line)), as both ibdiagnet files give them;
    ``memo``: the numbers parsed so far (shared by the nodes of one file)."""
    memo = {} if memo is None else memo
    dev = _num(fields, "HWInfo_DeviceID", source, memo, 0xFFFF)
    rev = _num(fields, "HWInfo_DeviceHWRevision", source, memo, 0xFFFF)
    up = _num(fields, "HWInfo_UpTime", source, memo)
    if up is not None and up > MAX_UPTIME_S:
        raise FormatError(source, fields["HWInfo_UpTime"][1], f"HWInfo_UpTime {up} s is more than a century")
    ext = [_num(fields, f"FWInfo_Extended_{k}", source, memo) for k in ("Major", "Minor", "SubMinor")]
    base = [_num(fields, f"FWInfo_{k}", source, memo, 0xFF) for k in ("Major", "Minor", "SubMinor")]
    parts = ext if any(ext) else base
    fw = f"{parts[0]}.{parts[1]}.{parts[2]:04d}" if all(p is not None for p in parts) else None
    psid = fields.get("FWInfo_PSID", ("", 0))[0].strip().strip('"')
    return NodeInfo(guid, name, dev, None if rev is None else f"0x{rev:x}", fw,
                    psid[:MAX_FIELD_CHARS] if psid.upper() not in _MISSING else None, up, f"{source}:{line}")


def read(text: str, source: str = "ibdiagnet2.nodes_info", warnings: list | None = None) -> list[NodeInfo]:
    """The nodes of an ``ibdiagnet2.nodes_info``."""
    warnings = warnings if warnings is not None else []
    lines = lines_of(text, source, warnings)
    skip = Skipper(source, "ibdiagnet2.nodes_info", warnings)
    blocks: list[tuple[int, str, dict[str, tuple[str, int]]]] = []
    for lineno, ln in enumerate(lines, 1):
        s = ln.strip()
        if not s or s[0] == "#" or set(s) == {"-"}:
            continue
        m = _FIELD.fullmatch(s)
        if m is None:
            skip.skip(lineno, ln)
            continue
        key, value = m.group(1).strip(), m.group(2).strip()
        if len(value) > MAX_FIELD_CHARS:
            raise FormatError(source, lineno, f"{key}: value longer than {MAX_FIELD_CHARS} characters")
        if key in ("Node Name", "Port Name") or key == "GUID" and blocks and "GUID" in blocks[-1][2]:
            if len(blocks) >= MAX_NODES:
                raise FormatError(source, lineno, f"more than {MAX_NODES:,} nodes: more than one subnet has")
            blocks.append((lineno, value if key != "GUID" else "", {}))
            if key != "GUID":
                continue
        if not blocks:
            raise FormatError(source, lineno, f"{key} outside a node's record (no Node Name= line before it)")
        blocks[-1][2][key] = (value, lineno)
    skip.finish()
    out, memo = [], {}
    for line, name, fields in blocks:
        if "GUID" not in fields:
            raise FormatError(source, line, "node record without GUID=")
        guid = guid_of(fields["GUID"][0], source, fields["GUID"][1])
        out.append(node_info(fields, guid, name[:MAX_FIELD_CHARS] or f"0x{guid:016x}", source, line, memo))
    return out
