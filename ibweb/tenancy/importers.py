"""OpenSM ``partitions.conf`` -> database, all or nothing.

Every statement is checked against the model (name, P_Key, flags) and every GUID
against the fabric's inventory before anything is written; the first problem is
raised as :class:`~fabric_engine.errors.FormatError` naming the line, and the
transaction leaves the database untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction

from fabric_engine.errors import FormatError
from fabric_engine.formats import opensm_partitions
from fabric_engine.formats.opensm_partitions import DEFAULT_PKEY, PartitionSpec, format_guid

from . import audit
from .choices import AuditAction
from .inventory import UnknownGuid, check_guids
from .models import Partition, PartitionMember

__all__ = ["ImportResult", "import_partitions_conf"]

_KEYWORD_FIELDS = {"ALL_CAS": "all_cas", "ALL_SWITCHES": "all_switches", "ALL_ROUTERS": "all_routers",
                   "SELF": "self_port"}


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
    """
    specs = opensm_partitions.parse(text, source)
    result = ImportResult()
    try:
        with transaction.atomic():
            # the fabric's partitions under row locks: API and admin writers of them wait for the import
            existing = {p.pkey: p for p in Partition.objects.select_for_update().filter(fabric=fabric)}
            free = _free_pkeys(set(existing) | {s.pkey for s in specs if s.pkey is not None} | {DEFAULT_PKEY})
            for spec in specs:
                if spec.pkey == DEFAULT_PKEY:
                    result.notes.append(f"{source}:{spec.line}: the default partition 0x7fff is managed by ibweb; "
                                        "not imported")
                    continue
                _import_one(fabric, spec, existing, free, user, source, result, replace_members)
    except ValidationError as exc:  # raised with the line already attached below
        raise FormatError(source, getattr(exc, "line", None), _message(exc)) from None
    return result


def _fail(exc: ValidationError, line: int | None) -> ValidationError:
    exc.line = line
    return exc


def _import_one(fabric, spec: PartitionSpec, existing: dict, free, user, source: str, result: ImportResult,
                replace_members: bool) -> None:
    if spec.mgroups:
        raise _fail(ValidationError("mgid= multicast group definitions are not supported by ibweb"), spec.mgroups[0][1])
    for flag, attr in (("scope", "scope"), ("Q_Key", "qkey"), ("TClass", "tclass")):
        if getattr(spec, attr) is not None:
            raise _fail(ValidationError(f"flag {flag}= is not stored by ibweb; remove it"), spec.line)
    if not spec.name:
        raise _fail(ValidationError({"name": "a partition needs a name"}), spec.line)
    pkey = spec.pkey if spec.pkey is not None else next(free)
    row = existing.get(pkey)
    created = row is None
    before = None if created else audit.snapshot(row)
    if created:
        row = Partition(fabric=fabric, pkey=pkey)
    values = {"name": spec.name, "ipoib": spec.ipoib, "index0": spec.indx0, "mtu": spec.mtu, "rate": spec.rate,
              "sl": spec.sl, "default_membership": spec.defmember,
              **{f: "" for f in _KEYWORD_FIELDS.values()}, **_keywords(spec, source)}
    for k, v in values.items():
        setattr(row, k, v)
    try:
        row.full_clean()
    except ValidationError as exc:
        raise _fail(exc, spec.line) from None
    guids = [(format_guid(m.target), m.membership, m.line) for m in spec.members if not isinstance(m.target, str)]
    try:
        check_guids(fabric, [g for g, _, _ in guids], field="guid")
    except UnknownGuid as exc:
        raise _fail(exc, next(line for g, _, line in guids if g == exc.guid)) from None
    row.save()
    existing[pkey] = row
    keep = {} if replace_members else dict(row.members.values_list("guid", "membership"))
    for g, m, _ in guids:
        keep[g] = opensm_partitions.combine_membership(keep[g], m) if g in keep else m
    row.members.all().delete()
    PartitionMember.objects.bulk_create([PartitionMember(partition=row, guid=g, membership=m) for g, m in keep.items()])
    result.members += len(guids)
    (result.created if created else result.updated).append(str(row))
    audit.record(user, AuditAction.IMPORT if created else AuditAction.UPDATE, row, before=before, via="import")
