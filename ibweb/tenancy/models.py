"""Tenants, their partitions (P_Keys) and members, QoS classes and tables, and the audit log."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils.deconstruct import deconstructible

from fabric_engine.backpressure.cc_params import CongestionControl
from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.formats.opensm_partitions import DEFAULT_PKEY
from fabric_engine.formats.opensm_qos import DEFAULT_TABLES, format_sl2vl, format_vlarb, parse_sl2vl, parse_vlarb
from ibweb.access.querysets import RestrictedQuerySet, Scope
from ibweb.access.view import Level
from ibweb.http.json_input import JSONModelField

from .cc_settings import from_json
from .choices import AuditAction, Membership, Mtu, Rate

SL_VALIDATORS = [MinValueValidator(0), MaxValueValidator(15)]
PKEY_VALIDATORS = [MinValueValidator(0x0001, "P_Key must be 0x0001..0x7ffe"),
                   MaxValueValidator(0x7FFE, "P_Key must be 0x0001..0x7ffe (0x7fff is the default partition, "
                                             "managed by ibweb)")]
NAME_VALIDATOR = RegexValidator(r"^[A-Za-z0-9_.\-]+$", "letters, digits, '_', '.', '-' only (OpenSM syntax)")


class ServiceClass(models.Model):
    """A QoS class of service: the SL its traffic uses, with optional rate and MTU limits."""

    name = models.CharField(max_length=64, unique=True, validators=[NAME_VALIDATOR])
    sl = models.PositiveSmallIntegerField("SL", validators=SL_VALIDATORS, help_text="Service level 0-15.")
    rate_limit = models.PositiveSmallIntegerField(choices=Rate.choices, null=True, blank=True,
                                                  help_text="Rate limit of its paths (IBTA rate).")
    mtu_limit = models.PositiveSmallIntegerField("MTU limit", choices=Mtu.choices, null=True, blank=True)
    description = models.TextField(blank=True)

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(tenant=("tenants", "partitions__tenant_id"), distinct=True)

    class Meta:
        ordering = ["sl", "name"]
        verbose_name_plural = "service classes"

    def __str__(self) -> str:
        return f"{self.name} (SL {self.sl})"


class Tenant(models.Model):
    """An organisation or team whose jobs share the fabric."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    contacts = models.TextField(blank=True, help_text="Who to call: names, e-mail addresses, one per line.")
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="tenants",
                                   help_text="Users of this tenant see only its partitions, jobs and hosts.")
    service_class = models.ForeignKey(ServiceClass, on_delete=models.PROTECT, null=True, blank=True,
                                      related_name="tenants", help_text="Default QoS of the tenant's partitions.")

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(tenant=("pk",))

    class Meta:
        ordering = ["name"]
        permissions = [("view_all_tenants", "Can see every tenant's partitions, jobs and hosts")]

    def __str__(self) -> str:
        return self.name


