"""Collector configuration per fabric, sweep records and push tokens."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from fabric_engine.telemetry import Thresholds
from ibweb.auth.bearer import BearerToken
from ibweb.fabrics.models import Fabric
from ibweb.http.json_input import JSONModelField

from .choices import CollectorSource, SweepStatus

#: The file OpenSM writes its unicast LFTs to (``osm_dump.c``; routing log bit 0x40 of ``-D``).
LFTS_DUMP_NAME = "opensm-lfts.dump"
#: OpenSM's log file name (``OSM_DEFAULT_LOG_FILE``: /var/log/opensm.log).
OPENSM_LOG_NAME = "opensm.log"


class CollectorConfig(models.Model):
    """How ibweb reads the counters and the topology of one telemetry-fed fabric.

    ``command_prefix`` goes before every command (``["sudo"]``, ``["ssh", "mgmt01"]``);
    ``environment`` is added to the commands' environment (for ibsim:
    ``{"LD_PRELOAD": ".../libumad2sim.so", "SIM_HOST": "gpu0001", "IBSIM_SOCKNAME": ...}``).
    ``lfts_path`` names the subnet manager's forwarding tables (``opensm-lfts.dump``,
    or ``ibroute``/``dump_fts`` output) as a file readable by the engine process; a
    drop-directory collector also finds ``opensm-lfts.dump`` in its directory.
    ``opensm_log_path`` names OpenSM's log, read each sweep for link downs (a drop directory's
    ``opensm.log`` when empty). ``validation_every``: ``sminfo`` and ``smpquery pkeys`` are read once per this
    many sweep intervals (:mod:`.device_sweep`).
    """

    fabric = models.OneToOneField(Fabric, on_delete=models.CASCADE, related_name="collector")
    source = models.CharField(max_length=16, choices=CollectorSource.choices, default=CollectorSource.COMMANDS)
    command_prefix = JSONModelField(kind=list, default=list, blank=True,
                                    help_text='e.g. ["sudo"] or ["ssh", "mgmt01"].')
    environment = JSONModelField(kind=dict, default=dict, blank=True, help_text="Extra environment of the commands.")
    drop_dir = models.CharField(max_length=500, blank=True, help_text="Directory an external collector fills.")
    lfts_path = models.CharField(
        max_length=500, blank=True, verbose_name="LFT dump path",
        help_text="OpenSM's opensm-lfts.dump (written with -D 0x47 into its dump_files_dir: --dump_files_dir, else "
                  "$OSM_TMP_DIR, else /var/log) or ibroute output, as the engine sees it. Empty: opensm-lfts.dump "
                  "in the drop directory, if any; else the routing is computed with the fabric's routing engine.")
    opensm_log_path = models.CharField(
        max_length=500, blank=True, verbose_name="OpenSM log path",
        help_text="OpenSM's log (opensm -f, /var/log/opensm.log by default) as the collector sees it, read each sweep "
                  "from where it stopped for link downs: the ports OpenSM unlinks (logged with -V or -D 0x07; 0x0f "
                  "also logs the links made again), timed by the switches' link state change traps. Empty: "
                  "opensm.log in the drop directory, if any; else none is read.")
    timeout_s = models.FloatField(default=10.0, validators=[MinValueValidator(0.1)], help_text="Per command.")
    interval_s = models.FloatField(default=10.0, validators=[MinValueValidator(0.5)], help_text="Between sweeps.")
    stale_after_s = models.FloatField(default=60.0, validators=[MinValueValidator(1.0)],
                                      help_text="Data older than this is shown as stale.")
    shard_size = models.PositiveIntegerField(default=64, validators=[MinValueValidator(1)],
                                             help_text="Switches per sweep shard (one Celery task each).")
    wrap_counters = models.BooleanField(default=False, help_text="Basic counters wrap instead of latching.")
    tick_code = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(255)],
                                                 help_text="PortSamplesControl Tick: a PortXmitWait tick is "
                                                           "(code + 1) symbol times.")
    thresholds = JSONModelField(kind=dict, default=dict, blank=True,
                                help_text="Error alerts, errors per minute per port.")
    enabled = models.BooleanField(default=True)
    health_counters = models.BooleanField(
        default=False, help_text="Also read perfquery -T (PortExtendedSpeedsCounters: FEC and per-lane errors) of "
                                 "every switch each sweep, for link health; a switch that cannot answer is a warning.")
    cc_counters = models.BooleanField(
        default=False, verbose_name="Read congestion counters",
        help_text="Also read perfquery --rcvcc (PortRcvConCtrl: FECN and BECN packets received) of every cabled "
                  "switch port each sweep, for FECN/BECN rates; a switch that cannot answer is a warning.")
    validation_every = models.PositiveIntegerField(
        default=10, validators=[MaxValueValidator(10_000)], verbose_name="Validation reads every (sweeps)",
        help_text="Run sminfo and smpquery pkeys (every switch-to-host link's two ends) once per this many sweep "
                  "intervals, for the fabric validation (SM mastership, P_Key mismatches); a drop directory's "
                  "sminfo.txt and pkeys*.txt are read as often. 0: never. A push collector pushes them instead.")
    reference = models.TextField(
        blank=True, editable=False,
        help_text="The discovery (iblinkinfo output) the fabric's conditions are measured against: its last good "
                  "discovery, or the cabling an operator accepted. Empty: the next discovery becomes it.")
    reference_at = models.DateTimeField(null=True, blank=True, editable=False)
    reference_by = models.CharField(max_length=150, blank=True, editable=False,
                                    help_text="Who accepted the reference (empty: taken as the last good discovery).")

    class Meta:
        ordering = ["fabric__name"]

    def __str__(self) -> str:
        return f"collector of {self.fabric}"

    def clean(self) -> None:
        if not isinstance(self.command_prefix, list) or not all(isinstance(x, str) for x in self.command_prefix):
            raise ValidationError({"command_prefix": "a list of strings"})
        if not isinstance(self.environment, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.environment.items()):
            raise ValidationError({"environment": "a mapping of strings to strings"})
        try:
            self.alert_thresholds()
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValidationError({"thresholds": str(exc)}) from exc
        if self.source == CollectorSource.DIRECTORY and not self.drop_dir:
            raise ValidationError({"drop_dir": "needed when reading from a drop directory"})
        if self.lfts_path and not Path(self.lfts_path).is_absolute():
            raise ValidationError({"lfts_path": "an absolute path (the engine process reads it)"})
        if self.opensm_log_path and not Path(self.opensm_log_path).is_absolute():
            raise ValidationError({"opensm_log_path": "an absolute path (the collector reads it)"})

    def lfts_file(self) -> Path | None:
        """Where the LFT dump of this fabric is (the file may not exist yet), or None when there is none to read."""
        if self.lfts_path:
            return Path(self.lfts_path)
        if self.source == CollectorSource.DIRECTORY and self.drop_dir:
            return Path(self.drop_dir) / LFTS_DUMP_NAME
        return None

    def opensm_log_file(self) -> Path | None:
        """Where OpenSM's log of this fabric is (the file may not exist yet), or None when there is none to read."""
        if self.opensm_log_path:
            return Path(self.opensm_log_path)
        if self.source == CollectorSource.DIRECTORY and self.drop_dir:
            return Path(self.drop_dir) / OPENSM_LOG_NAME
        return None

    def alert_thresholds(self) -> Thresholds:
        """The fabric's :class:`Thresholds` (defaults overridden by ``thresholds``)."""
        base = Thresholds()
        return Thresholds(per_minute={**base.per_minute, **{k: float(v) for k, v in self.thresholds.items()}})


