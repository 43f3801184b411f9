from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "ibweb.events"
    verbose_name = "Events and alerts"

    def ready(self) -> None:
        from . import receivers  # noqa: F401 - records the runner's alerts
