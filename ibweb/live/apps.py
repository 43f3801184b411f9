from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "ibweb.live"
    verbose_name = "Live feed"

    def ready(self) -> None:
        from . import receivers  # noqa: F401 - connects the signal receivers
