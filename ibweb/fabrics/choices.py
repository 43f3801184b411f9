"""Choices of the fabrics app."""

from django.db import models

from fabric_engine.credit_tick import CONGESTION_MODELS as _MODELS
from fabric_engine.routing import engine_choices


class FabricMode(models.TextChoices):
    EMULATED = "emulated", "Emulated"
    TELEMETRY = "telemetry", "Telemetry-fed"


#: Routing engines a fabric may use: ``(name, human name)`` from the engine's own registry.
ROUTING_ENGINES = engine_choices()
#: Congestion models an emulated fabric's engine may run: ``(name, human name)`` (:mod:`fabric_engine.credit_tick`).
CONGESTION_MODELS = list(_MODELS.items())


class FabricRole(models.TextChoices):
    """What a fabric is for in its cluster."""

    COMPUTE = "compute", "Compute plane"
    STORAGE = "storage", "Storage fabric"
    MANAGEMENT = "management", "Management fabric"


class TopologySource(models.TextChoices):
    GENERATOR = "generator", "Generated design"
    UPLOAD = "upload", "Uploaded file (ibnetdiscover, ibsim net, ibweb JSON)"


class Generator(models.TextChoices):
    FAT_TREE = "fat_tree", "Fat tree"
    RAIL_OPTIMIZED = "rail_optimized", "Rail-optimized (SuperPOD-style)"
    DRAGONFLY_PLUS = "dragonfly_plus", "Dragonfly+"
