"""Choices of the events app."""

from django.db import models


class Severity(models.TextChoices):
    """How bad an event is, least first (ordered, so ``>=`` filters work on :attr:`rank`)."""

    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    CRITICAL = "critical", "Critical"


#: Rank of each severity (higher is worse), for ordering and "at least" filters.
SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.CRITICAL: 2}


class ObjectType(models.TextChoices):
    """What an event is about: where the map focuses when the event is opened."""

    LINK = "link", "Link"
    PORT = "port", "Port"
    NODE = "node", "Node"
    JOB = "job", "Job"
    FABRIC = "fabric", "Fabric"
