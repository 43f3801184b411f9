"""An API client that pushes to the telemetry fabric ``pushed`` with its collector's token."""

from __future__ import annotations

from collections.abc import Iterator

from django.core.cache import cache
from rest_framework.test import APIClient

from ibweb.fabrics.models import Fabric, FabricMode
from ibweb.telemetry.choices import CollectorSource
from ibweb.telemetry.models import CollectorConfig, PushToken

__all__ = ["push_client"]


def push_client() -> Iterator[APIClient]:
    """For a fixture to ``yield from``: a push collector's fabric ``pushed`` and a client holding its token
    (``client.config`` is the collector), the cache empty before and after."""
    cache.clear()
    fabric = Fabric.objects.create(name="pushed", slug="pushed", mode=FabricMode.TELEMETRY, tick_s=1.0)
    config = CollectorConfig.objects.create(fabric=fabric, source=CollectorSource.PUSH)
    _, raw = PushToken.issue(config, "collector-1")
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    c.config = config
    yield c
    cache.clear()
