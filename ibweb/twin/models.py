"""Job sources, the jobs they report, job push tokens and the designed cabling of a fabric."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from fabric_engine.errors import FabricEngineError
from fabric_engine.twin import HostMap, Thresholds
from fabric_engine.twin.catalog import DEFAULT_PATTERN
from fabric_engine.twin.hostmap import DEFAULT_PATTERNS
from fabric_engine.workload import PATTERNS
from ibweb.auth.bearer import BearerToken
from ibweb.fabrics.models import Fabric
from ibweb.http.json_input import JSONModelField

from .choices import JobOrigin, JobSourceKind

#: What a Slurm job source runs by default (running jobs only, JSON as Slurm 23.02+ prints it).
SQUEUE_COMMAND = ["squeue", "--json", "--states=RUNNING"]


def _default_command() -> list[str]:
    return list(SQUEUE_COMMAND)


def _default_patterns() -> list[str]:
    return list(DEFAULT_PATTERNS)


class JobSource(models.Model):
    """Where the jobs of one fabric come from, how hosts map to HCAs, and what is expected of the jobs.

    ``command`` runs through the fabric collector's ``command_prefix`` and ``environment``
    (``["ssh", "slurmctl01"]`` makes it ``ssh slurmctl01 squeue --json ...``). A drop directory
    holds ``*.json`` files of ``squeue --json`` or ``scontrol show job --json`` output. Pushed
    jobs come from the API with a :class:`JobToken`. ``host_patterns`` read host and rail out of
    HCA node descriptions (``"{host} HCA-{rail}"``, ``"{host}-hca{rail}"``, ``re:...``);
    ``accounts`` maps Slurm accounts to tenant slugs (default: the account is the tenant);
    ``patterns`` maps a job ID or account to the collective it runs (default ``default_pattern``).
    """

    fabric = models.OneToOneField(Fabric, on_delete=models.CASCADE, related_name="job_source")
    kind = models.CharField(max_length=16, choices=JobSourceKind.choices, default=JobSourceKind.SLURM)
    command = JSONModelField(kind=list, default=_default_command, blank=True,
                               help_text='The scheduler command, e.g. ["squeue", "--json", "--states=RUNNING"].')
    drop_dir = models.CharField(max_length=500, blank=True, help_text="Directory of squeue/scontrol --json files.")
    interval_s = models.FloatField(default=30.0, validators=[MinValueValidator(1.0)], help_text="Between polls.")
    timeout_s = models.FloatField(default=20.0, validators=[MinValueValidator(0.5)], help_text="Per command.")
    host_patterns = JSONModelField(kind=list, default=_default_patterns, blank=True,
                                     help_text='How node descriptions name host and rail, tried in order: '
                                               '["{host} HCA-{rail}", "{host}-hca{rail}", "re:^(?P<host>...)$"].')
    accounts = JSONModelField(kind=dict, default=dict, blank=True, help_text="Slurm account -> tenant slug.")
    patterns = JSONModelField(kind=dict, default=dict, blank=True, help_text="Job ID or account -> collective pattern.")
    default_pattern = models.CharField(max_length=32, default=DEFAULT_PATTERN)
    low_ratio = models.FloatField(default=0.5, validators=[MinValueValidator(0.01), MaxValueValidator(0.99)],
                                  help_text="A link below this share of its expected traffic deviates.")
    high_ratio = models.FloatField(default=1.5, validators=[MinValueValidator(1.01)],
                                   help_text="A link above this multiple of its expected traffic deviates.")
    min_gbps = models.FloatField(default=1.0, validators=[MinValueValidator(0.0)],
                                 help_text="Traffic below this is never a deviation.")
    raise_after = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1)],
                                                   help_text="Comparisons a deviation must last to be an alert.")
    clear_after = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1)],
                                                   help_text="Clean comparisons before an alert ends.")
    enabled = models.BooleanField(default=True)
    last_poll = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["fabric__name"]

    def __str__(self) -> str:
        return f"job source of {self.fabric}"

    def clean(self) -> None:
        if not isinstance(self.command, list) or not all(isinstance(x, str) for x in self.command) or (
                self.kind == JobSourceKind.SLURM and not self.command):
            raise ValidationError({"command": "a non-empty list of strings"})
        if self.kind == JobSourceKind.DIRECTORY and not (self.drop_dir and Path(self.drop_dir).is_absolute()):
            raise ValidationError({"drop_dir": "an absolute path, needed when reading from a drop directory"})
        try:
            self.hostmap()
        except (FabricEngineError, TypeError) as exc:
            raise ValidationError({"host_patterns": str(exc)}) from exc
        for field, value in (("accounts", self.accounts), ("patterns", self.patterns)):
            if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                      for k, v in value.items()):
                raise ValidationError({field: "a mapping of strings to strings"})
        bad = sorted({self.default_pattern, *self.patterns.values()} - set(PATTERNS))
        if bad:
            raise ValidationError({"patterns": f"unknown pattern {bad[0]!r}; known: {', '.join(PATTERNS)}"})
        try:
            self.thresholds()
        except ValueError as exc:
            raise ValidationError({"low_ratio": str(exc)}) from exc

    def hostmap(self) -> HostMap:
        return HostMap(self.host_patterns or DEFAULT_PATTERNS)

    def thresholds(self) -> Thresholds:
        return Thresholds(low_ratio=self.low_ratio, high_ratio=self.high_ratio, min_gbps=self.min_gbps)

    def tenant_of(self, account: str) -> str:
        """The tenant slug of a Slurm account (the account itself unless mapped)."""
        return self.accounts.get(account, account)


class ScheduledJob(models.Model):
    """A job the scheduler (or a pushing client) reports on a fabric; ``hosts`` are host names, ``port_guids``
    HCA port GUIDs (``"0x..."``), either may be empty."""

    fabric = models.ForeignKey(Fabric, on_delete=models.CASCADE, related_name="scheduled_jobs")
    job_id = models.CharField(max_length=64)
    origin = models.CharField(max_length=16, choices=JobOrigin.choices)
    tenant = models.CharField(max_length=256, blank=True, help_text="Tenant slug (from the account).")
    account = models.CharField(max_length=256, blank=True)
    name = models.CharField(max_length=256, blank=True)
    user = models.CharField(max_length=256, blank=True)
    partition = models.CharField(max_length=256, blank=True)
    state = models.CharField(max_length=64, default="RUNNING")
    hosts = JSONModelField(kind=list, default=list, blank=True)
    port_guids = JSONModelField(kind=list, default=list, blank=True)
    start = models.DateTimeField(null=True, blank=True)
    end = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["fabric", "job_id"]
        constraints = [models.UniqueConstraint(fields=["fabric", "job_id"], name="twin_job_unique_per_fabric")]

    def __str__(self) -> str:
        return f"job {self.job_id} on {self.fabric}"


class JobToken(BearerToken):
    """A secret a scheduler integration sends (``Authorization: Bearer <token>``) to push jobs of one fabric."""

    OWNER = "source"

    source = models.ForeignKey(JobSource, on_delete=models.CASCADE, related_name="tokens")

    class Meta:
        ordering = ["source", "name"]


class CablingPlan(models.Model):
    """The designed cabling of a fabric (one per fabric; a new upload replaces it).

    ``text`` is the uploaded file (CSV ``node,port,remote node,remote port[,speed,width]`` or a
    topology file of the design); ``report`` the newest comparison with the discovered fabric
    (:meth:`fabric_engine.twin.PlanReport.as_dict`), ``report_digest`` its fingerprint, so a
    change is noticed (and stored as an event) once.
    """

    fabric = models.OneToOneField(Fabric, on_delete=models.CASCADE, related_name="cabling_plan")
    filename = models.CharField(max_length=255)
    text = models.TextField()
    cables = models.PositiveIntegerField(default=0)
    uploaded = models.DateTimeField(auto_now=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    report = JSONModelField(kind=None, null=True, blank=True, editable=False)
    report_digest = models.CharField(max_length=64, blank=True, editable=False)
    checked = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["fabric__name"]

    def __str__(self) -> str:
        return f"cabling plan of {self.fabric} ({self.filename})"
