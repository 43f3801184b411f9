"""Which ports each job's traffic used over its run, kept after the job ended (issue 40: a job's links over its
run).

A scheduler's running jobs go from the twin's rows when they end (``ibweb.twin.jobs``), and the runtime record's
job catalog holds the running jobs only. The fabric's leader notes here, with each per-port history write, the
out ports of the directed links each job of the catalog crosses (:func:`catalog_ports`) and when it saw the job:
``first`` and ``last`` (s), the ports the union over the run. One small SQLite file beside the embedded
store's (``job-runs.sqlite3`` in the folder of ``IBWEB_TSDB_PATH``, the var dir shared as the history ring's files
are), whatever the time-series backend; a run is kept as long as the per-port history
(``IBWEB_TSDB_RETENTION_DAYS``).

A run is one job of one tenant: when a job's name comes back for another tenant, or after it was not seen for longer
than :data:`RUN_GAP_S`, a new run starts (its first seen, its ports and its tenant replace the old run's), so a
reused name never inherits another job's links.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fabric_engine.topology import Fabric
from ibweb.tsdb.series import PORT_ID

__all__ = ["RUN_GAP_S", "JobRun", "JobRuns", "catalog_ports", "job_runs"]

#: Seconds a job may go unseen and still be the same run when its name is seen again (the leader notes the running
#: jobs at least every ``JOB_NOTE_S`` = 60 s of sweep time; this leaves room for a leader change or a restart).
RUN_GAP_S = 900.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (fabric INTEGER NOT NULL, job TEXT NOT NULL, tenant TEXT NOT NULL,
  first REAL NOT NULL, last REAL NOT NULL, ports BLOB NOT NULL, PRIMARY KEY (fabric, job));
CREATE INDEX IF NOT EXISTS runs_last ON runs (last);
"""


@dataclass(frozen=True)
class JobRun:
    """A job as its fabric's leader saw it: ``tenant``, ``first`` and ``last`` seen (s), ``ports``
    (:data:`~ibweb.tsdb.series.PORT_ID`, unique, sorted): the out ports of the links it crossed."""

    job: str
    tenant: str
    first: float
    last: float
    ports: np.ndarray


def catalog_ports(f: Fabric, links: Sequence[int]) -> np.ndarray:
    """The out ports (:data:`~ibweb.tsdb.series.PORT_ID`, unique, sorted) of directed links ``links`` of ``f``
    (indices outside it left out)."""
    d = np.asarray(links, dtype=np.int64)
    d = d[(d >= 0) & (d < 2 * f.num_links)]
    out = np.empty(len(d), dtype=PORT_ID)
    out["guid"], out["port"] = f.guid[f.dl_src[d]], f.dl_src_port[d]
    return np.unique(out)


class JobRuns:
    """The job runs of every fabric in the SQLite file ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def note(self, fabric_id: int, t: float, jobs: Sequence[tuple[str, str, np.ndarray]],
             keep_s: float | None = None, gap_s: float = RUN_GAP_S) -> None:
        """Jobs ``(job, tenant, ports)`` seen running at ``t``: a new job starts its run, a known one's ``last``
        moves to ``t`` and its ports grow by ``ports``; a known name of another tenant, or last seen more than
        ``gap_s`` before ``t``, starts a new run. With ``keep_s``, runs last seen before ``t - keep_s`` go. Only the
        rows of ``jobs`` are read."""
        fabric, t = int(fabric_id), float(t)
        names = json.dumps(sorted({str(job) for job, _, _ in jobs}))
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                known = {job: (tenant, first, last, blob) for job, tenant, first, last, blob in self._db.execute(
                    "SELECT job, tenant, first, last, ports FROM runs WHERE fabric = ? "
                    "AND job IN (SELECT value FROM json_each(?))", (fabric, names))} if jobs else {}
                rows = []
                for job, tenant, ports in jobs:  # one row per running job
                    was, first, last, blob = known.get(str(job), (str(tenant), t, t, None))
                    if was != str(tenant) or t - last > gap_s:  # another job under the same name: a new run
                        first, blob = t, None
                    ports = np.asarray(ports, dtype=PORT_ID)
                    if blob is not None:
                        ports = np.union1d(np.frombuffer(blob, dtype=PORT_ID), ports)
                    rows.append((fabric, str(job), str(tenant), min(first, t), max(last, t) if blob is not None
                                 else t, np.unique(ports).tobytes()))
                self._db.executemany("INSERT OR REPLACE INTO runs (fabric, job, tenant, first, last, ports) "
                                     "VALUES (?, ?, ?, ?, ?, ?)", rows)
                if keep_s is not None:
                    self._db.execute("DELETE FROM runs WHERE last < ?", (t - keep_s,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def get(self, fabric_id: int, job: str) -> JobRun | None:
        """The run of ``job`` on the fabric (None: never noted, or past retention)."""
        with self._lock:
            row = self._db.execute("SELECT tenant, first, last, ports FROM runs WHERE fabric = ? AND job = ?",
                                   (int(fabric_id), str(job))).fetchone()
        if row is None:
            return None
        return JobRun(str(job), row[0], row[1], row[2], np.frombuffer(row[3], dtype=PORT_ID).copy())

    def close(self) -> None:
        with self._lock:
            self._db.close()


_lock = threading.Lock()
_runs: JobRuns | None = None


def job_runs() -> JobRuns:
    """This process's :class:`JobRuns`, in ``job-runs.sqlite3`` beside ``IBWEB_TSDB_PATH``."""
    global _runs
    from django.conf import settings

    path = Path(settings.IBWEB_TSDB_PATH).with_name("job-runs.sqlite3")
    with _lock:
        if _runs is None or _runs.path != path:
            _runs = JobRuns(path)
        return _runs
