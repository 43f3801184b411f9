from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "ibweb.live"
    verbose_name = "Live feed"

    def ready(self) -> None:
        from ibweb.live.engine.emulated import EmulatedSource
        from ibweb.live.feed import receivers  # noqa: F401 - connects the signal receivers
        from ibweb.runtime import source_registry

        source_registry.register("emulated", EmulatedSource)  # other apps register theirs (see engine/sources.py)
