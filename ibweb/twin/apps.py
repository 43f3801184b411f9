from django.apps import AppConfig


class TwinConfig(AppConfig):
    """The digital twin of telemetry-fed fabrics: job sources, expected against observed, the cabling plan."""

    name = "ibweb.twin"
    verbose_name = "Digital twin"
    #: The new-fabric page's real fabric gets its job source and cabling plan here (after its collector).
    watch_parts = ("ibweb.twin.forms.TwinPart",)
    #: Analyses run on what the fabric's engine runs now (:func:`ibweb.fabrics.tasks.run_analysis`).
    live_analyses = {"whatif_live": "ibweb.twin.analysis.run_live"}

    def ready(self) -> None:
        from ibweb.runtime import source_registry

        from . import signals  # noqa: F401
        from .source_factory import telemetry_source

        # Telemetry-fed fabrics run with the twin in their source: the telemetry source, the fabric's twin injected.
        source_registry.register("telemetry", telemetry_source)
