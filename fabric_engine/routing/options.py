"""A fabric's routing options as data: the GUID lists OpenSM's guid files give, checked against the engine.

A scenario spec or a fabric row keeps them as ``{"roots": ["0x...", ...], "cns": [...], "ios": [...]}``
(hex strings, as the JSON format writes GUIDs): ``roots`` are switch node GUIDs (OpenSM's
``--root_guid_file``, for updn and ftree), ``cns`` compute-node port GUIDs (``--cn_guid_file``, ftree) and
``ios`` I/O-node port GUIDs (``--io_guid_file``, ftree). :func:`engine_options` turns them into the keyword
arguments of :func:`fabric_engine.routing.route`, refusing, with the field named, a list an engine does
not take, a value that is not a 64-bit GUID, or more entries than a subnet has ports.

>>> engine_options("ftree", {"roots": ["0x10"], "cns": []})
{'roots': [16]}
"""

from __future__ import annotations

from ..errors import FabricEngineError
from ..topology.limits import MAX_FABRIC_PORTS

__all__ = ["OPTIONS", "engine_options", "options_json"]

#: Option -> (engines that take it, what it lists, OpenSM's option).
OPTIONS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "roots": (("updn", "ftree"), "root switch node GUIDs", "--root_guid_file"),
    "cns": (("ftree",), "compute node port GUIDs", "--cn_guid_file"),
    "ios": (("ftree",), "I/O node port GUIDs", "--io_guid_file"),
}


def _guid(value, field: str, i: int) -> int:
    if isinstance(value, str) and 2 < len(value) <= 18 and value[:2].lower() == "0x":
        try:
            g = int(value, 16)
        except ValueError:
            g = 0
        if 0 < g < 1 << 64:
            return g
    raise FabricEngineError(f"routing_options.{field}[{i}]: expected a GUID like '0x98039b0300000001', "
                            f"got {str(value)[:40]!r}")


def engine_options(engine: str, options: dict | None) -> dict[str, list[int]]:
    """Keyword arguments of ``route(fabric, engine, ...)`` from stored ``options`` (empty lists left out)."""
    if not options:
        return {}
    if not isinstance(options, dict) or set(options) - set(OPTIONS):
        raise FabricEngineError(f"routing_options: expected an object with keys among {', '.join(OPTIONS)}")
    out = {}
    for key, values in options.items():
        engines, what, flag = OPTIONS[key]
        if not isinstance(values, list) or len(values) > MAX_FABRIC_PORTS:
            raise FabricEngineError(f"routing_options.{key}: expected a list of at most {MAX_FABRIC_PORTS:,} {what}")
        if not values:
            continue
        if engine not in engines:
            raise FabricEngineError(f"routing_options.{key}: {what} ({flag}) apply to {' and '.join(engines)} "
                                    f"only, not {engine}")
        out[key] = [_guid(v, key, i) for i, v in enumerate(values)]
    return out


def options_json(roots=(), cns=(), ios=()) -> dict[str, list[str]]:
    """Stored form of GUID lists (non-empty ones only)."""
    return {k: [f"0x{int(g):016x}" for g in v] for k, v in (("roots", roots), ("cns", cns), ("ios", ios)) if len(v)}
