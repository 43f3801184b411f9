"""Read a node name map (``--node-name-map``): node GUID to the name operators know the node by.

The format, as rdma-core's ``util/node_name_map.c`` reads it: one node a line, its GUID as
``strtoull(.., 0)`` takes it (``0x`` hex or decimal), blanks, then the name, which ends at a
double quote or ``#`` (so ``0x0002c90300a1b2c4 "leaf01"`` and ``0x... leaf01 # row 3`` both give
``leaf01``); blank lines and lines starting with ``#`` are skipped. A line whose GUID is not a
number is an error naming the line; a GUID given twice keeps its first name, as the tools do.

>>> read('# map\\n0x10 "leaf01"\\n17 spine01 # row 3\\n')
{16: 'leaf01', 17: 'spine01'}
"""

from __future__ import annotations

import re

from ..errors import FormatError
from ..topology.limits import MAX_NAME_CHARS

__all__ = ["read"]

_LINE = re.compile(r"^(0[xX][0-9A-Fa-f]+|\d+)(?:\s+(.*))?$")
_NAME = re.compile(r'[^"#]+')


def read(text: str, source: str = "<node-name-map>") -> dict[int, str]:
    """``{node GUID: name}`` of a node name map; raises :class:`FormatError` naming the line."""
    names: dict[int, str] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().lstrip("\ufeff")
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            raise FormatError(source, lineno, f"expected '<GUID> \"<name>\"', got {line[:80]!r}")
        digits = m.group(1)
        guid = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 8) if len(digits) > 1 and \
            digits[0] == "0" and digits.isdigit() and set(digits) <= set("01234567") else int(digits)
        if not 0 < guid < 1 << 64:
            raise FormatError(source, lineno, f"GUID {m.group(1)[:24]} is not a non-zero 64-bit value")
        name = _NAME.search(m.group(2) or "")
        value = name.group(0).strip() if name else ""
        if not value:
            raise FormatError(source, lineno, "no name after the GUID")
        if len(value) > MAX_NAME_CHARS:
            raise FormatError(source, lineno, f"name longer than {MAX_NAME_CHARS} characters")
        names.setdefault(guid, value)
    return names
