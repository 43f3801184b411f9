from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "ibweb.live"
    verbose_name = "Live feed"
    #: Sources of the fabric runner, by fabric mode (other apps declare theirs; see ``sources.py``).
    fabric_sources = {"emulated": "ibweb.live.engine.emulated.EmulatedSource"}

    def ready(self) -> None:
        from ibweb.live.feed import receivers  # noqa: F401 - connects the signal receivers
