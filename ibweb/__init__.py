"""ibweb: watch and steer the InfiniBand fabric of an AI/HPC cluster."""

from .celery import app as celery_app

__all__ = ["celery_app"]