class Sweep(models.Model):
    """One collection of counters (and a discovery) of a fabric, possibly split into shards."""

    config = models.ForeignKey(CollectorConfig, on_delete=models.CASCADE, related_name="sweeps")
    source = models.CharField(max_length=16, choices=CollectorSource.choices)
    status = models.CharField(max_length=16, choices=SweepStatus.choices, default=SweepStatus.RUNNING)
    started = models.DateTimeField(default=timezone.now)
    finished = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    shards = models.PositiveIntegerField(default=0)
    ports = models.PositiveIntegerField(default=0, help_text="Ports with counters.")
    failures = JSONModelField(kind=list, default=list, blank=True,
                              help_text='[{"shard": ..., "target": ..., "error": ...}]')
    warnings = JSONModelField(kind=list, default=list, blank=True,
                                help_text='Lines the readers skipped (prompts, a tool\'s stderr): '
                                          '[{"line": ..., "text": ..., "reason": ..., "source": ...}]')
    events = JSONModelField(kind=list, default=list, blank=True,
                              help_text="Topology changes since the previous discovery, then routing events "
                                        "(LFT dump loaded, re-routed).")

    class Meta:
        ordering = ["-started"]
        get_latest_by = "started"

    def __str__(self) -> str:
        return f"sweep {self.pk} of {self.config.fabric} ({self.status})"

    @property
    def age_s(self) -> float | None:
        """Seconds since the sweep finished (None while running)."""
        return None if self.finished is None else (timezone.now() - self.finished).total_seconds()


class PushToken(BearerToken):
    """A secret an external collector sends (``Authorization: Bearer <token>``) to push samples."""

    OWNER = "config"

    config = models.ForeignKey(CollectorConfig, on_delete=models.CASCADE, related_name="tokens")

    class Meta:
        ordering = ["config", "name"]
