"""The twin of one telemetry-fed fabric inside its engine: jobs, expected against observed, the plan, every tick.

The fabric's source calls :meth:`FabricTwin.step` with each state it observed and the
routing in force. The twin (:class:`fabric_engine.twin.Twin`) places the jobs of the
fabric's job source on the discovered HCAs, names them in the state (jobs panel, job
highlight, tenant filter and hotspots work as for an emulated fabric), compares each
link with what the jobs should drive, applies the persistence rule, and checks the
discovered cabling against the plan whenever either changed. What it found goes

* into the state: ``jobs`` (the feed's job entries), ``hotspots`` (with their jobs),
  ``alerts`` and ``twin`` (per-link overlay arrays, aggregates only). The alerts are the
  persistent deviations (kind ``twin``, without job IDs) and one per difference from the
  plan (kind ``plan``, at most :data:`PLAN_ALERTS`, then one for the rest); the engine's
  event store (:mod:`ibweb.events`) keeps each as an event, raised when it appears and
  cleared when it goes, like every other alert of the frame;
* into the cache for every web process (:mod:`.report_cache`): the ranked deviations, the jobs
  with their figures, the plan report; the API filters it per user.

Reads of the database happen only when something changed: the job version
(:func:`ibweb.twin.jobs.jobs_version`) or the configuration version
(:func:`.report_cache.config_version`, bumped when the job source or the plan is saved).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

import numpy as np
from django.conf import settings

from fabric_engine.routing import Routing
from fabric_engine.state import FabricState
from fabric_engine.twin import Twin, TwinReport
from fabric_engine.twin.catalog import workload_jobs
from fabric_engine.twin.persistence import without_jobs
from fabric_engine.workload import Job

from . import jobs as jobsvc
from . import plans
from .choices import JobSourceKind
from .congestion import congestion_control_of
from .models import CablingPlan, JobSource
from .report_cache import config_version, store_job_links, store_report

__all__ = ["FabricTwin", "plan_alerts", "PLAN_ALERTS"]

log = logging.getLogger("ibweb.twin")

#: Differences from the plan raised as alerts one by one; the rest are one alert.
PLAN_ALERTS = 100


class FabricTwin:
    """The twin of one fabric in its engine process (see the module docstring)."""

    plan: CablingPlan | None  # the fabric's cabling plan (read by the telemetry source: its alerts replace some)

    def __init__(self, fabric_id: int) -> None:
        self.fabric_id = fabric_id
        self.twin = Twin()
        self.source: JobSource | None = None
        self.plan: CablingPlan | None = None
        self._config: str | None = None
        self._jobs: str | None = None
        self._plan_key: tuple | None = None
        self._plan_report: dict | None = None
        self._poll: threading.Thread | None = None
        self._poll_started = 0.0
        self._catalog_of: object | None = None
        self._last: TwinReport | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ inputs
    def refresh(self) -> bool:
        """Re-read the job source, the plan and the jobs when their versions changed; returns whether jobs changed."""
        version = config_version(self.fabric_id)
        if version != self._config:
            self._config = version
            self.source = JobSource.objects.select_related("fabric__collector").filter(
                fabric_id=self.fabric_id).first()
            self.plan = CablingPlan.objects.filter(fabric_id=self.fabric_id).first()
            s = self.source
            self.twin = Twin(s.hostmap(), patterns=s.patterns, default_pattern=s.default_pattern,
                             thresholds=s.thresholds(), raise_after=s.raise_after, clear_after=s.clear_after,
                             congestion=s.fabric.congestion_model,
                             congestion_control=congestion_control_of(s.fabric)) if s is not None else Twin()
            self._jobs = None
            self._plan_key = None
        jv = jobsvc.jobs_version(self.fabric_id)
        if jv == self._jobs:
            return False
        self._jobs = jv
        return self.twin.set_jobs(jobsvc.engine_jobs(self.fabric_id))

    def poll_due(self) -> bool:
        """Embedded default only (no Celery beat): whether this engine should poll the scheduler now."""
        s = self.source
        if s is None or not s.enabled or s.kind == JobSourceKind.PUSH or not settings.CELERY_TASK_ALWAYS_EAGER:
            return False
        if self._poll is not None and self._poll.is_alive():
            return False
        last = max(s.last_poll.timestamp() if s.last_poll else 0.0, self._poll_started)
        return time.time() - last >= s.interval_s

    def start_poll(self) -> None:
        """Poll the scheduler in a thread (embedded default); the next :meth:`refresh` picks the jobs up."""
        source = self.source

        def run() -> None:
            try:
                jobsvc.poll(source)
            except Exception as exc:  # recorded on the source (last_error); the engine goes on
                log.warning("fabric %s: job poll failed: %s", self.fabric_id, exc)

        self._poll_started = time.time()
        self._poll = threading.Thread(target=run, name=f"twin-poll:{self.fabric_id}", daemon=True)
        self._poll.start()

    # --------------------------------------------------------------- tick
    def catalog_jobs(self, routing: Routing | None, now: float) -> list[Job]:
        """The emulator's jobs of the running known jobs, one per rail (what-if analyses run these)."""
        if routing is None:
            return []
        known, _ = self.twin.place(routing.fabric, now)
        return workload_jobs(known)[0]

    def catalog(self, routing: Routing | None, now: float) -> list[dict]:
        """The runtime record's job catalog: per running job ``{"id", "tenant", "pattern", "hosts": [HCA node],
        "links": [directed link it can use], "spec": {}}`` (the jobs API, highlight and tenant filter read it)."""
        if routing is None:
            return []
        with self._lock:
            self.refresh()
            known, _ = self.twin.place(routing.fabric, now)
            incidence, _ = self.twin.model(routing, known)
        return [{"id": k.job_id, "tenant": k.tenant, "pattern": k.pattern, "hosts": k.nodes.tolist(),
                 "links": incidence.indices[incidence.indptr[i]:incidence.indptr[i + 1]].tolist(), "spec": {}}
                for i, k in enumerate(known)]

    @property
    def catalog_version(self) -> tuple:
        """Changes when the running jobs or their placement change (the record's catalog is then published again)."""
        placed = self.twin._placed
        return (self._jobs, placed[0] if placed is not None else None)

    def step(self, routing: Routing, state: FabricState, now: float, *, stale: np.ndarray | None = None,
             compared: bool = True) -> FabricState:
        """``state`` with the twin's jobs, hotspots, alerts and overlay (see the module docstring)."""
        with self._lock:
            return self._step(routing, state, now, stale, compared)

    def _step(self, routing, state, now, stale, compared) -> FabricState:
        if self.poll_due():
            self.start_poll()
        self.refresh()
        f = routing.fabric
        rate = np.asarray(state.rate_gbps, dtype=np.float64)
        rep = self.twin.evaluate(routing, rate, now, stale=stale, compared=compared and rate.any())
        self._last = rep
        plan_alerts = self._check_plan(f)
        self._publish(rep, now)
        hotspots = rep.name_hotspots(list(state.hotspots), rate)
        alerts = list(state.alerts) + [without_jobs(a) for a in rep.alerts.active]
        alerts += plan_alerts
        twin = {"overlay": rep.overlay(), "deviations": len(rep.deviations),
                "alerts": len(rep.alerts.active), "jobs": len(rep.jobs),
                "plan": None if self._plan_report is None else {"summary": self._plan_report["summary"],
                                                                "counts": self._plan_report["counts"],
                                                                "link_status": self._plan_report["link_status"]}}
        return dataclasses.replace(state, jobs=rep.job_states, hotspots=hotspots, alerts=alerts, twin=twin)

    def _check_plan(self, fabric) -> list[dict]:
        """One alert per difference from the plan (checked when the discovery or the plan changed)."""
        if self.plan is None:
            self._plan_report = None
            return []
        key = (id(fabric), self.plan.pk, self.plan.uploaded)
        if key != self._plan_key:
            self._plan_key = key
            self._plan_report, changed = plans.check(self.plan, fabric)
            if changed:
                log.info("fabric %s: cabling against the plan %s: %s", self.fabric_id, self.plan.filename,
                         self._plan_report["summary"])
        return plan_alerts(self._plan_report)

    def _publish(self, rep: TwinReport, now: float) -> None:
        """The report every web process reads (:mod:`.report_cache`); each job's links only when they change."""
        out = {"t": now, "jobs": rep.jobs, "problems": rep.problems, "deviations": rep.deviations,
               "alerts": rep.alerts.active, "links": 2 * rep.fabric.num_links, "plan": self._plan_report,
               "source": None if self.source is None else {"kind": self.source.kind,
                                                           "last_error": self.source.last_error}}
        store_report(self.fabric_id, out)
        if rep.incidence is not self._catalog_of:
            self._catalog_of = rep.incidence
            f = rep.fabric
            nodes = {kj.job_id: kj.nodes for kj in (rep.traffic.jobs if rep.traffic else [])}
            store_job_links(self.fabric_id, {
                j["id"]: {"links": rep.incidence[k].indices.tolist(), "nodes": nodes[j["id"]].tolist(),
                          "guids": [f"0x{int(g):016x}" for g in f.guid[nodes[j["id"]]]]}
                for k, j in enumerate(rep.jobs)})


def plan_alerts(report: dict | None, most: int = PLAN_ALERTS) -> list[dict]:
    """The alerts of a plan report: one per difference (the first ``most``), one for the rest."""
    if not report or report["ok"]:
        return []
    out = []
    for issue in report["issues"][:most]:  # at most PLAN_ALERTS
        ends = (issue.get("planned") or issue.get("found") or "").split(" - ")
        alert = {"kind": "plan", "deviation": issue["kind"], "severity": "warning", "message": issue["message"],
                 "port": ends[0]}
        if len(ends) == 2:
            alert["a"], alert["b"] = ends
        for peer in ("found_a", "found_b"):  # the ports found cabled instead (named, so views can hide them)
            if issue.get(peer):
                alert[peer] = issue[peer]
        out.append(alert)
    rest = sum(report["counts"].values()) - len(out)
    if rest > 0:
        out.append({"kind": "plan", "deviation": "more", "severity": "warning",
                    "message": f"{rest} more differences from the plan ({report['summary']} in all)"})
    return out
