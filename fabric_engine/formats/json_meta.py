"""What a topology text said beyond nodes and cables, carried in ibweb's JSON as ``"as_read"``.

A fabric read from a capture keeps its loopback cables, chassis, host systems, NodeDescriptions
that the display names do not give back, port GUIDs off the ``guid + port`` rule (:mod:`.json_ports`),
and the reader's warnings (:mod:`.records`,
:mod:`.captured`). :func:`to_json` writes them; :func:`from_json` checks every entry's type,
size and node references before any of it is kept, naming the field of the first offence.

>>> from_json({"host_systems": 3}, ["a", "b"], "<json>")
{'host_systems': 3}
"""

from __future__ import annotations

from ..captured import MAX_WARNINGS
from ..errors import FormatError
from ..topology.limits import MAX_NAME_CHARS, MAX_NODE_PORTS, MAX_UNICAST_LID

__all__ = ["KEYS", "to_json", "from_json"]

#: The keys carried: ``meta`` keys, and ``port_guids`` (the fabric's port GUIDs off the rule, read and
#: written by :mod:`.json_ports`; a ``json_ports`` table, not a ``meta`` entry).
KEYS = ("loopbacks", "chassis", "host_systems", "node_desc", "warnings", "port_guids")
_TEXT = 256


def to_json(meta: dict, keys: tuple[str, ...] = KEYS) -> dict:
    """The carried part of a fabric's ``meta``, ``keys`` only (empty when nothing was read beyond the graph)."""
    return {k: meta[k] for k in KEYS if k in keys and meta.get(k)}


def _fail(source: str, field: str, what: str):
    raise FormatError(source, None, f"as_read.{field}: {what}")


def _str(v, source: str, field: str, most: int = MAX_NAME_CHARS) -> str:
    if not isinstance(v, str) or len(v) > most:
        _fail(source, field, f"expected a string of at most {most} characters")
    return v


def _int(v, source: str, field: str, lo: int, hi: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        _fail(source, field, f"expected an integer in {lo}..{hi}")
    return v


def _list(v, source: str, field: str, most: int) -> list:
    if not isinstance(v, list) or len(v) > most:
        _fail(source, field, f"expected a list of at most {most:,} entries")
    return v


def from_json(data, names: list[str], source: str) -> dict:
    """The checked ``meta`` entries of an ``as_read`` object; node names must be among ``names``."""
    if data is None:
        return {}
    if not isinstance(data, dict) or set(data) - set(KEYS):
        _fail(source, "", f"expected an object with keys among {', '.join(KEYS)}")
    known = set(names)
    out: dict = {}
    for i, lb in enumerate(_list(data.get("loopbacks", []), source, "loopbacks", MAX_UNICAST_LID)):
        f = f"loopbacks[{i}]"
        if not isinstance(lb, list) or len(lb) != 4 or _str(lb[0], source, f) not in known:
            _fail(source, f, "expected [node name, port, port, rate] of a node of the fabric")
        out.setdefault("loopbacks", []).append([lb[0], _int(lb[1], source, f, 1, MAX_NODE_PORTS),
                                                _int(lb[2], source, f, 1, MAX_NODE_PORTS), _str(lb[3], source, f, 8)])
    for i, ch in enumerate(_list(data.get("chassis", []), source, "chassis", MAX_UNICAST_LID)):
        f = f"chassis[{i}]"
        if not isinstance(ch, dict) or set(ch) != {"guid", "switches"}:
            _fail(source, f, "expected {guid, switches}")
        switches = [_str(s, source, f) for s in _list(ch["switches"], source, f, MAX_UNICAST_LID)]
        if not set(switches) <= known:
            _fail(source, f, "names a switch that is not in the fabric")
        out.setdefault("chassis", []).append({"guid": _str(ch["guid"], source, f, 18), "switches": switches})
    if "host_systems" in data:
        out["host_systems"] = _int(data["host_systems"], source, "host_systems", 0, MAX_UNICAST_LID)
    desc = data.get("node_desc", {})
    if not isinstance(desc, dict) or len(desc) > len(names):
        _fail(source, "node_desc", "expected an object of node index -> description")
    for k, v in desc.items():
        if not k.isdigit() or int(k) >= len(names):
            _fail(source, f"node_desc[{k[:12]!r}]", "not a node index")
        out.setdefault("node_desc", {})[k] = _str(v, source, f"node_desc[{k}]")
    for i, w in enumerate(_list(data.get("warnings", []), source, "warnings", MAX_WARNINGS)):
        f = f"warnings[{i}]"
        if not isinstance(w, dict) or set(w) != {"line", "text", "reason"}:
            _fail(source, f, "expected {line, text, reason}")
        out.setdefault("warnings", []).append({"line": _int(w["line"], source, f, 0, 2**31 - 1),
                                               "text": _str(w["text"], source, f, _TEXT),
                                               "reason": _str(w["reason"], source, f, _TEXT)})
    return out
