"""OpenSM ``partitions.conf`` (and the ``cc_*`` lines of ``opensm.conf``) -> database, all or nothing.

Every statement is checked against the model (name, P_Key, flags) and every GUID
against the fabric's inventory before anything is written; the first problem is
raised as :class:`~fabric_engine.errors.FormatError` naming the line, and the
transaction leaves the database untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.formats import opensm_partitions
from fabric_engine.formats.opensm_cc import PER_SL_OPTIONS, SCALAR_OPTIONS, parse_cc_conf
from fabric_engine.formats.opensm_partitions import DEFAULT_PKEY, PartitionSpec, format_guid

from . import audit
from .cc_settings import to_json
from .choices import AuditAction
from .inventory import unknown_guids
from .models import AuditEntry, CongestionControlPolicy, Partition, PartitionMember
from .signals import policy_changed

__all__ = ["ImportResult", "import_partitions_conf", "import_cc_conf", "MAX_IMPORT_PARTITIONS"]

_KEYWORD_FIELDS = {"ALL_CAS": "all_cas", "ALL_SWITCHES": "all_switches", "ALL_ROUTERS": "all_routers",
                   "SELF": "self_port"}
#: Most partitions one import may define: about 3 s of work (0.3 ms each, ``tests/bench/bench_hostile_requests.py``);
#: a P_Key table holds 128 on most adapters, so a subnet's real files hold far fewer.
MAX_IMPORT_PARTITIONS = 10_000
#: The fields an import sets on a partition it updates (besides a new name).
_UPDATED_FIELDS = ["ipoib", "index0", "mtu", "rate", "sl", "default_membership", *_KEYWORD_FIELDS.values()]


@dataclass
class ImportResult:
    """What an import did; ``notes`` name lines that were deliberately not imported."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    members: int = 0
    notes: list[str] = field(default_factory=list)


