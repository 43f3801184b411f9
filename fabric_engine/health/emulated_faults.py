"""The ``health`` key of a scenario spec: link health faults an emulated fabric injects, validated.

A list of faults, each an object with a ``kind`` and where it is, ``port`` (one cable end,
``"<node> <port>"`` or ``"<node>/<port>"``) or ``link`` (the cable at that port, both ends):

* ``ber_rising``: ``from``, ``to`` (raw BER, ``0 < from < to <= 0.5``), ``over_s`` (> 0), ``start_s``:
  the raw BER climbs log-linearly from ``from`` to ``to`` over ``over_s`` seconds from ``start_s``, then stays;
* ``hot_module``: ``celsius`` (-55..150), ``start_s``: the module reads that temperature from ``start_s`` on;
* ``flapping``: ``period_s`` (> 0), ``down_s`` (``0 < down_s < period_s``), ``start_s``: the cable goes down
  at ``start_s + k * period_s`` for ``down_s`` seconds (``port`` or ``link`` alike: a down port is a down link);
* ``cable_swap``: ``at_s``: the module serial changes once, at ``at_s``.

``start_s`` is optional (default 0); times are seconds of emulated time from the emulation's start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import FabricEngineError
from ..topology import Fabric

__all__ = ["FAULT_KINDS", "MAX_FAULTS", "MAX_TIME_S", "Fault", "faults_from_spec", "rows_of"]

#: Fault kind -> (required keys, optional keys), besides ``kind`` and ``port``/``link``.
FAULT_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ber_rising": (("from", "to", "over_s"), ("start_s",)),
    "hot_module": (("celsius",), ("start_s",)),
    "flapping": (("period_s", "down_s"), ("start_s",)),
    "cable_swap": (("at_s",), ()),
}
#: Most faults one scenario injects.
MAX_FAULTS = 256
#: Latest time a fault may name (about 31 years of emulated time).
MAX_TIME_S = 1e9
_MAX_WHERE = 200


@dataclass(frozen=True)
class Fault:
    """One validated fault: its kind, cable, record rows (cable ends: ``c`` is the a end, ``L + c`` the b end)
    and numeric parameters (``start_s`` filled in)."""

    kind: str
    cable: int
    rows: tuple[int, ...]
    params: dict[str, float]
    where: str


def _number(value, where: str, lo: float, hi: float, *, lo_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FabricEngineError(f"{where}: expected a number, got {str(value)[:40]!r}")
    if value < lo or value > hi or (lo_open and value == lo):
        raise FabricEngineError(f"{where}: {value} out of range ({'>' if lo_open else '>='} {lo:g}, <= {hi:g})")
    return float(value)


def _cable_end(fabric: Fabric, text, where: str) -> tuple[int, int]:
    """(cable, row) of the cable end ``text`` names: ``"<node> <port>"`` or ``"<node>/<port>"``."""
    if not isinstance(text, str) or not text.strip() or len(text) > _MAX_WHERE:
        raise FabricEngineError(f"{where}: expected \"<node> <port>\" (at most {_MAX_WHERE} characters), "
                                f"got {str(text)[:40]!r}")
    node_name, sep, port_text = text.strip().replace("/", " ").rpartition(" ")
    if not sep or not port_text.isdigit():
        raise FabricEngineError(f"{where}: {text[:40]!r} is not \"<node> <port>\"")
    try:
        node = fabric.node(node_name.strip())
    except KeyError:
        raise FabricEngineError(f"{where}: no node {node_name.strip()[:40]!r} in the fabric") from None
    port = int(port_text)
    if not 1 <= port <= int(fabric.nports[node]):
        raise FabricEngineError(f"{where}: {node_name.strip()} has ports 1..{int(fabric.nports[node])}, not {port}")
    d = fabric.out_link(node, port)
    if d < 0:
        raise FabricEngineError(f"{where}: {node_name.strip()} port {port} has no cable")
    return d % fabric.num_links, d  # directed link d leaves that end: d < L from the a end (row c), else the b end


def _fault(fabric: Fabric, item, where: str) -> Fault:
    if not isinstance(item, dict):
        raise FabricEngineError(f"{where}: expected an object, not {type(item).__name__}")
    kind = item.get("kind")
    if kind not in FAULT_KINDS:
        raise FabricEngineError(f"{where}.kind: {str(kind)[:40]!r} is not one of {', '.join(FAULT_KINDS)}")
    required, optional = FAULT_KINDS[kind]
    unknown = set(item) - {"kind", "port", "link", *required, *optional}
    if unknown:
        raise FabricEngineError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} for {kind}; "
                                f"known: kind, port or link, {', '.join(required + optional)}")
    missing = [k for k in required if k not in item]
    if missing:
        raise FabricEngineError(f"{where}: {kind} needs {', '.join(missing)}")
    if ("port" in item) == ("link" in item):
        raise FabricEngineError(f"{where}: give one of port (a cable end) or link (both ends of a cable)")
    key = "port" if "port" in item else "link"
    cable, row = _cable_end(fabric, item[key], f"{where}.{key}")
    rows = (row,) if key == "port" else (cable, cable + fabric.num_links)
    params = {"start_s": 0.0}
    for k in required + optional:
        if k in item and k not in ("from", "to"):
            lo, hi = (-55.0, 150.0) if k == "celsius" else (0.0, MAX_TIME_S)
            params[k] = _number(item[k], f"{where}.{k}", lo, hi, lo_open=k in ("over_s", "period_s", "down_s"))
    if kind == "ber_rising":
        params["from"] = _number(item["from"], f"{where}.from", 0.0, 0.5, lo_open=True)
        params["to"] = _number(item["to"], f"{where}.to", 0.0, 0.5, lo_open=True)
        if not params["to"] > params["from"]:
            raise FabricEngineError(f"{where}.to: a rising BER needs to > from, got {params['to']:g} <= "
                                    f"{params['from']:g}")
    if kind == "flapping" and not params["down_s"] < params["period_s"]:
        raise FabricEngineError(f"{where}.down_s: {params['down_s']:g} must be shorter than period_s "
                                f"{params['period_s']:g}")
    return Fault(kind, cable, rows, params, where)


def faults_from_spec(fabric: Fabric, data, where: str = "health") -> list[Fault]:
    """The faults of a spec's ``health`` list on ``fabric`` (:class:`FabricEngineError` naming the field)."""
    if not isinstance(data, list):
        raise FabricEngineError(f"{where}: expected a list of faults, not {type(data).__name__}")
    if len(data) > MAX_FAULTS:
        raise FabricEngineError(f"{where}: {len(data):,} faults, at most {MAX_FAULTS}")
    faults = [_fault(fabric, item, f"{where}[{i}]") for i, item in enumerate(data)]
    seen: dict[tuple, str] = {}
    for f in faults:  # one fault of a kind per cable end (per cable for flapping: a port down is its link down)
        for key in ([(f.kind, f.cable)] if f.kind == "flapping" else [(f.kind, r) for r in f.rows]):
            if key in seen:
                raise FabricEngineError(f"{f.where}: a second {f.kind} where {seen[key]} has one already")
            seen[key] = f.where
    return faults


def rows_of(faults: list[Fault], kind: str, *names: str) -> tuple[np.ndarray, ...]:
    """The rows of the faults of ``kind`` and, aligned with them, each parameter in ``names``."""
    sel = [f for f in faults if f.kind == kind]
    rows = np.array([r for f in sel for r in f.rows], dtype=np.int64)
    cols = tuple(np.array([f.params[n] for f in sel for _ in f.rows], dtype=np.float64) for n in names)
    return (rows, *cols)
