from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "ibweb.telemetry"
    verbose_name = "Telemetry"
    #: The fabric runner (``ibweb.live``) drives fabrics of mode ``telemetry`` with this source.
    fabric_sources = {"telemetry": "ibweb.telemetry.source.TelemetrySource"}
    #: The new-fabric page's real fabric is read by this collector (:class:`ibweb.fabrics.forms.WatchPart`).
    watch_parts = ("ibweb.telemetry.forms.CollectorPart",)
    #: A fabric's events page shows its reference cabling (:func:`ibweb.events.views.page_sections`).
    events_page_sections = (("telemetry/reference_cabling.html", "ibweb.telemetry.reference_page.reference_context"),)
