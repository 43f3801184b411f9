"""The store the settings name: :func:`open_store` (one per process, :func:`store`)."""

from __future__ import annotations

import threading
from pathlib import Path

from .embedded import EmbeddedStore
from .store import TimeSeriesStore
from .victoria import VictoriaStore

__all__ = ["open_store", "store"]

_lock = threading.Lock()
_store: TimeSeriesStore | None = None


def open_store(url: str = "", *, retention_days: int = 90, path: str | Path | None = None,
               max_bytes: int = 20 << 30, sweeps_per_request: int = 1, backlog_bytes: int = 1 << 30,
               minute_step: int = 60) -> TimeSeriesStore:
    """VictoriaMetrics at ``url`` (``http://`` or ``https://``; ``sweeps_per_request`` sweeps sent together, a
    backlog of at most ``backlog_bytes`` while it is unreachable), or, when ``url`` is empty, the embedded store in
    the SQLite file ``path`` (``minute_step``: its buckets past the raw tier's 2 days); ``ValueError`` naming the URL
    otherwise."""
    if not url:
        if path is None:
            raise ValueError("embedded time-series store: no file path given")
        return EmbeddedStore(path, retention_days=retention_days, max_bytes=max_bytes, minute_step=minute_step)
    if url.startswith(("http://", "https://")):
        return VictoriaStore(url, retention_days=retention_days, sweeps_per_request=sweeps_per_request,
                             backlog_bytes=backlog_bytes)
    raise ValueError(f"IBWEB_TSDB_URL={url!r}: expected empty (embedded) or an http(s):// VictoriaMetrics URL")


def store() -> TimeSeriesStore:
    """This process's store, from the settings ``IBWEB_TSDB_URL``, ``IBWEB_TSDB_RETENTION_DAYS``,
    ``IBWEB_TSDB_MAX_MB``, ``IBWEB_TSDB_PATH``, ``IBWEB_TSDB_STEP_S``, ``IBWEB_TSDB_SWEEPS_PER_REQUEST`` and
    ``IBWEB_TSDB_BACKLOG_MB``."""
    global _store
    from django.conf import settings

    with _lock:
        if _store is None:
            _store = open_store(settings.IBWEB_TSDB_URL, retention_days=settings.IBWEB_TSDB_RETENTION_DAYS,
                                path=settings.IBWEB_TSDB_PATH, max_bytes=settings.IBWEB_TSDB_MAX_MB << 20,
                                sweeps_per_request=settings.IBWEB_TSDB_SWEEPS_PER_REQUEST,
                                backlog_bytes=settings.IBWEB_TSDB_BACKLOG_MB << 20,
                                minute_step=settings.IBWEB_TSDB_STEP_S)
        return _store
