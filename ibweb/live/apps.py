from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "ibweb.live"
    verbose_name = "Live feed"

    def ready(self) -> None:
        from ibweb.live.engine.emulated import EmulatedSource
        from ibweb.live.feed import receivers  # noqa: F401 - connects the signal receivers
        from ibweb.runtime import source_registry

        source_registry.register("emulated", EmulatedSource)  # other apps register theirs (see engine/sources.py)
        _check_health_thresholds()


def _check_health_thresholds() -> None:
    """A site's threshold table that does not read stops the start, naming its file and row."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    from fabric_engine.errors import FabricEngineError
    from fabric_engine.health.thresholds import load

    if settings.IBWEB_HEALTH_THRESHOLDS:
        try:
            load(settings.IBWEB_HEALTH_THRESHOLDS)
        except (FabricEngineError, OSError) as exc:
            raise ImproperlyConfigured(f"IBWEB_HEALTH_THRESHOLDS: {exc}") from exc
