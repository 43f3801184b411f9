"""Which source factory serves which kind (``mode``) of fabric: registered explicitly, each kind once.

Each app registers its own sources in its ``AppConfig.ready()``, so that the runner (``ibweb.live``) imports
none of them and no app order decides anything::

    def ready(self) -> None:
        from ibweb.runtime import source_registry
        from .source import TelemetrySource

        source_registry.register("telemetry", TelemetrySource)

A factory is called with the fabric row and returns the source (:class:`ibweb.live.engine.sources.FabricSource`).
A kind registered twice with another factory is a configuration error raised at start, naming both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured

__all__ = ["SourceRegistry", "register", "factories", "registry"]

Factory = Callable[[Any], Any]


def _name(factory: Factory) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"


class SourceRegistry:
    """Source factories by fabric kind."""

    def __init__(self) -> None:
        self._factories: dict[str, Factory] = {}

    def register(self, kind: str, factory: Factory) -> None:
        """Serve fabrics of ``kind`` with ``factory``; raises :class:`ImproperlyConfigured` naming both factories
        when ``kind`` has another (registering the same one again, as a second ``ready()`` does, changes nothing)."""
        known = self._factories.get(kind)
        if known is not None and known is not factory:
            raise ImproperlyConfigured(f"fabric source {kind!r} registered twice: by {_name(known)} "
                                       f"and by {_name(factory)}")
        self._factories[kind] = factory

    def factories(self) -> dict[str, Factory]:
        """``{kind: factory}`` of every registered kind."""
        return dict(self._factories)


#: The process's registry, filled by the apps' ``ready()``.
registry = SourceRegistry()
register = registry.register
factories = registry.factories
