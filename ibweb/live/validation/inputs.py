"""What a fabric's validation is computed from, gathered for a fabric row: the fabric its engine published (the
runtime record), the link-health grade and effective BER of every port (:func:`ibweb.runtime.health.ports_for`,
graded by the fabric's leader), the device readings its collectors and pushes gave
(:func:`ibweb.runtime.device_readings.read`: switch vitals, ``sminfo``, ``smpquery pkeys``) and its cabling plan
(the twin app's, read by model name: ``ibweb.live`` imports no app above it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from django.apps import apps

from fabric_engine.errors import FabricEngineError
from fabric_engine.topology import Fabric as EngineFabric
from ibweb.runtime import device_readings, record
from ibweb.runtime import health as health_store

__all__ = ["Inputs", "gather", "grades_on"]

log = logging.getLogger("ibweb.live")

_plans: dict[int, tuple[object, object]] = {}  # fabric id -> (the plan row's upload time, its Plan)


@dataclass(frozen=True)
class Inputs:
    """One fabric's inputs: ``fabric`` and its record ``version``, ``plan`` (None: none uploaded), ``devices`` (a
    :class:`fabric_engine.devices.DeviceReadings` or None), ``port_grade``/``score`` per port slot and the time of
    that grading (None: not graded), ``notes``: inputs that could not be read, why."""

    fabric: EngineFabric
    version: str
    plan: object | None
    devices: object | None
    port_grade: np.ndarray | None
    score: np.ndarray | None
    graded_t: float | None
    notes: tuple[str, ...] = ()


def grades_on(fabric: EngineFabric, ports: dict | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The grade (int8, -1 unknown) and effective BER (else raw; NaN: not read) per port slot of ``fabric`` from the
    leader's per-port series (:func:`ibweb.runtime.health.ports_for`: ``node``, ``port``, ``grade``, ``raw``,
    ``effective``); (None, None) without them."""
    if ports is None:
        return None, None
    node = np.asarray(ports["node"], np.int64)
    port = np.asarray(ports["port"], np.int64)
    ok = (node >= 0) & (node < fabric.num_nodes)
    ok[ok] &= (port[ok] >= 1) & (port[ok] <= fabric.nports[node[ok]])
    slot = fabric.port_offset[node[ok]] + port[ok] - 1
    P = int(fabric.nports.sum())
    grade = np.full(P, -1, np.int8)
    np.maximum.at(grade, slot, np.asarray(ports["grade"], np.int8)[ok])
    eff = np.asarray(ports["effective"], np.float64)[ok]
    raw = np.asarray(ports["raw"], np.float64)[ok]
    score = np.full(P, np.nan)
    score[slot] = np.where(np.isnan(eff), raw, eff)
    return grade, score


def _plan(row, notes: list[str]):
    """The fabric's cabling plan (parsed once per upload), or None."""
    model = apps.get_model("twin", "CablingPlan") if apps.is_installed("ibweb.twin") else None
    if model is None:
        return None
    found = model.objects.filter(fabric_id=row.pk).values("uploaded", "text", "filename").first()
    if found is None:
        _plans.pop(row.pk, None)
        return None
    kept = _plans.get(row.pk)
    if kept is not None and kept[0] == found["uploaded"]:
        return kept[1]
    from fabric_engine.twin.plan import read_plan

    try:
        plan = read_plan(found["text"], found["filename"] or "<plan>")
    except FabricEngineError as e:  # an upload that no longer reads: judged against the fabric's own majority
        notes.append(f"cabling plan {found['filename']}: {e}")
        plan = None
    _plans[row.pk] = (found["uploaded"], plan)
    return plan


def gather(row) -> Inputs | None:
    """The inputs of fabric row ``row``; None while its engine has published no fabric."""
    h = record.head_of(row)
    f = record.fabric(row.pk, h) if h is not None else None
    if f is None:
        return None
    notes: list[str] = []
    ports = health_store.ports_for(row)
    grade, score = grades_on(f, ports)
    return Inputs(f, record.fabric_version(h), _plan(row, notes), device_readings.read(row.pk), grade, score,
                  None if ports is None else float(ports["t"]), tuple(notes))
