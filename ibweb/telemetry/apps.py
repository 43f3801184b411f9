from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "ibweb.telemetry"
    verbose_name = "Telemetry"
    #: The fabric runner (``ibweb.live``) drives fabrics of mode ``telemetry`` with this source.
    fabric_sources = {"telemetry": "ibweb.telemetry.source.TelemetrySource"}