class Partition(models.Model):
    """An InfiniBand partition (P_Key) of one fabric, as OpenSM's ``partitions.conf`` defines it."""

    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.CASCADE, related_name="partitions")
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, null=True, blank=True, related_name="partitions")
    name = models.CharField(max_length=64, validators=[NAME_VALIDATOR])
    pkey = models.PositiveIntegerField("P_Key", validators=PKEY_VALIDATORS,
                                       help_text="0x0001-0x7ffe; write hex in forms and the API (0x8001 -> 0x0001).")
    ipoib = models.BooleanField("IPoIB", default=True, help_text="Create the IPoIB broadcast group.")
    mtu = models.PositiveSmallIntegerField("MTU", choices=Mtu.choices, null=True, blank=True,
                                           help_text="IPoIB broadcast group MTU; UFM's mtu_limit.")
    rate = models.PositiveSmallIntegerField(choices=Rate.choices, null=True, blank=True,
                                            help_text="IPoIB broadcast group rate; UFM's rate_limit.")
    sl = models.PositiveSmallIntegerField("SL", validators=SL_VALIDATORS, null=True, blank=True,
                                          help_text="Service level of the partition's traffic (0-15).")
    service_class = models.ForeignKey(ServiceClass, on_delete=models.PROTECT, null=True, blank=True,
                                      related_name="partitions", help_text="Overrides the tenant's service class.")
    default_membership = models.CharField(max_length=8, choices=Membership.choices, default=Membership.FULL,
                                          help_text="Membership of GUIDs added without one.")
    index0 = models.BooleanField("index 0", default=False, help_text="Put this P_Key at index 0 (OpenSM indx0).")
    all_cas = models.CharField("ALL_CAS", max_length=8, choices=Membership.choices, blank=True,
                               help_text="Every channel adapter port of the fabric joins with this membership.")
    all_switches = models.CharField("ALL_SWITCHES", max_length=8, choices=Membership.choices, blank=True)
    all_routers = models.CharField("ALL_ROUTERS", max_length=8, choices=Membership.choices, blank=True)
    self_port = models.CharField("SELF", max_length=8, choices=Membership.choices, blank=True,
                                 help_text="The subnet manager's own port.")
    description = models.TextField(blank=True)

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(tenant=("tenant_id",))

    class Meta:
        ordering = ["fabric", "pkey"]
        constraints = [
            models.UniqueConstraint(fields=["fabric", "pkey"], name="tenancy_partition_unique_pkey",
                                    violation_error_message="this P_Key is already used in this fabric"),
            models.UniqueConstraint(fields=["fabric", "name"], name="tenancy_partition_unique_name",
                                    violation_error_message="this partition name is already used in this fabric"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.pkey_hex})"

    @property
    def pkey_hex(self) -> str:
        return f"0x{self.pkey:04x}" if self.pkey is not None else "-"

    def clean(self) -> None:
        if self.pkey == DEFAULT_PKEY:
            raise ValidationError({"pkey": "0x7fff is the default partition, managed by ibweb; it cannot be edited"})

    def validate_constraints(self, exclude=None) -> None:
        """Unique P_Key and name per fabric, reported at the field that clashes."""
        exclude = set(exclude or ())
        errors = {}
        if self.fabric_id is not None:
            others = Partition.objects.filter(fabric_id=self.fabric_id).exclude(pk=self.pk)
            if "pkey" not in exclude and self.pkey is not None and others.filter(pkey=self.pkey).exists():
                errors["pkey"] = f"P_Key 0x{self.pkey:04x} is already used in this fabric"
            if "name" not in exclude and self.name and others.filter(name=self.name).exists():
                errors["name"] = f"partition name {self.name!r} is already used in this fabric"
        if errors:
            raise ValidationError(errors)
        super().validate_constraints(exclude=exclude | {"pkey", "name"})

    def effective_class(self) -> ServiceClass | None:
        """The partition's own service class, else its tenant's."""
        if self.service_class_id:
            return self.service_class
        return self.tenant.service_class if self.tenant_id else None

    def keyword_members(self) -> dict[str, str]:
        """``{"ALL_CAS": "limited", ...}`` for the keyword fields that are set."""
        pairs = {"ALL_CAS": self.all_cas, "ALL_SWITCHES": self.all_switches, "ALL_ROUTERS": self.all_routers,
                 "SELF": self.self_port}
        return {k: v for k, v in pairs.items() if v}


class PartitionMember(models.Model):
    """A port GUID of the partition's fabric and its membership."""

    partition = models.ForeignKey(Partition, on_delete=models.CASCADE, related_name="members")
    guid = models.CharField("port GUID", max_length=18, help_text="0x and 16 hex digits.")
    membership = models.CharField(max_length=8, choices=Membership.choices, default=Membership.FULL)

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(tenant=("partition__tenant_id",))

    class Meta:
        ordering = ["partition", "guid"]
        constraints = [models.UniqueConstraint(fields=["partition", "guid"], name="tenancy_member_unique_guid",
                                               violation_error_message="this GUID is already a member")]

    def __str__(self) -> str:
        return f"{self.guid}={self.membership}"

    def clean(self) -> None:
        from .inventory import check_guids, normalize_guid

        self.guid = normalize_guid(self.guid)
        if self.partition_id is not None:
            if self.partition.pkey == DEFAULT_PKEY:
                raise ValidationError({"partition": "the default partition is managed by ibweb"})
            check_guids(self.partition.fabric, [self.guid], field="guid")


