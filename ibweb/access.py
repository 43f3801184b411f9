"""What a user may see: decided here, once, from explicit grants (fail-closed).

Every page, API endpoint, export, ``/metrics``, the live feed and its progress and
alert messages ask :func:`view_of` and act on the :class:`View` it returns, through
the functions of this module; nothing else decides visibility. The levels, from
least to most:

``NONE``
    may see nothing: not logged in where public read is off.
``FABRIC``
    fabric-wide aggregates only (link loads, totals, switches; no tenant, job id,
    host name or GUID of a tenant, no contacts, audit, exports or collectors):
    anonymous visitors where public read is on, and signed-in users who hold
    neither a tenant membership nor the permission to see all tenants.
``TENANTS``
    the aggregates plus the tenants, partitions, jobs and hosts of the tenants the
    user belongs to (``Tenant.users``).
``ALL``
    every tenant, the audit log, the OpenSM exports and the collectors: superusers
    and users with ``tenancy.view_all_tenants`` (the operator and policy admin roles,
    and service accounts such as a Prometheus scraper's).

A deactivated user is not authenticated, so they fall to the anonymous level,
which is never more than any signed-in user's.

What each level gets of a fabric's identifiers is one :class:`Redaction`
(:func:`redaction`): jobs of the visible tenants only, and the names and GUIDs
of hosts outside the visible tenants' partitions replaced by ``host-<index>`` and
``"hidden"`` (switches are fabric-wide and always shown).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from django.conf import settings
from django.db import DatabaseError

from ibweb.relabel import relabel

__all__ = ["Level", "View", "view_of", "VIEW_ALL_PERMISSION", "NOTHING", "FABRIC_ONLY", "EVERYTHING",
           "visible_fabrics", "visible_tenants", "visible_partitions", "visible_members", "visible_service_classes",
           "visible_qos_policies", "job_tenants", "Redaction", "redaction", "HIDDEN", "host_label", "scenario_spec",
           "visible_job_ids", "FABRIC_WIDE_SPEC_KEYS", "tenant_host_sets", "HIDDEN_NODE", "hidden_host_names",
           "relabel", "shown_job_rows", "view_from_key", "progress_message"]

log = logging.getLogger("ibweb.access")

#: The permission that grants the ``ALL`` level.
VIEW_ALL_PERMISSION = "tenancy.view_all_tenants"
#: What a hidden host's GUID reads as.
HIDDEN = "hidden"
#: What a node reads as where the view cannot tell whether it may name it (gone from the fabric, unknown).
HIDDEN_NODE = "hidden node"


class Level(IntEnum):
    """How much of the fabric a user may see (ordered: a higher level sees more)."""

    NONE = 0
    FABRIC = 1
    TENANTS = 2
    ALL = 3


@dataclass(frozen=True)
class View:
    """What one user may see: a level, and for ``TENANTS`` the IDs of their tenants."""

    level: Level
    tenant_ids: frozenset[int] = frozenset()

    @property
    def key(self) -> str:
        """A short stable name of this view: users with equal keys see exactly the same data.

        ``"none"``, ``"fabric"``, ``"all"``, or ``"t-<id>-<id>..."`` (tenant IDs ascending).
        """
        if self.level == Level.TENANTS:
            return "t-" + "-".join(str(i) for i in sorted(self.tenant_ids))
        return self.level.name.lower()

    @property
    def may_view(self) -> bool:
        """Whether the user may view dashboards, feeds and read-only endpoints at all."""
        return self.level > Level.NONE

    @property
    def sees_all(self) -> bool:
        """Whether the user sees every tenant's data (and the audit log, exports and collectors)."""
        return self.level == Level.ALL

    @property
    def sees_tenants(self) -> bool:
        """Whether the user sees tenant-scoped data at all (their own tenants', or every tenant's)."""
        return self.level >= Level.TENANTS

    def sees_tenant(self, tenant_id: int | None) -> bool:
        """Whether data of the tenant with this ID is visible (``None``, data of no tenant, only to ``ALL``)."""
        if self.level == Level.ALL:
            return True
        return self.level == Level.TENANTS and tenant_id is not None and tenant_id in self.tenant_ids


NOTHING = View(Level.NONE)
FABRIC_ONLY = View(Level.FABRIC)
EVERYTHING = View(Level.ALL)


