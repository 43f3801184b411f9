"""The telemetry app's cache entries: newest sweeps and the counters behind ``/metrics``.

Cache keys (all under ``ibweb:telemetry:<fabric id>:``, next to the live feed's
``ibweb:live:<fabric id>:`` entries of :mod:`ibweb.live.groups`):

* ``sweep`` and ``prev``: the newest and the previous merged sweep
  (``{"id", "t", "linkinfo", "samples": CounterSamples, "events", "failures"}``);
* ``metrics``: ``{"t", "topology": ibweb-fabric JSON dict, "totals": float64 [2L, C]}``,
  the per-port cumulative counters :func:`render_metrics` turns into text;
* ``routing``: the LFTs the engine routes with and the discovery they apply to
  (``{"version", "name", "engine", "shape", "lft": zlib bytes, "linkinfo": zlib bytes, "info"}``,
  see :func:`ibweb.telemetry.routing.publish`), and ``routing_status``: the small
  ``{"version", "source", "engine", "path", "reason", "since", ...}`` read first.

For emulated fabrics the engine loop calls :func:`record_emulated_state` once per
tick; it integrates the tick's per-link rates into counters held in this process
and writes them to the cache at most every ``min_interval_s`` seconds.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from django.core.cache import cache

from fabric_engine.formats.json_format import to_json
from fabric_engine.state import FabricState
from fabric_engine.telemetry import CounterIntegrator, CounterSamples
from fabric_engine.topology import Fabric

__all__ = ["record_emulated_state", "record_telemetry_totals", "metrics_entry", "put_sweep", "sweeps",
           "put_routing", "routing_entry", "routing_status", "forget"]

_TTL_S = 24 * 3600
_lock = threading.Lock()
_integrators: dict[int, tuple[CounterIntegrator, dict, float]] = {}


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:telemetry:{fabric_id}:{part}"


def record_emulated_state(fabric_id: int, fabric: Fabric, state: FabricState, min_interval_s: float = 2.0) -> None:
    """Add one tick of an emulated fabric to its ``/metrics`` counters.

    Call from the engine loop after each ``Emulator.step()`` (cheap: one vectorized
    add per tick; the cache write is throttled). A new ``fabric`` object (a reload)
    starts the counters from zero, as a restarted exporter would.
    """
    with _lock:
        held = _integrators.get(fabric_id)
        if held is None or held[0].fabric is not fabric:
            held = (CounterIntegrator(fabric), to_json(fabric), 0.0)
        acc, topology, written = held
        acc.add(state)
        now = time.monotonic()
        if now - written >= min_interval_s or written == 0.0:
            cache.set(_key(fabric_id, "metrics"), {"t": state.t, "topology": topology, "totals": acc.totals.copy()},
                      _TTL_S)
            written = now
        _integrators[fabric_id] = (acc, topology, written)


def record_telemetry_totals(fabric_id: int, topology: dict, totals: np.ndarray, t: float) -> None:
    """Store the newest raw counters of a telemetry-fed fabric for ``/metrics``."""
    cache.set(_key(fabric_id, "metrics"), {"t": t, "topology": topology, "totals": totals}, _TTL_S)


def metrics_entry(fabric_id: int) -> dict | None:
    """The ``metrics`` entry of a fabric, or None before its first tick or sweep."""
    return cache.get(_key(fabric_id, "metrics"))


def put_sweep(fabric_id: int, sweep_id: int, t: float, linkinfo: str, samples: CounterSamples,
              events: list[dict], failures: list[dict]) -> None:
    """Make this sweep the newest; the newest so far becomes ``prev``."""
    with _lock:
        newest = cache.get(_key(fabric_id, "sweep"))
        entry = {"id": sweep_id, "t": t, "linkinfo": linkinfo, "samples": samples, "events": events,
                 "failures": failures}
        parts = {_key(fabric_id, "sweep"): entry}
        if newest is not None:
            parts[_key(fabric_id, "prev")] = newest
        cache.set_many(parts, _TTL_S)


def sweeps(fabric_id: int) -> tuple[dict | None, dict | None]:
    """``(previous, newest)`` sweep entries (either may be None)."""
    got = cache.get_many([_key(fabric_id, "prev"), _key(fabric_id, "sweep")])
    return got.get(_key(fabric_id, "prev")), got.get(_key(fabric_id, "sweep"))


def put_routing(fabric_id: int, entry: dict, status: dict) -> None:
    """Make ``entry`` the fabric's routing and ``status`` (same ``version``) its description."""
    # no expiry: the engine writes it only when the routing changes (forget() drops it)
    cache.set_many({_key(fabric_id, "routing"): entry, _key(fabric_id, "routing_status"): status}, None)


def routing_entry(fabric_id: int) -> dict | None:
    """The stored routing of a fabric (LFTs and discovery, compressed), or None."""
    return cache.get(_key(fabric_id, "routing"))


def routing_status(fabric_id: int) -> dict | None:
    """What the fabric routes with (source, engine, dump path, version), or None before the engine routed."""
    return cache.get(_key(fabric_id, "routing_status"))


def forget(fabric_id: int) -> None:
    """Drop every entry of a fabric (tests, fabric deletion)."""
    with _lock:
        _integrators.pop(fabric_id, None)
    cache.delete_many([_key(fabric_id, p) for p in ("sweep", "prev", "metrics", "routing", "routing_status")])