@deconstructible
class TableValidator:
    """Validates an OpenSM table option: ``kind`` is ``"sl2vl"`` or ``"vlarb"``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __call__(self, value: str) -> None:
        parser = parse_sl2vl if self.kind == "sl2vl" else parse_vlarb
        try:
            parser(value, self.kind)
        except FormatError as exc:
            raise ValidationError(exc.message) from None

    def __eq__(self, other) -> bool:
        return isinstance(other, TableValidator) and other.kind == self.kind


class QosPolicy(models.Model):
    """A fabric's SL-to-VL map and VL arbitration tables (the ``qos_*`` options of ``opensm.conf``)."""

    fabric = models.OneToOneField("fabrics.Fabric", on_delete=models.CASCADE, related_name="qos_policy")
    enabled = models.BooleanField(default=True, help_text="Run OpenSM with QoS (-Q) and enforce it in the engine.")
    max_vls = models.PositiveSmallIntegerField("max VLs", default=DEFAULT_TABLES.max_vls,
                                               validators=[MinValueValidator(1), MaxValueValidator(15)])
    high_limit = models.PositiveSmallIntegerField(default=DEFAULT_TABLES.high_limit,
                                                  validators=[MinValueValidator(0), MaxValueValidator(255)],
                                                  help_text="High-priority limit 0-255 (255: unlimited).")
    vlarb_high = models.CharField("VL arbitration, high", max_length=600,
                                  default=format_vlarb(DEFAULT_TABLES.vlarb_high),
                                  validators=[TableValidator("vlarb")],
                                  help_text="VL:weight pairs, weights 0-255, e.g. 0:4,1:0.")
    vlarb_low = models.CharField("VL arbitration, low", max_length=600, default=format_vlarb(DEFAULT_TABLES.vlarb_low),
                                 validators=[TableValidator("vlarb")])
    sl2vl = models.CharField("SL to VL", max_length=100, default=format_sl2vl(DEFAULT_TABLES.sl2vl),
                             validators=[TableValidator("sl2vl")],
                             help_text="16 VLs, one per SL 0-15; VL 15 drops the SL.")

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(public_from=Level.TENANTS)

    class Meta:
        ordering = ["fabric"]
        verbose_name = "QoS policy"
        verbose_name_plural = "QoS policies"

    def __str__(self) -> str:
        return f"QoS of {self.fabric}"

    def clean(self) -> None:
        errors = {}
        try:
            vls = parse_sl2vl(self.sl2vl or "", "sl2vl")
            too_high = [f"SL {sl}->VL {vl}" for sl, vl in enumerate(vls) if vl != 15 and vl >= (self.max_vls or 15)]
            if too_high:
                errors["sl2vl"] = f"{', '.join(too_high)}: VL at or above max VLs ({self.max_vls})"
        except FormatError:
            pass  # the field validator reports it
        if errors:
            raise ValidationError(errors)


class CongestionControlPolicy(models.Model):
    """A fabric's InfiniBand congestion control settings (the ``congestion_control`` and ``cc_*`` options of
    ``opensm.conf``); :meth:`congestion_control` gives them to the engine's what-if."""

    fabric = models.OneToOneField("fabrics.Fabric", on_delete=models.CASCADE, related_name="cc_policy")
    enabled = models.BooleanField(default=False, help_text="OpenSM's congestion_control: configure switches "
                                                           "and adapters for congestion control.")
    settings = JSONModelField(kind=dict, default=dict, blank=True,
                              help_text="The cc_* settings by field name (cc_params.CongestionControl); missing "
                                        "ones keep OpenSM's defaults. Masks as hex strings, per-SL values as "
                                        "16-item lists, cct as [[shift, multiplier], ...].")

    objects = RestrictedQuerySet.as_manager()
    access_scope = Scope(public_from=Level.TENANTS)

    class Meta:
        ordering = ["fabric"]
        verbose_name = "congestion control policy"
        verbose_name_plural = "congestion control policies"

    def __str__(self) -> str:
        return f"Congestion control of {self.fabric}"

    def congestion_control(self) -> CongestionControl:
        """The settings as :class:`~fabric_engine.backpressure.cc_params.CongestionControl` (validated)."""
        return from_json(self.settings or {}, self.enabled)

    def clean(self) -> None:
        try:
            self.congestion_control()
        except ValueError as exc:
            raise ValidationError({"settings": str(exc)}) from None
        if self.fabric_id is not None:
            try:  # the fabric's congestion model may not run it (the credit model on a large fabric)
                self.fabric.check_congestion_control(self.enabled)
            except FabricEngineError as exc:
                raise ValidationError({"enabled": str(exc)}) from None


def congestion_control_of(fabric) -> CongestionControl:
    """``fabric``'s congestion control settings: its policy's, else OpenSM's defaults (congestion control off)."""
    policy = CongestionControlPolicy.objects.filter(fabric=fabric).first()
    return policy.congestion_control() if policy is not None else CongestionControl()


class AuditEntry(models.Model):
    """One change to tenancy data: who, when, what, before and after."""

    time = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="+")
    username = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=8, choices=AuditAction.choices)
    via = models.CharField(max_length=16, blank=True, help_text="admin, api, import, command")
    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64, blank=True)
    object_repr = models.CharField(max_length=200)
    before = JSONModelField(kind=None, null=True, blank=True)
    after = JSONModelField(kind=None, null=True, blank=True)

    class Meta:
        ordering = ["-time", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.time:%Y-%m-%d %H:%M:%S} {self.username or '-'} {self.action} {self.object_repr}"
