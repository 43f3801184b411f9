from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "ibweb.telemetry"
    verbose_name = "Telemetry"
    # Fabrics of mode ``telemetry`` run a ``source.TelemetrySource``, registered by the twin app with the twin in it.
    #: The new-fabric page's real fabric is read by this collector (:class:`ibweb.fabrics.forms.WatchPart`).
    watch_parts = ("ibweb.telemetry.forms.CollectorPart",)
    #: A fabric's events page shows its reference cabling (:func:`ibweb.events.views.page_sections`).
    events_page_sections = (("telemetry/reference_cabling.html", "ibweb.telemetry.reference_page.reference_context"),)
