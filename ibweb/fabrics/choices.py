"""Choices of the fabrics app."""

from django.db import models


class FabricMode(models.TextChoices):
    EMULATED = "emulated", "Emulated"
    TELEMETRY = "telemetry", "Telemetry-fed"


class RoutingEngine(models.TextChoices):
    MINHOP = "minhop", "Min-hop"
