"""Choices of the twin app."""

from django.db import models

from fabric_engine.workload import PATTERNS


class JobSourceKind(models.TextChoices):
    SLURM = "slurm", "Run squeue --json (through the collector's command prefix)"
    DIRECTORY = "directory", "Read squeue/scontrol --json files from a drop directory"
    PUSH = "push", "Jobs pushed to the API"


class JobOrigin(models.TextChoices):
    SLURM = "slurm", "Slurm"
    PUSH = "push", "Push API"


#: Collective patterns a job can be assumed to run (the emulator's patterns).
PATTERN_CHOICES = [(name, name.replace("_", " ")) for name in PATTERNS]
