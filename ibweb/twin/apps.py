from django.apps import AppConfig


class TwinConfig(AppConfig):
    """The digital twin of telemetry-fed fabrics: job sources, expected against observed, the cabling plan."""

    name = "ibweb.twin"
    verbose_name = "Digital twin"

    def ready(self) -> None:
        from . import signals  # noqa: F401
