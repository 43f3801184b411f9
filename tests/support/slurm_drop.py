"""A Slurm jobs drop directory for tests of a telemetry-fed fabric's twin: the squeue 23.11 fixture, running now."""

from __future__ import annotations

import json
from pathlib import Path

SLURM = Path(__file__).resolve().parents[1] / "data" / "slurm" / "squeue-23.11.json"


def running_jobs_drop(drop: Path, now: float) -> None:
    """Make ``drop`` with the fixture's ``squeue.json``, its running jobs started ten minutes before ``now`` and
    ending an hour after it."""
    doc = json.loads(SLURM.read_text())
    for job in doc["jobs"]:
        if job["job_state"] == ["RUNNING"]:
            job["start_time"]["number"] = int(now - 600)
            job["end_time"]["number"] = int(now + 3600)
    drop.mkdir()
    (drop / "squeue.json").write_text(json.dumps(doc))
