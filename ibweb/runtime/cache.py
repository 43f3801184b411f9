"""The cache that holds what the engines publish: shared by every process at scale, unbounded when embedded."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache

__all__ = ["shared_cache"]

_private: LocMemCache | None = None


def shared_cache():
    """The ``runtime`` cache if configured, else the default one (Redis at scale).

    A local-memory default (the embedded setup: engine and web in one process) is
    replaced by a private local-memory cache without an entry limit, so that the
    record's many chunks never cull the live feed's entries, or the other way round.
    """
    global _private
    if "runtime" in settings.CACHES:
        return caches["runtime"]
    default = caches["default"]
    if not isinstance(default, LocMemCache):
        return default
    if _private is None:
        _private = LocMemCache("ibweb-runtime", {"TIMEOUT": None, "OPTIONS": {"MAX_ENTRIES": 10**9}})
    return _private
