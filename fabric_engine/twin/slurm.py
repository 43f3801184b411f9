"""Jobs from Slurm: the JSON that ``squeue --json`` and ``scontrol show job --json`` print (Slurm 23.02 and later).

Both commands print one object: ``{"meta": {...}, "errors": [...], "warnings": [...],
"jobs": [...]}`` (Slurm's data_parser plugins v0.0.39 in 23.02, v0.0.40 in 23.11,
v0.0.41 and later after that). A job record names what the twin needs:

* ``job_id`` (int), ``name``, ``account`` (the tenant), ``partition``, ``user_name``;
* ``job_state``: a string in 23.02 (``"RUNNING"``), a list of the state and its flags
  from 23.11 on (``["RUNNING"]``, ``["PENDING", "REQUEUED"]``);
* ``nodes``: the hostlist of the allocation (``"dgx[001-032]"``, empty while pending);
  24.05 also nests it in ``job_resources.nodes.list``;
* ``start_time``, ``end_time``: seconds since the epoch, nested since 23.02 as
  ``{"set": true, "infinite": false, "number": 1700000000}``; ``set: false`` or
  ``infinite: true`` (no end) is read as unknown. A bare integer is read too.

Sizes are checked before anything is built: the text against ``max_bytes``, the
number of records against ``max_jobs``, every hostlist against ``max_hosts`` (the
fabric's host count) before it is expanded (:mod:`.hostlist`), every string field
against :data:`MAX_FIELD_CHARS`. An error names the source and the record
(``squeue.json: jobs[3] (job 4242) field 'nodes': ...``); nothing is returned half-read.

>>> text = '{"jobs": [{"job_id": 7, "account": "llm", "job_state": ["RUNNING"], "nodes": "dgx[01-02]",'
>>> text += ' "start_time": {"set": true, "infinite": false, "number": 1700000000}}]}'
>>> [(j.job_id, j.account, j.hosts, j.start) for j in parse_slurm_jobs(text, max_hosts=8)]
[('7', 'llm', ('dgx01', 'dgx02'), 1700000000.0)]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import FormatError
from .hostlist import expand_hostlist

__all__ = ["SchedulerJob", "parse_slurm_jobs", "MAX_SLURM_BYTES", "MAX_SLURM_JOBS", "MAX_FIELD_CHARS",
           "RUNNING_STATES"]

#: Largest ``squeue``/``scontrol`` output read (a job record is 4-8 KB; ask squeue for running jobs only).
MAX_SLURM_BYTES = 64 << 20
#: Most job records read from one output.
MAX_SLURM_JOBS = 50_000
#: Longest account, user, partition, name or state string kept.
MAX_FIELD_CHARS = 256
#: Job states whose hosts carry the job's traffic.
RUNNING_STATES = ("RUNNING",)


@dataclass(frozen=True)
class SchedulerJob:
    """A job as a scheduler (or a pushing client) describes it.

    ``hosts`` are host names (expanded, in Slurm's order); ``port_guids`` name HCA ports
    directly instead (the push API); ``start``/``end`` are seconds since the epoch or None.
    """

    job_id: str
    account: str = ""
    hosts: tuple[str, ...] = ()
    port_guids: tuple[int, ...] = ()
    name: str = ""
    partition: str = ""
    user: str = ""
    state: str = "RUNNING"
    start: float | None = None
    end: float | None = None

    def as_dict(self) -> dict:
        return {"id": self.job_id, "account": self.account, "hosts": list(self.hosts),
                "port_guids": [f"0x{g:016x}" for g in self.port_guids], "name": self.name,
                "partition": self.partition, "user": self.user, "state": self.state, "start": self.start,
                "end": self.end}


def _text(data: str | bytes, source: str, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise FormatError(source, None, f"is {len(data)} bytes, more than the limit of {max_bytes}")
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(source, data[:exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    return data


def _time(value, where: str, source: str) -> float | None:
    """Seconds since the epoch from an int or Slurm's ``{"set", "infinite", "number"}``; None when unknown."""
    if value is None:
        return None
    if isinstance(value, dict):
        if not value.get("set", True) or value.get("infinite", False):
            return None
        value = value.get("number")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatError(source, None, f"{where}: not a time in seconds")
    return float(value) if value > 0 else None


def _string(record: dict, key: str, where: str, source: str) -> str:
    value = record.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormatError(source, None, f"{where} field {key!r}: not a string")
    if len(value) > MAX_FIELD_CHARS:
        raise FormatError(source, None, f"{where} field {key!r}: {len(value)} characters, more than "
                                        f"{MAX_FIELD_CHARS}")
    return value


def _state(record: dict, where: str, source: str) -> tuple[str, ...]:
    value = record.get("job_state", "")
    states = [value] if isinstance(value, str) else value
    if not isinstance(states, list) or not all(isinstance(s, str) and len(s) <= MAX_FIELD_CHARS for s in states):
        raise FormatError(source, None, f"{where} field 'job_state': not a state or a list of states")
    return tuple(s.upper() for s in states)


def _nodes(record: dict, where: str, source: str) -> str:
    value = record.get("nodes")
    if not value:
        res = record.get("job_resources")
        inner = res.get("nodes") if isinstance(res, dict) else None
        value = inner.get("list") if isinstance(inner, dict) else inner
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormatError(source, None, f"{where} field 'nodes': not a hostlist string")
    return value


def _slurm_errors(doc: dict, source: str) -> None:
    errors = doc.get("errors") or []
    if isinstance(errors, list) and errors and not doc.get("jobs"):
        first = errors[0] if isinstance(errors[0], dict) else {"description": str(errors[0])}
        what = first.get("description") or first.get("error") or "error"
        raise FormatError(source, None, f"Slurm reported an error: {str(what)[:MAX_FIELD_CHARS]}")


def parse_slurm_jobs(data: str | bytes, *, max_hosts: int, source: str = "<squeue --json>",
                     states: Sequence[str] = RUNNING_STATES, max_bytes: int = MAX_SLURM_BYTES,
                     max_jobs: int = MAX_SLURM_JOBS) -> list[SchedulerJob]:
    """The jobs in ``squeue --json`` or ``scontrol show job --json`` output whose state is one of ``states``.

    Parameters
    ----------
    data : str or bytes
        The command's output (or a file of it from a drop directory).
    max_hosts : int
        Most hosts one job may name (the fabric's host count); a longer hostlist is an error.
    states : sequence of str
        Job states kept (a job is kept when its state or any of its state flags is listed).

    Returns
    -------
    list of SchedulerJob
        In the order Slurm printed them; each job once (a repeated ``job_id`` is an error).
    """
    text = _text(data, source, max_bytes)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(source, exc.lineno, f"not JSON: {exc.msg}") from None
    except RecursionError:
        raise FormatError(source, None, "not JSON Slurm writes: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise FormatError(source, None, f"not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs", []), list):
        raise FormatError(source, None, "not Slurm JSON: expected an object with a 'jobs' list")
    _slurm_errors(doc, source)
    records = doc.get("jobs", [])
    if len(records) > max_jobs:
        raise FormatError(source, None, f"{len(records)} job records, more than the limit of {max_jobs}")
    wanted = {s.upper() for s in states}
    out: list[SchedulerJob] = []
    seen: set[str] = set()
    for i, rec in enumerate(records):
        where = f"jobs[{i}]"
        if not isinstance(rec, dict):
            raise FormatError(source, None, f"{where}: not an object")
        job_id = rec.get("job_id")
        if isinstance(job_id, bool) or not isinstance(job_id, int) or job_id <= 0:
            raise FormatError(source, None, f"{where} field 'job_id': not a positive integer")
        where = f"jobs[{i}] (job {job_id})"
        state = _state(rec, where, source)
        if not wanted.intersection(state):
            continue
        if str(job_id) in seen:
            raise FormatError(source, None, f"{where}: job {job_id} is listed twice")
        seen.add(str(job_id))
        nodes = _nodes(rec, where, source)
        hosts = expand_hostlist(nodes, limit=max_hosts, source=f"{source}: {where} field 'nodes'")
        out.append(SchedulerJob(
            job_id=str(job_id), account=_string(rec, "account", where, source), hosts=tuple(hosts),
            name=_string(rec, "name", where, source), partition=_string(rec, "partition", where, source),
            user=_string(rec, "user_name", where, source), state=state[0] if state else "",
            start=_time(rec.get("start_time"), f"{where} field 'start_time'", source),
            end=_time(rec.get("end_time"), f"{where} field 'end_time'", source)))
    return out
