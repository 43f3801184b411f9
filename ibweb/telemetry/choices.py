"""Choices of the telemetry app."""

from django.db import models


class CollectorSource(models.TextChoices):
    COMMANDS = "commands", "Run infiniband-diags commands"
    DIRECTORY = "directory", "Read outputs from a drop directory"
    PUSH = "push", "Samples pushed to the API"


class SweepStatus(models.TextChoices):
    RUNNING = "running", "Running"
    OK = "ok", "Complete"
    PARTIAL = "partial", "Partial (some shards failed)"
    FAILED = "failed", "Failed"
