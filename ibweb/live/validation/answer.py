"""A fabric's validation report as one user reads it: the kept report (computed by the task when due, marked
``stale`` meanwhile, :func:`ibweb.live.validation.store.current`), relabelled for the user's view (:mod:`.shown`), the
isolation advice joined with the jobs and the cable what-ifs (:mod:`.isolation`), and the daily digest."""

from __future__ import annotations

from ibweb.access import redaction, view_of, visible_partitions
from ibweb.runtime import record

from . import store
from .isolation import joined
from .shown import shown_digest, shown_report

__all__ = ["visible_pkeys", "validation_for", "shown_changes", "NotReady"]


class NotReady(Exception):
    """The fabric's engine has published no fabric yet: no report can be computed."""


def visible_pkeys(view, row) -> set[int] | None:
    """The base P_Keys of ``row``'s partitions ``view`` sees (None: every one, the ``ALL`` level)."""
    if view.sees_all:
        return None
    return {int(k) & 0x7FFF for k in visible_partitions(view).filter(fabric=row).values_list("pkey", flat=True)}


def validation_for(user, row, *, problems_only: bool = False, refresh: bool = False, kept_only: bool = False) -> dict:
    """``row``'s report as ``user`` may read it: ``{"fabric", "t", "interval_s", "stale", "age_s", "version",
    "report", "isolation", "isolated", "digest", "inputs"}`` (the kept report, ``stale`` when due again: the task
    computes it; ``isolated``: the ports isolated now); raises :class:`NotReady` while the engine has published no
    fabric or none is kept yet. ``refresh``: compute it now (a caller checks who may ask); ``kept_only``: never
    compute it (a panel that shows a part)."""
    h = record.head_of(row)
    fabric = record.fabric(row.pk, h) if h is not None else None
    if fabric is None:
        raise NotReady(f"fabric {row.slug}: its engine has not published the fabric yet; try again in a few seconds")
    version = record.fabric_version(h)
    if refresh:
        stored = store.refresh(row)
    elif kept_only:  # a panel: the kept report or nothing
        stored = store.read(row.pk)
    else:
        stored = store.current(row, version)
    if stored is None or stored.get("version") != version:
        raise NotReady(f"fabric {row.slug}: its validation report is being computed; try again in a few seconds")
    view = view_of(user)
    shown = redaction(view, row, fabric)
    pkeys = visible_pkeys(view, row)
    out = shown_report(stored, row.slug, fabric, shown, pkeys, problems_only=problems_only)
    out["isolation"] = joined(out["isolation"], row, fabric, record.jobs(row.pk, h), shown,
                              key=(row.pk, h["version"], stored["t"]))
    out["digest"] = shown_digest(store.digest(row.pk, stored), fabric, shown, pkeys)
    return {"fabric": row.slug, "interval_s": store.interval_s(), "stale": store.stale(stored, version, row.pk),
            "age_s": round(store.age_s(stored), 1), **out}


def shown_changes(view, row, changes: dict) -> dict | None:
    """``changes`` (:func:`ibweb.live.validation.store.since_sent`) as ``view`` may read them: the hosts it may not
    see relabelled and the P_Keys of partitions it does not see hidden (:func:`.shown.shown_digest`); None while
    the fabric's engine has published no fabric (nothing to relabel against: nothing shown)."""
    h = record.head_of(row)
    fabric = record.fabric(row.pk, h) if h is not None else None
    if fabric is None:
        return None
    return shown_digest(changes, fabric, redaction(view, row, fabric), visible_pkeys(view, row))
