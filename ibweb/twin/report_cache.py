"""What a fabric's twin and the web processes share through the cache (Redis at scale), by fabric.

The twin in the fabric's engine (:class:`~ibweb.twin.fabric_twin.FabricTwin`) publishes its newest report
(:func:`store_report`: the ranked deviations, the jobs with their figures, the plan report) and its jobs' links
(:func:`store_job_links`); the API, the pages and the analyses read them in any process (:func:`report`,
:func:`job_links`). Saving a job source or a plan bumps the configuration version (:func:`bump_config`) that
tells the twin to re-read them (:func:`config_version`).
"""

from __future__ import annotations

import time

from django.core.cache import cache

__all__ = ["report", "store_report", "job_links", "store_job_links", "config_version", "bump_config",
           "REPORT_TTL_S"]

#: How long a published report stays readable without a newer one.
REPORT_TTL_S = 600


def _key(fabric_id: int, part: str) -> str:
    return f"ibweb:twin:{fabric_id}:{part}"


def config_version(fabric_id: int) -> str:
    """The version of the fabric's job source and plan ("0" until one is saved)."""
    return cache.get(_key(fabric_id, "config")) or "0"


def bump_config(fabric_id: int) -> None:
    """Tell the fabric's engine that its job source or plan changed."""
    cache.set(_key(fabric_id, "config"), f"{time.time_ns():x}", None)


def report(fabric_id: int) -> dict | None:
    """The newest twin report of a fabric (any process), or None."""
    return cache.get(_key(fabric_id, "report"))


def store_report(fabric_id: int, payload: dict) -> None:
    """Publish a fabric's newest twin report for every web process (:func:`report`)."""
    cache.set(_key(fabric_id, "report"), payload, REPORT_TTL_S)


def job_links(fabric_id: int) -> dict[str, dict]:
    """Job ID -> ``{"links": [directed link], "nodes": [HCA node], "guids": [HCA node GUID]}`` (any process)."""
    return cache.get(_key(fabric_id, "job-links")) or {}


def store_job_links(fabric_id: int, links: dict[str, dict]) -> None:
    """Publish the links, nodes and GUIDs of a fabric's running jobs (:func:`job_links`), until the next change."""
    cache.set(_key(fabric_id, "job-links"), links, None)
