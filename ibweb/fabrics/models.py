"""A fabric that ibweb emulates or monitors."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from fabric_engine.credit_tick import CREDIT, MAXMIN, check_congestion
from fabric_engine.errors import FabricEngineError
from fabric_engine.routing.options import engine_options
from fabric_engine.scenario import build_fabric
from ibweb.access.querysets import RestrictedQuerySet, Scope
from ibweb.access.view import Level
from ibweb.http.json_input import JSONModelField

from .analyses import AnalysisKind, AnalysisStatus
from .choices import CONGESTION_MODELS, ROUTING_ENGINES, FabricMode, FabricRole

#: Slugs that name pages rather than fabrics.
RESERVED_SLUGS = {"add"}


def _default_host_patterns() -> list[str]:
    from fabric_engine.twin.hostmap import DEFAULT_PATTERNS

    return list(DEFAULT_PATTERNS)


class Cluster(models.Model):
    """Fabrics that serve one set of hosts: compute planes (one subnet per rail), storage and management fabrics.

    Hosts are joined across its fabrics by the host name read from each HCA's node description
    (``host_patterns``, as the job sources read them) and by system image GUID.
    """

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    host_patterns = JSONModelField(
        kind=list, default=_default_host_patterns, blank=True,
        help_text="Node-description rules that give an HCA's host name and rail, e.g. [\"{host} HCA-{rail}\"].")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        from fabric_engine.twin.hostmap import HostMap

        if not isinstance(self.host_patterns, list) or not all(isinstance(p, str) for p in self.host_patterns):
            raise ValidationError({"host_patterns": "a list of strings"})
        try:
            HostMap(self.host_patterns or _default_host_patterns())
        except FabricEngineError as exc:
            raise ValidationError({"host_patterns": str(exc)}) from exc


class Fabric(models.Model):
    """An InfiniBand subnet: emulated from a scenario spec, or fed by telemetry."""

    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    mode = models.CharField(max_length=16, choices=FabricMode.choices, default=FabricMode.EMULATED)
    spec = JSONModelField(kind=dict, default=dict, blank=True,
                          help_text="Scenario: topology generator, jobs, background.")
    routing_engine = models.CharField(max_length=16, choices=ROUTING_ENGINES, default="minhop",
                                      help_text="Changing it reroutes the running engine.")
    routing_options = JSONModelField(
        kind=dict, default=dict, blank=True,
        help_text="OpenSM's guid files as lists: roots (switch node GUIDs; updn, ftree), cns (compute node port "
                  "GUIDs; ftree), ios (I/O node port GUIDs; ftree), e.g. {\"roots\": [\"0x98039b0300000001\"]}.")
    tick_s = models.FloatField(default=1.0, validators=[MinValueValidator(0.05)], help_text="Engine tick, seconds.")
    congestion_model = models.CharField(
        max_length=16, choices=CONGESTION_MODELS, default=MAXMIN, verbose_name="congestion model",
        help_text="How the emulator shares congested links: max-min (every flow its fair share, as with ideal "
                  "congestion control) or credit flow control (lossless, no congestion control: head-of-line "
                  "blocking spreads congestion upstream; small fabrics only for now). Changing it restarts the engine.")
    cluster = models.ForeignKey(Cluster, on_delete=models.SET_NULL, null=True, blank=True, related_name="fabrics")
    cluster_role = models.CharField(max_length=16, choices=FabricRole.choices, default=FabricRole.COMPUTE,
                                    help_text="What the fabric is for in its cluster.")
    rail = models.PositiveSmallIntegerField(null=True, blank=True, validators=[MinValueValidator(1)],
                                            help_text="The rail a compute plane carries (1 = each host's first HCA).")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    #: Bumped (``F() + 1``) in the transaction of every change of the fabric's tenancy rows
    #: (:func:`ibweb.tenancy.engine_policy.bump_policy_version`); :meth:`save` never writes it.
    policy_version = models.PositiveBigIntegerField(default=0, editable=False)

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(public_from=Level.FABRIC)  # every view that may view opens every fabric's aggregates

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "rail"], name="one_fabric_per_rail_of_a_cluster")]

    def __str__(self) -> str:
        return self.name

    def save(self, **kwargs) -> None:
        """Save the row; an existing row is saved without ``policy_version`` unless ``update_fields`` names it,
        so that a stale instance (an admin form) never undoes a bump."""
        if not self._state.adding and kwargs.get("update_fields") is None and not kwargs.get("force_insert"):
            kwargs["update_fields"] = [f.name for f in self._meta.concrete_fields
                                       if not f.primary_key and f.name != "policy_version"]
        super().save(**kwargs)

    @classmethod
    def committed_policy_version(cls, pk: int) -> int | None:
        """The policy version of fabric ``pk`` as committed now (a row held since may carry an older one);
        None when there is no such fabric. One query by primary key."""
        return cls.objects.filter(pk=pk).order_by().values_list("policy_version", flat=True).first()

    def clean(self) -> None:
        if self.slug in RESERVED_SLUGS:
            raise ValidationError({"slug": f"{self.slug!r} is reserved"})
        if self.rail is not None and self.cluster_role != FabricRole.COMPUTE:
            raise ValidationError({"rail": "only a compute plane carries a rail"})
        try:
            engine_options(self.routing_engine, self.routing_options)
        except FabricEngineError as exc:
            raise ValidationError({"routing_options": str(exc)}) from exc
        # A telemetry-fed fabric reads its rates from its counters: its congestion model is the twin's, for the
        # values its known jobs are expected to drive (fabric_engine.twin.expected.emulate).
        if self.mode == FabricMode.EMULATED and isinstance(self.spec, dict):  # else the spec field says why
            try:
                fabric = build_fabric(self.spec.get("topology", {}))
            except FabricEngineError as exc:
                raise ValidationError({"spec": str(exc)}) from exc
            try:
                self._check_congestion(fabric.num_hosts)
            except FabricEngineError as exc:
                raise ValidationError({"congestion_model": str(exc)}) from exc

    def check_congestion_control(self, enabled: bool) -> None:
        """Raise :class:`FabricEngineError` if this fabric cannot run its congestion model with congestion control
        ``enabled`` (an emulated fabric under the credit model: its size)."""
        if enabled and self.congestion_model == CREDIT and self.mode == FabricMode.EMULATED \
                and isinstance(self.spec, dict):  # (the topology is built only where its size matters)
            self._check_congestion(build_fabric(self.spec.get("topology", {})).num_hosts, enabled)

    def _check_congestion(self, hosts: int, controlled: bool | None = None) -> None:
        """:func:`~fabric_engine.credit_tick.check_congestion` of this fabric's model on ``hosts`` hosts; congestion
        control as ``controlled`` says, else as its policy has it."""
        if controlled is None:
            try:
                controlled = self.pk is not None and self.cc_policy.enabled
            except ObjectDoesNotExist:
                controlled = False
        check_congestion(self.congestion_model, hosts, adaptive=bool(self.spec.get("adaptive")), controlled=controlled)

    def scenario(self) -> dict:
        """The engine spec of this fabric, with the model's routing engine, its options, tick and congestion model."""
        options = {"routing_options": self.routing_options} if self.routing_options else {}
        return {**self.spec, "routing": self.routing_engine, **options, "tick_s": self.tick_s,
                "congestion": self.congestion_model}


class Analysis(models.Model):
    """An analysis of a fabric run as a task (eBB or a what-if): its parameters, progress and result.

    ``params`` are cleaned by :func:`ibweb.fabrics.api.params.clean_params`; ``result`` is what
    :func:`ibweb.fabrics.analyses.run` returns; ``progress`` (0..1) is updated while it runs.
    """

    fabric = models.ForeignKey(Fabric, on_delete=models.CASCADE, related_name="analyses")
    kind = models.CharField(max_length=24, choices=AnalysisKind.choices)
    params = JSONModelField(kind=dict, default=dict, blank=True)
    status = models.CharField(max_length=16, choices=AnalysisStatus.choices, default=AnalysisStatus.QUEUED)
    progress = models.FloatField(default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)])
    result = JSONModelField(kind=None, null=True, blank=True)
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="+")

    class Meta:
        ordering = ["-created", "-pk"]
        verbose_name_plural = "analyses"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.fabric} #{self.pk} ({self.status})"
