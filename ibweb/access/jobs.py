"""Which jobs a view sees: those of its tenants, named in specs, results and the twin by tenant slug or name."""

from __future__ import annotations

from collections.abc import Iterable

from django.apps import apps

from .view import Level, View

__all__ = ["job_tenants", "visible_job_ids", "shown_job_rows"]


def job_tenants(view: View) -> frozenset[str] | None:
    """Slugs and names of the tenants whose jobs ``view`` sees (jobs name their tenant by either); ``None``: all."""
    if view.sees_all:
        return None
    if view.level < Level.TENANTS:
        return frozenset()
    rows = apps.get_model("tenancy", "Tenant").objects.filter(pk__in=view.tenant_ids).values_list("slug", "name")
    return frozenset(s for pair in rows for s in pair)


def visible_job_ids(view: View, spec: dict) -> frozenset[str] | None:
    """Names of the jobs of a scenario ``spec`` that ``view`` sees (``None``: all)."""
    tenants = job_tenants(view)
    if tenants is None:
        return None
    return frozenset(str(j.get("name")) for j in spec.get("jobs", []) if isinstance(j, dict)
                     and j.get("tenant") in tenants)


def shown_job_rows(view: View, rows: Iterable[dict], spec: dict | None = None) -> frozenset[str] | None:
    """IDs of the rows (``{"id", "tenant"}``: per-job rows of a result) whose job ``view`` sees (``None``: all).

    A row is decided by its own ``tenant`` (the jobs of a telemetry fabric are the twin's, not the
    scenario's); a row without one (stored before rows named their tenant) by the jobs of ``spec``.
    """
    tenants = job_tenants(view)
    if tenants is None:
        return None
    legacy = visible_job_ids(view, spec or {}) or frozenset()
    return frozenset(str(r.get("id")) for r in rows if isinstance(r, dict)
                     and (r["tenant"] in tenants if "tenant" in r else str(r.get("id")) in legacy))
