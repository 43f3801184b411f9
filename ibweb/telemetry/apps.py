from django.apps import AppConfig


class TelemetryConfig(AppConfig):
    name = "ibweb.telemetry"
    verbose_name = "Telemetry"
