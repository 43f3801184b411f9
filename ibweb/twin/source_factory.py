"""The source of a telemetry-fed fabric, built with the fabric's twin: the twin builds on telemetry, not the
other way round (the twin app registers :func:`telemetry_source` for the ``telemetry`` kind when it starts)."""

from __future__ import annotations

from ibweb.telemetry.source import TelemetrySource

from .fabric_twin import FabricTwin

__all__ = ["telemetry_source"]


def telemetry_source(row) -> TelemetrySource:
    """The source of a telemetry-fed fabric ``row`` with its twin: the twin builds on telemetry, not the other way."""
    return TelemetrySource(row, twin=FabricTwin(row.pk))