def view_from_key(key: str) -> View:
    """The :class:`View` a :attr:`View.key` names (``"all"``, ``"fabric"``, ``"t-1-2"``); ``ValueError`` otherwise."""
    if key == "all":
        return EVERYTHING
    if key.startswith("t-"):
        try:
            return View(Level.TENANTS, frozenset(int(i) for i in key[2:].split("-")))
        except ValueError:
            pass
    elif key == "fabric":
        return FABRIC_ONLY
    raise ValueError(f"not a view key: {key!r}")


def progress_message(view: View, payload: dict) -> dict:
    """A feed ``progress`` payload as ``view`` sees it.

    Below ``ALL`` an analysis that ended says only its status: a what-if's summary names jobs
    (the worst one) and a failure's message may name hosts; those views read the result from
    the API, redacted. Running steps, an eBB's result and the engine's progress are fabric-wide.
    """
    if view.sees_all or payload.get("task") != "analysis" or payload.get("status") == "running":
        return payload
    if payload.get("kind") == "ebb" and payload.get("status") == "done":
        return payload
    return {**payload, "message": f"analysis {payload.get('status')}"}


def view_of(user) -> View:
    """The :class:`View` of ``user`` (a Django user, ``AnonymousUser`` or ``None``)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return FABRIC_ONLY if settings.IBWEB_PUBLIC_READ else NOTHING
    if user.is_superuser or user.has_perm(VIEW_ALL_PERMISSION):
        return EVERYTHING
    ids = frozenset(user.tenants.values_list("pk", flat=True))
    return View(Level.TENANTS, ids) if ids else FABRIC_ONLY


# ------------------------------------------------------------------ rows
def _scoped(queryset, view: View, tenant_field: str):
    """``queryset`` cut to the rows of the tenants ``view`` sees (``tenant_field``: the lookup of the tenant's ID)."""
    if view.sees_all:
        return queryset
    if view.level == Level.TENANTS:
        return queryset.filter(**{f"{tenant_field}__in": view.tenant_ids})
    return queryset.none()


def visible_fabrics(view: View, queryset=None):
    """The fabrics ``view`` may open (their aggregates; every fabric from ``FABRIC`` up)."""
    from ibweb.fabrics.models import Fabric

    queryset = Fabric.objects.all() if queryset is None else queryset
    return queryset if view.may_view else queryset.none()


def visible_tenants(view: View, queryset=None):
    """The tenants ``view`` sees (with their contacts): its own, or all for ``ALL``."""
    from ibweb.tenancy.models import Tenant

    return _scoped(Tenant.objects.all() if queryset is None else queryset, view, "pk")


def visible_partitions(view: View, queryset=None):
    """The partitions ``view`` sees: its tenants' (a partition of no tenant only for ``ALL``)."""
    from ibweb.tenancy.models import Partition

    return _scoped(Partition.objects.all() if queryset is None else queryset, view, "tenant_id")


def visible_members(view: View, queryset=None):
    """The partition members ``view`` sees: those of :func:`visible_partitions`."""
    from ibweb.tenancy.models import PartitionMember

    return _scoped(PartitionMember.objects.all() if queryset is None else queryset, view, "partition__tenant_id")


def visible_service_classes(view: View, queryset=None):
    """The QoS classes ``view`` sees: all for ``ALL``, else those its tenants or their partitions use."""
    from django.db.models import Q

    from ibweb.tenancy.models import ServiceClass

    queryset = ServiceClass.objects.all() if queryset is None else queryset
    if view.sees_all:
        return queryset
    if view.level < Level.TENANTS:
        return queryset.none()
    ids = view.tenant_ids
    return queryset.filter(Q(tenants__in=ids) | Q(partitions__tenant_id__in=ids)).distinct()


def visible_qos_policies(view: View, queryset=None):
    """The fabrics' QoS tables (SL to VL, arbitration): configuration, for ``TENANTS`` and up."""
    from ibweb.tenancy.models import QosPolicy

    queryset = QosPolicy.objects.all() if queryset is None else queryset
    return queryset if view.sees_tenants else queryset.none()


def job_tenants(view: View) -> frozenset[str] | None:
    """Slugs and names of the tenants whose jobs ``view`` sees (jobs name their tenant by either); ``None``: all."""
    if view.sees_all:
        return None
    if view.level < Level.TENANTS:
        return frozenset()
    from ibweb.tenancy.models import Tenant

    rows = Tenant.objects.filter(pk__in=view.tenant_ids).values_list("slug", "name")
    return frozenset(s for pair in rows for s in pair)


# ------------------------------------------------------------------ identifiers of one fabric
def host_label(index: int) -> str:
    """What a hidden host is called: its node index, as in the feed's topology."""
    return f"host-{int(index)}"


@dataclass(frozen=True)
class Redaction:
    """What one view shows of one fabric's identifiers.

    ``tenants``: slugs and names of the tenants whose jobs are shown (``None``: all);
    ``host_guids``: node GUIDs of the hosts whose names and GUIDs are shown (``None``:
    all). A host outside it reads as ``host-<index>`` with GUID ``"hidden"``.
    """

    tenants: frozenset[str] | None
    host_guids: frozenset[int] | None

    @property
    def shows_all(self) -> bool:
        return self.tenants is None and self.host_guids is None

    def shows_job(self, tenant: str | None) -> bool:
        """Whether a job of ``tenant`` (slug or name) is shown."""
        return self.tenants is None or (tenant is not None and tenant in self.tenants)

    def jobs(self, items: Iterable[dict], tenant_key: str = "tenant") -> list[dict]:
        """The items (jobs, or rows naming a tenant) whose tenant is shown."""
        return [j for j in items if self.shows_job(j.get(tenant_key))]

    def job_ids(self, jobs: Iterable[dict], id_key: str = "name") -> set[str]:
        """Names of the shown jobs among ``jobs`` (``{"name", "tenant"}`` each, as a spec lists them)."""
        return {str(j.get(id_key)) for j in jobs if self.shows_job(j.get("tenant"))}

    def hidden_hosts(self, is_host: np.ndarray, node_guid: np.ndarray) -> np.ndarray:
        """Boolean mask of the nodes whose identity is hidden, bool ``[N]``.

        ``is_host``: bool ``[N]``; ``node_guid``: uint64 ``[N]`` (node GUIDs).
        """
        is_host = np.asarray(is_host, dtype=bool)
        if self.host_guids is None:
            return np.zeros(len(is_host), dtype=bool)
        shown = np.fromiter(self.host_guids, dtype=np.uint64, count=len(self.host_guids))
        return is_host & ~np.isin(np.asarray(node_guid, dtype=np.uint64), shown)

    def hidden_nodes(self, fabric) -> np.ndarray:
        """:meth:`hidden_hosts` of an engine :class:`~fabric_engine.topology.Fabric`, bool ``[N]``."""
        from fabric_engine.topology import KIND_HOST

        return self.hidden_hosts(fabric.kind == KIND_HOST, fabric.guid)

    def topology(self, topology: dict) -> dict:
        """A topology in ibweb's JSON form with hidden hosts renamed ``host-<i>`` and GUIDs ``"hidden"``.

        The node and link arrays keep their length and order, so per-link data still lines up.
        """
        if self.host_guids is None:
            return topology
        nodes = topology["nodes"]
        guid = np.array([int(g, 16) for g in nodes["guid"]], dtype=np.uint64)
        hidden = np.flatnonzero(self.hidden_hosts(np.array(nodes["kind"]) == "host", guid))
        names, guids = list(nodes["name"]), list(nodes["guid"])
        for i in hidden.tolist():  # loop over the hidden hosts only, to rewrite two lists
            names[i], guids[i] = host_label(i), HIDDEN
        return {**topology, "nodes": {**nodes, "name": names, "guid": guids}}


_SHOW_ALL = Redaction(None, None)
_SHOW_NONE = Redaction(frozenset(), frozenset())


def redaction(view: View, fabric, topology=None) -> Redaction:
    """The :class:`Redaction` of ``fabric`` (a fabric row) for ``view``.

    A host is shown when one of its port GUIDs is an explicit member of a partition
    of the view's tenants on this fabric. The hosts of each tenant come from the
    fabric's runtime record while its host sets are of the current policy version
    (:func:`ibweb.runtime.record.tenant_hosts`; no database query), else from the
    partition members, mapped from port to node GUIDs on ``topology`` (an engine
    fabric; by default the fabric's inventory, else the discovered one). Fail-closed:
    when neither can be read the view sees no tenant's jobs and no host.
    """
    if view.sees_all:
        return _SHOW_ALL
    if view.level < Level.TENANTS:
        return _SHOW_NONE
    try:
        shown = _recorded_redaction(view, fabric)
        return shown if shown is not None else _database_redaction(view, fabric, topology)
    except DatabaseError:
        log.warning("fabric %s: no tenant host sets readable; hiding every host from view %s", fabric.pk, view.key)
        return _SHOW_NONE


def _recorded_redaction(view: View, fabric) -> Redaction | None:
    """The redaction from the record's tenant host sets, or None when the record has none for the current policy."""
    from ibweb.runtime import record
    from ibweb.tenancy.engine_policy import policy_version

    try:
        h = record.head(fabric.pk, record.row_identity(fabric))
        sets = record.tenant_hosts(fabric.pk, h, policy_version(fabric.pk)) if h is not None else None
    except Exception:  # the shared cache unreachable: the database decides
        log.warning("fabric %s: runtime record unreadable", fabric.pk, exc_info=True)
        return None
    if sets is None:
        return None
    names: set[str] = set()
    guids: set[int] = set()
    for tid in view.tenant_ids & sets.keys():
        t = sets[tid]
        names |= {t.slug, t.name}
        guids |= t.guids
    missing = view.tenant_ids - sets.keys()
    if missing:  # tenants without a partition on this fabric: no hosts here, only their jobs' names
        names |= job_tenants(View(Level.TENANTS, frozenset(missing)))
    return Redaction(frozenset(names), frozenset(guids))


def _database_redaction(view: View, fabric, topology=None) -> Redaction:
    from ibweb.tenancy.models import PartitionMember

    ports = PartitionMember.objects.filter(partition__fabric=fabric, partition__tenant_id__in=view.tenant_ids)
    port_guids = np.array([int(g, 16) for g in ports.values_list("guid", flat=True).distinct()], dtype=np.uint64)
    return Redaction(job_tenants(view), frozenset(_node_guids(fabric, port_guids, topology).tolist()))


def tenant_host_sets(fabric, topology) -> dict[int, dict]:
    """Per tenant with partitions on ``fabric`` (a row): the hosts of ``topology`` its partitions hold.

    ``{tenant id: {"slug", "name", "nodes": [host index], "guids": [host node GUID]}}``, JSON-ready,
    what the fabric's runner stores in its runtime record (:func:`ibweb.runtime.record.publish_tenants`).
    Member GUIDs that are not ports of ``topology`` name no host.
    """
    from fabric_engine.topology import KIND_HOST
    from ibweb.tenancy.models import PartitionMember, Tenant

    tenants = Tenant.objects.filter(partitions__fabric=fabric).distinct().values_list("pk", "slug", "name")
    out = {pk: {"slug": slug, "name": name, "nodes": [], "guids": []} for pk, slug, name in tenants}
    rows = list(PartitionMember.objects.filter(partition__fabric=fabric, partition__tenant__isnull=False)
                .values_list("partition__tenant_id", "guid").distinct())
    if not rows or not topology.num_nodes:
        return out
    owner = np.array([r[0] for r in rows], dtype=np.int64)
    port_guids = np.array([int(r[1], 16) for r in rows], dtype=np.uint64)
    order = np.argsort(topology.port_guid)
    sorted_guid = topology.port_guid[order]
    pos = np.minimum(np.searchsorted(sorted_guid, port_guids), len(sorted_guid) - 1)
    hit = sorted_guid[pos] == port_guids
    node = topology.port_node[order[pos[hit]]].astype(np.int64)
    owner = owner[hit]
    host = topology.kind[node] == KIND_HOST
    pairs = np.unique(np.stack([owner[host], node[host]], axis=1), axis=0) if host.any() else np.zeros((0, 2), int)
    for tid in np.unique(pairs[:, 0]).tolist():  # one slice per tenant
        nodes = pairs[pairs[:, 0] == tid, 1]
        if tid in out:
            out[tid]["nodes"] = nodes.tolist()
            out[tid]["guids"] = [int(g) for g in topology.guid[nodes]]
    return out


def _node_guids(fabric, port_guids: np.ndarray, topology=None) -> np.ndarray:
    """Node GUIDs owning ``port_guids`` (uint64) in ``topology`` or the fabric's known topology."""
    if topology is None:
        topology = _known_topology(fabric)
    if topology is None or not len(port_guids):
        return port_guids
    order = np.argsort(topology.port_guid)
    sorted_guid = topology.port_guid[order]
    pos = np.minimum(np.searchsorted(sorted_guid, port_guids), len(sorted_guid) - 1)
    hit = sorted_guid[pos] == port_guids
    return topology.guid[topology.port_node[order[pos[hit]]]].astype(np.uint64)


def _known_topology(fabric):
    from django.core.exceptions import ValidationError

    from ibweb.tenancy.inventory import fabric_inventory

    try:  # the fabric its engine published (emulated or discovered), or an emulated fabric's spec
        return fabric_inventory(fabric)
    except ValidationError:  # a telemetry-fed fabric not discovered yet
        return None


#: Keys of a scenario spec that name no tenant, job or host (all that a view below ``ALL`` sees of it besides
#: its own tenants' jobs and SHARP grant).
#: Keys of an uploaded ``topology`` spec that only a view of the whole fabric sees.
OPERATOR_TOPOLOGY_KEYS = frozenset({"warnings"})
FABRIC_WIDE_SPEC_KEYS = frozenset({"topology", "routing", "background", "storage", "tick_s", "seed", "adaptive",
                                   "ecn_threshold", "xmit_wait_tick"})


def scenario_spec(view: View, spec: dict) -> dict:
    """A fabric's scenario ``spec`` as ``view`` sees it.

    Below ``ALL``: the fabric-wide keys (an uploaded topology without its reader's warnings and
    what the file said beyond the graph), the jobs of the view's tenants, and of SHARP's
    ``allowed_tenants`` only the view's tenants; anything else (a ``policy`` with
    partitions and members, keys added later) is left out.
    """
    if view.sees_all:
        return spec
    tenants = job_tenants(view) or frozenset()
    out = {k: v for k, v in spec.items() if k in FABRIC_WIDE_SPEC_KEYS}
    topology = out.get("topology")
    if isinstance(topology, dict):  # a capture's warnings and descriptions name every node: operators only
        out["topology"] = {k: v for k, v in topology.items() if k not in OPERATOR_TOPOLOGY_KEYS}
        if isinstance(topology.get("fabric"), dict):
            out["topology"]["fabric"] = {k: v for k, v in topology["fabric"].items() if k != "as_read"}
    if "jobs" in spec:
        out["jobs"] = [j for j in spec["jobs"] if isinstance(j, dict) and j.get("tenant") in tenants]
    sharp = spec.get("sharp")
    if isinstance(sharp, dict):
        allowed = sharp.get("allowed_tenants")
        out["sharp"] = {**sharp, "allowed_tenants": [t for t in allowed if t in tenants]} \
            if isinstance(allowed, list) else sharp
    return out


def visible_job_ids(view: View, spec: dict) -> frozenset[str] | None:
    """Names of the jobs of a scenario ``spec`` that ``view`` sees (``None``: all)."""
    tenants = job_tenants(view)
    if tenants is None:
        return None
    return frozenset(str(j.get("name")) for j in spec.get("jobs", []) if isinstance(j, dict)
                     and j.get("tenant") in tenants)


def shown_job_rows(view: View, rows: Iterable[dict], spec: dict | None = None) -> frozenset[str] | None:
    """IDs of the rows (``{"id", "tenant"}``: per-job rows of a result) whose job ``view`` sees (``None``: all).

    A row is decided by its own ``tenant`` (the jobs of a telemetry fabric are the twin's, not the
    scenario's); a row without one (stored before rows named their tenant) by the jobs of ``spec``.
    """
    tenants = job_tenants(view)
    if tenants is None:
        return None
    legacy = visible_job_ids(view, spec or {}) or frozenset()
    return frozenset(str(r.get("id")) for r in rows if isinstance(r, dict)
                     and (r["tenant"] in tenants if "tenant" in r else str(r.get("id")) in legacy))


def hidden_host_names(view: View, fabric, topology=None) -> dict[str, str] | None:
    """``{real name: host-<i>}`` of the hosts of ``fabric`` (a row) that ``view`` may not name.

    ``topology``: the engine fabric the names are of (default: the fabric's known one). ``{}`` for
    ``ALL``; ``None`` below ``ALL`` when no topology is known: no name may then be shown (fail-closed).
    """
    if view.sees_all:
        return {}
    if topology is None:
        topology = _known_topology(fabric)
    if topology is None:
        return None
    hidden = redaction(view, fabric, topology).hidden_nodes(topology).nonzero()[0]
    return {str(topology.node_name[i]): host_label(i) for i in hidden.tolist()}
