"""Serializers of the twin API: pushed jobs (checked before anything is stored), job sources, plan uploads."""

from __future__ import annotations

import math
import re
from datetime import datetime

from rest_framework import serializers

from fabric_engine.errors import FormatError
from fabric_engine.twin import SchedulerJob, expand_hostlist, hostlist_size
from fabric_engine.twin.slurm import MAX_FIELD_CHARS
from ibweb.http.json_input import JSONField

from ..models import JobSource, ScheduledJob

__all__ = ["JobPushSerializer", "ScheduledJobSerializer", "JobSourceSerializer", "PlanUploadSerializer",
           "MAX_PUSH_JOBS", "MAX_PUSH_NAMES"]

#: Most jobs in one push.
MAX_PUSH_JOBS = 10_000
#: Most host names and port GUIDs in one push, over all its jobs.
MAX_PUSH_NAMES = 1_000_000
_JOB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+\-]{0,63}$")
_GUID = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
_FIELDS = ("id", "tenant", "account", "hosts", "port_guids", "start", "end", "name", "user", "partition", "state")


def _time(value, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise serializers.ValidationError(f"{where}: a time (seconds since the epoch or ISO 8601)")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            raise serializers.ValidationError(f"{where}: not a time")
        return float(value)
    if isinstance(value, str) and len(value) <= 40:
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if dt.tzinfo is None:
                raise serializers.ValidationError(f"{where}: give the time zone (e.g. 2025-01-01T12:00:00+00:00)")
            return dt.timestamp()
    raise serializers.ValidationError(f"{where}: a time (seconds since the epoch or ISO 8601)")


def _text(job: dict, key: str, where: str) -> str:
    value = job.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > MAX_FIELD_CHARS:
        raise serializers.ValidationError(f"{where}.{key}: a string of at most {MAX_FIELD_CHARS} characters")
    return value


class JobPushSerializer(serializers.Serializer):
    """Body of a job push.

    ``{"jobs": [{"id": "4242", "tenant": "acme", "hosts": "dgx[001-032]" or ["dgx001", ...],
    "port_guids": ["0x...", ...], "start": 1733137200 or "2024-12-02T11:00:00+00:00", "end": null,
    "name", "user", "partition", "state"}], "replace": false, "ended": ["4240"]}``

    A job names hosts (a list, or a Slurm hostlist expression) or HCA port GUIDs. ``replace``
    makes the list the fabric's whole set of pushed jobs; ``ended`` removes jobs. Sizes are
    checked before anything is expanded: at most :data:`MAX_PUSH_JOBS` jobs, at most
    ``context["host_limit"]`` hosts per job, at most :data:`MAX_PUSH_NAMES` names in all.
    Errors name the job (``jobs[3].hosts: ...``); nothing is stored unless all of it is valid.
    """

    jobs = JSONField(default=list, help_text=f"0..{MAX_PUSH_JOBS:,} job objects.")
    replace = serializers.BooleanField(default=False)
    ended = serializers.ListField(child=serializers.CharField(max_length=64), default=list, max_length=MAX_PUSH_JOBS)

    def validate_jobs(self, value) -> list[SchedulerJob]:
        if not isinstance(value, list):
            raise serializers.ValidationError("expected a list of job objects")
        if len(value) > MAX_PUSH_JOBS:
            raise serializers.ValidationError(f"{len(value)} jobs, more than the limit of {MAX_PUSH_JOBS}")
        limit = int(self.context.get("host_limit", 65_536))
        budget = MAX_PUSH_NAMES
        out, seen = [], set()
        for i, job in enumerate(value):  # one entry per pushed job
            where = f"jobs[{i}]"
            if not isinstance(job, dict):
                raise serializers.ValidationError(f"{where}: not an object")
            unknown = sorted(set(job) - set(_FIELDS))
            if unknown:
                raise serializers.ValidationError(f"{where}: unknown field {unknown[0]!r}")
            job_id = job.get("id")
            if isinstance(job_id, int) and not isinstance(job_id, bool):
                job_id = str(job_id)
            if not isinstance(job_id, str) or not _JOB_ID.match(job_id):
                raise serializers.ValidationError(f"{where}.id: 1..64 letters, digits or _.:+- (starting with a "
                                                  "letter or digit)")
            if job_id in seen:
                raise serializers.ValidationError(f"{where}.id: job {job_id} is listed twice")
            seen.add(job_id)
            hosts, guids = self._hosts(job, where, limit, budget), self._guids(job, where, limit, budget)
            budget -= len(hosts) + len(guids)
            if not hosts and not guids:
                raise serializers.ValidationError(f"{where}: give hosts or port_guids")
            account = _text(job, "tenant", where) or _text(job, "account", where)
            start, end = _time(job.get("start"), f"{where}.start"), _time(job.get("end"), f"{where}.end")
            if start is not None and end is not None and end <= start:
                raise serializers.ValidationError(f"{where}.end: not after start")
            out.append(SchedulerJob(job_id, account, tuple(hosts), tuple(guids), name=_text(job, "name", where),
                                    partition=_text(job, "partition", where), user=_text(job, "user", where),
                                    state=_text(job, "state", where) or "RUNNING", start=start, end=end))
        return out

    def _hosts(self, job: dict, where: str, limit: int, budget: int) -> list[str]:
        value = job.get("hosts") or []
        try:
            if isinstance(value, str):
                if hostlist_size(value, source=f"{where}.hosts", limit=min(limit, budget)) == 0:
                    return []
                return expand_hostlist(value, limit=min(limit, budget), source=f"{where}.hosts")
        except FormatError as exc:
            raise serializers.ValidationError(str(exc)) from None
        if not isinstance(value, list):
            raise serializers.ValidationError(f"{where}.hosts: a list of host names or a hostlist expression")
        if len(value) > min(limit, budget):
            raise serializers.ValidationError(f"{where}.hosts: {len(value)} hosts, more than {min(limit, budget)}")
        if not all(isinstance(h, str) and 0 < len(h) <= 64 for h in value):
            raise serializers.ValidationError(f"{where}.hosts: host names of 1..64 characters")
        if len(set(value)) != len(value):
            raise serializers.ValidationError(f"{where}.hosts: a host is listed twice")
        return list(value)

    def _guids(self, job: dict, where: str, limit: int, budget: int) -> list[int]:
        value = job.get("port_guids") or []
        if not isinstance(value, list) or len(value) > min(limit, budget):
            raise serializers.ValidationError(f"{where}.port_guids: a list of at most {min(limit, budget)} GUIDs")
        out = []
        for g in value:  # one entry per GUID
            if isinstance(g, str) and _GUID.match(g):
                out.append(int(g, 16))
            elif isinstance(g, int) and not isinstance(g, bool) and 0 < g < 1 << 64:
                out.append(g)
            else:
                raise serializers.ValidationError(f"{where}.port_guids: {str(g)[:40]!r} is not a GUID (0x...)")
        return out


class ScheduledJobSerializer(serializers.ModelSerializer):
    class Meta:
        model = ScheduledJob
        fields = ["job_id", "origin", "tenant", "account", "name", "user", "partition", "state", "hosts",
                  "port_guids", "start", "end", "updated"]


class JobSourceSerializer(serializers.ModelSerializer):
    fabric = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = JobSource
        fields = ["id", "fabric", "kind", "command", "drop_dir", "interval_s", "timeout_s", "host_patterns",
                  "accounts", "patterns", "default_pattern", "low_ratio", "high_ratio", "min_gbps", "raise_after",
                  "clear_after", "enabled", "last_poll", "last_error"]


class PlanUploadSerializer(serializers.Serializer):
    """A plan upload: a file (multipart ``file``) or its text (``text`` with ``filename``)."""

    file = serializers.FileField(required=False)
    text = serializers.CharField(required=False, trim_whitespace=False)
    filename = serializers.CharField(required=False, max_length=255)

    def validate(self, attrs):
        if bool(attrs.get("file")) == bool(attrs.get("text")):
            raise serializers.ValidationError("give either a file or its text")
        return attrs