def _message(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
    return " ".join(exc.messages)


def _keywords(spec: PartitionSpec, source: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in spec.members:
        if not isinstance(m.target, str):
            continue
        fields = list(_KEYWORD_FIELDS.values()) if m.target == "ALL" else [_KEYWORD_FIELDS[m.target]]
        if m.target == "ALL":
            fields.remove("self_port")
        for f in fields:
            out[f] = m.membership if f not in out else opensm_partitions.combine_membership(out[f], m.membership)
    return out


def _free_pkeys(used: set[int]):
    k = 1
    while True:
        if k not in used:
            yield k
        k += 1


def import_partitions_conf(fabric, text: str, user=None, source: str = "partitions.conf",
                           replace_members: bool = True) -> ImportResult:
    """Create or update the partitions of ``fabric`` from a ``partitions.conf`` text.

    A partition whose P_Key exists is updated (its flags; its member set replaced,
    or merged when ``replace_members`` is false); the default partition 0x7fff is
    managed by ibweb and skipped with a note; a definition without a P_Key gets the
    lowest free one. Raises :class:`FormatError` (nothing saved).

    Every statement is checked in file order against the state the statements before it leave (names
    unique per fabric, GUIDs ports of the fabric: one inventory read for all), then everything is written
    in a few bulk statements: the cost is a handful of queries, not a dozen per partition (issue 26:
    3,000 partitions took 24 s).
    """
    specs = opensm_partitions.parse(text, source)
    if len(specs) > MAX_IMPORT_PARTITIONS:
        raise FormatError(source, None, f"{len(specs):,} partitions; an import may hold at most "
                                        f"{MAX_IMPORT_PARTITIONS:,}")
    result = ImportResult()
    try:
        with transaction.atomic():
            plan = _Plan(fabric, specs, source, replace_members)
            for spec in specs:
                if spec.pkey == DEFAULT_PKEY:
                    result.notes.append(f"{source}:{spec.line}: the default partition 0x7fff is managed by ibweb; "
                                        "not imported")
                    continue
                plan.add(spec)
            plan.write(user, result)
    except ValidationError as exc:  # raised with the line already attached below
        raise FormatError(source, getattr(exc, "line", None), _message(exc)) from None
    return result


def _fail(exc: ValidationError, line: int | None) -> ValidationError:
    exc.line = line
    return exc


class _Plan:
    """The partitions an import creates or changes, validated one statement at a time, then written in bulk."""

    def __init__(self, fabric, specs: list[PartitionSpec], source: str, replace_members: bool) -> None:
        self.fabric, self.source, self.replace_members = fabric, source, replace_members
        # the fabric's partitions under row locks: API and admin writers of them wait for the import
        self.existing = {p.pkey: p for p in Partition.objects.select_for_update().filter(fabric=fabric)}
        self.members: dict[int, dict[str, str]] = {pk: {} for pk in self.existing}
        for pkey, guid, membership in PartitionMember.objects.filter(partition__fabric=fabric).values_list(
                "partition__pkey", "guid", "membership"):
            self.members[pkey][guid] = membership
        self.name_owner = {p.name: pkey for pkey, p in self.existing.items()}
        self.free = _free_pkeys(set(self.existing) | {s.pkey for s in specs if s.pkey is not None} | {DEFAULT_PKEY})
        self.guids = sorted({format_guid(m.target) for s in specs for m in s.members if not isinstance(m.target, str)})
        self.unknown: set[str] | None = None
        self.changes: list[tuple[Partition, dict | None, dict[str, str], int]] = []  # row, before, members, listed

    def _unknown(self) -> set[str]:
        if self.unknown is None:  # read once, at the first statement that gets this far (errors stay in file order)
            self.unknown = unknown_guids(self.fabric, self.guids)
        return self.unknown

    def add(self, spec: PartitionSpec) -> None:
        """Check ``spec`` against the model, the names so far and the inventory; :class:`ValidationError` with
        ``line``."""
        if spec.mgroups:
            raise _fail(ValidationError("mgid= multicast group definitions are not supported by ibweb"),
                        spec.mgroups[0][1])
        for flag, attr in (("scope", "scope"), ("Q_Key", "qkey"), ("TClass", "tclass")):
            if getattr(spec, attr) is not None:
                raise _fail(ValidationError(f"flag {flag}= is not stored by ibweb; remove it"), spec.line)
        if not spec.name:
            raise _fail(ValidationError({"name": "a partition needs a name"}), spec.line)
        pkey = spec.pkey if spec.pkey is not None else next(self.free)
        row = self.existing.get(pkey)
        created = row is None
        before = None if created else audit.snapshot(row, self.members[pkey])
        if created:
            row = Partition(fabric=self.fabric, pkey=pkey)
        values = {"name": spec.name, "ipoib": spec.ipoib, "index0": spec.indx0, "mtu": spec.mtu, "rate": spec.rate,
                  "sl": spec.sl, "default_membership": spec.defmember,
                  **{f: "" for f in _KEYWORD_FIELDS.values()}, **_keywords(spec, self.source)}
        old_name = row.name
        for k, v in values.items():
            setattr(row, k, v)
        try:  # the fabric is the one locked above; uniqueness is checked here against the import's own state
            row.full_clean(exclude=["fabric", "tenant", "service_class"], validate_unique=False,
                           validate_constraints=False)
        except ValidationError as exc:
            raise _fail(exc, spec.line) from None
        if self.name_owner.get(row.name, pkey) != pkey:
            raise _fail(ValidationError({"name": f"partition name {row.name!r} is already used in this fabric"}),
                        spec.line)
        guids = [(format_guid(m.target), m.membership, m.line) for m in spec.members if not isinstance(m.target, str)]
        unknown = self._unknown()
        bad = [(g, line) for g, _, line in guids if g in unknown]
        if bad:
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            raise _fail(ValidationError({"guid": f"GUID {bad[0][0]} is not a port of fabric {self.fabric.slug}{more}"}),
                        bad[0][1])
        if not created and self.name_owner.get(old_name) == pkey:
            del self.name_owner[old_name]
        self.name_owner[row.name] = pkey
        self.existing[pkey] = row
        keep = {} if self.replace_members else dict(self.members.get(pkey, {}))
        for g, m, _ in guids:
            keep[g] = opensm_partitions.combine_membership(keep[g], m) if g in keep else m
        self.members[pkey] = keep
        self.changes.append((row, before, keep, len(guids)))

    def write(self, user, result: ImportResult) -> None:
        """Store every change: partitions, their members, one audit entry each; one policy bump for all."""
        for row, before, _, _ in self.changes:  # a renamed row frees its old name first, in file order
            if before is not None and before["name"] != row.name:
                row.save()
        Partition.objects.bulk_create([row for row, before, _, _ in self.changes if before is None])
        groups: dict[tuple, list[int]] = {}  # rows that change, by their new values: one UPDATE per kind
        for row, before, _, _ in self.changes:
            if before is not None and before["name"] == row.name:
                values = tuple(getattr(row, f) for f in _UPDATED_FIELDS)
                if values != tuple(before[f] for f in _UPDATED_FIELDS):
                    groups.setdefault(values, []).append(row.pk)
        for values, pks in groups.items():
            for lo in range(0, len(pks), 500):
                Partition.objects.filter(pk__in=pks[lo:lo + 500]).update(**dict(zip(_UPDATED_FIELDS, values,
                                                                                      strict=True)))
        ids = [row.pk for row, _, _, _ in self.changes]
        for lo in range(0, len(ids), 500):  # no per-member signal: one policy bump below stands for all of them
            stale = PartitionMember.objects.filter(partition_id__in=ids[lo:lo + 500])
            stale._raw_delete(stale.db)
        PartitionMember.objects.bulk_create(
            [PartitionMember(partition=row, guid=g, membership=m) for row, _, keep, _ in self.changes
             for g, m in keep.items()], batch_size=2000)
        entries = []
        for row, before, keep, listed in self.changes:
            result.members += listed
            (result.created if before is None else result.updated).append(str(row))
            entries.append(audit.entry(user, AuditAction.IMPORT if before is None else AuditAction.UPDATE, row,
                                       before=before, after=audit.snapshot(row, keep), via="import"))
        AuditEntry.objects.bulk_create(entries, batch_size=1000)
        if self.changes:
            policy_changed(self.fabric.pk)


def import_cc_conf(fabric, text: str, user=None, source: str = "opensm.conf") -> CongestionControlPolicy:
    """Set the congestion control policy of ``fabric`` (made if missing) from an ``opensm.conf`` text.

    Reads its ``congestion_control`` and ``cc_*`` lines (:func:`~fabric_engine.formats.opensm_cc.parse_cc_conf`;
    options not given take OpenSM's defaults, other options are ignored) and leaves an audit entry. Raises
    :class:`FormatError` naming the line (nothing saved), also when the text has no such option.
    """
    options = set(SCALAR_OPTIONS) | set(PER_SL_OPTIONS)
    if not any((line.split("#", 1)[0].split() or [""])[0] in options for line in text.splitlines()):
        raise FormatError(source, None, "no congestion control option (congestion_control, cc_*) in the text")
    cc = parse_cc_conf(text, source)
    try:
        fabric.check_congestion_control(cc.enabled)
    except FabricEngineError as exc:  # the fabric's congestion model cannot run it
        raise FormatError(source, None, str(exc)) from None
    with transaction.atomic():
        policy = CongestionControlPolicy.objects.select_for_update().filter(fabric=fabric).first()
        before = audit.snapshot(policy) if policy is not None else None
        if policy is None:
            policy = CongestionControlPolicy(fabric=fabric)
        policy.enabled, policy.settings = cc.enabled, to_json(cc)
        policy.save()
        audit.record(user, AuditAction.UPDATE if before is not None else AuditAction.CREATE, policy, before=before,
                     via="import")
    return policy
