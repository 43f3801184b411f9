"""What of the twin a user may see, from :mod:`ibweb.access` (fail-closed).

* ``ALL`` sees everything.
* ``TENANTS`` sees their tenants' jobs (:func:`ibweb.access.job_tenants`), the deviations and
  alerts that name no host hidden from them (:func:`ibweb.access.redaction`: the hosts of
  their tenants' partitions, and here also the HCAs of their own running jobs), with job
  lists cut to their jobs, and the plan's counts.
* ``FABRIC`` sees the same without any job or host: deviations between switches, counts.
* ``NONE`` sees nothing (the views answer 404).

Every deviation lists the node GUIDs of the hosts it names (``hosts``).
"""

from __future__ import annotations

from ibweb.access import Level, View, job_tenants, redaction

__all__ = ["tenant_names", "shown_hosts", "visible_jobs", "visible_items", "visible_plan"]


def tenant_names(view: View) -> frozenset[str] | None:
    """Slugs and names of the tenants whose jobs ``view`` sees (None: all)."""
    return job_tenants(view)


def shown_hosts(view: View, fabric, job_ids: set[str]) -> set[str] | None:
    """GUIDs (``"0x..."``) of the hosts ``view`` may see named on ``fabric`` (None: all)."""
    r = redaction(view, fabric)
    if r.host_guids is None:
        return None
    from .report_cache import job_links

    links = job_links(fabric.pk)
    return {f"0x{int(g):016x}" for g in r.host_guids} | {g for j in job_ids for g in links.get(j, {}).get("guids", [])}


def visible_jobs(jobs: list[dict], names: frozenset[str] | None, key: str = "tenant") -> list[dict]:
    """The jobs (dicts with a tenant under ``key``) of the visible tenants."""
    return list(jobs) if names is None else [j for j in jobs if j.get(key) in names]


def visible_items(items: list[dict], names: frozenset[str] | None, jobs: set[str],
                  guids: set[str] | None) -> list[dict]:
    """Deviations or alerts a user may see: none naming a hidden host; job lists cut to ``jobs``.

    ``jobs``: IDs of the user's visible jobs; ``guids``: GUIDs of the hosts they may see (None: all).
    """
    out = []
    for item in items:  # a bounded, ranked list
        if guids is not None and any(g not in guids for g in item.get("hosts") or []):
            continue
        listed = item.get("jobs")
        if names is None or listed is None:
            out.append(item)
            continue
        mine = [j for j in listed if j in jobs]
        text = item.get("message")
        if text is not None and listed:
            text = text.removesuffix(f"; jobs {', '.join(listed[:5])}")
            if mine:
                text += f"; jobs {', '.join(mine[:5])}"
        out.append({**item, "jobs": mine, **({"message": text} if text is not None else {})})
    return out


def visible_plan(report: dict | None, view: View) -> dict | None:
    """The plan report (``ALL``) or its counts and summary only (it names hosts and their ports)."""
    if report is None or view.level == Level.ALL:
        return report
    return {k: report[k] for k in ("ok", "counts", "summary", "planned_cables", "discovered_cables", "checked")
            if k in report}
