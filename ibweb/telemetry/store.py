"""The telemetry app's cache entries: newest sweeps and the routing in use.

Cache keys (all under ``ibweb:telemetry:<fabric id>:``):

* ``sweep`` and ``prev``: the newest and the previous merged sweep
  (``{"id", "t", "linkinfo", "samples": CounterSamples, "events", "failures"}``);
* ``sweep_ids``: ``[previous id, newest id]``, a few bytes written with them: a reader that
  has the two entries reads only this key each tick (:func:`sweep_ids`), and the entries
  (15-30 MB at 32,768 GPUs) only when it changed;
* ``routing_status``: what the fabric routes with, ``{"version", "source", "engine", "path",
  "reason", "since", ...}`` (the LFTs themselves are in the runtime record, :mod:`ibweb.runtime.record`).
"""

from __future__ import annotations

import threading

from django.core.cache import cache

from fabric_engine.telemetry import CounterSamples

__all__ = ["put_sweep", "sweeps", "sweep_ids", "put_routing_status", "routing_status", "forget"]

_TTL_S = 24 * 3600
_lock = threading.Lock()


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:telemetry:{fabric_id}:{part}"


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
        parts[_key(fabric_id, "sweep_ids")] = [newest["id"] if newest is not None else None, sweep_id]
        cache.set_many(parts, _TTL_S)


def sweeps(fabric_id: int) -> tuple[dict | None, dict | None]:
    """``(previous, newest)`` sweep entries (either may be None)."""
    got = cache.get_many([_key(fabric_id, "prev"), _key(fabric_id, "sweep")])
    return got.get(_key(fabric_id, "prev")), got.get(_key(fabric_id, "sweep"))


def sweep_ids(fabric_id: int) -> tuple[int | None, int | None] | None:
    """``(previous id, newest id)`` of the entries :func:`sweeps` would return; None when unknown."""
    ids = cache.get(_key(fabric_id, "sweep_ids"))
    return tuple(ids) if ids is not None else None


def put_routing_status(fabric_id: int, status: dict) -> None:
    """Make ``status`` the description of the fabric's routing in use."""
    # no expiry: the source writes it only when the routing changes (forget() drops it)
    cache.set(_key(fabric_id, "routing_status"), status, None)


def routing_status(fabric_id: int) -> dict | None:
    """What the fabric routes with (source, engine, dump path, version), or None before the engine routed."""
    return cache.get(_key(fabric_id, "routing_status"))


def forget(fabric_id: int) -> None:
    """Drop every entry of a fabric (tests, fabric deletion)."""
    cache.delete_many([_key(fabric_id, p) for p in ("sweep", "prev", "sweep_ids", "routing_status")])
