"""What a view shows of one fabric's identifiers: its tenants' jobs, and hosts outside their partitions renamed.

A host is hidden from a view below ``ALL`` unless one of its port GUIDs is a member of a
partition of the view's tenants on the fabric. Hidden hosts read as ``host-<index>`` (their
node index, as in the feed's topology) with GUID ``"hidden"``; switches are fabric-wide and
always shown. The tenant host sets come from the fabric's runtime record (published by its
runner), else from the partition members mapped on the published fabric; nothing here
builds a fabric or writes a record.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.db import DatabaseError

from fabric_engine.topology import KIND_HOST
from ibweb.runtime import record
from ibweb.runtime.published import published_fabric

from .jobs import job_tenants
from .querysets import restricted
from .view import Level, View

__all__ = ["Redaction", "redaction", "HIDDEN", "HIDDEN_NODE", "host_label", "hidden_host_names"]

log = logging.getLogger("ibweb.access")

#: What a hidden host's GUID reads as.
HIDDEN = "hidden"
#: What a node reads as where the view cannot tell whether it may name it (gone from the fabric, unknown).
HIDDEN_NODE = "hidden node"


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
    (:func:`ibweb.runtime.record.tenant_hosts`; one query of the fabric's policy version), else
    from the partition members, mapped from port to node GUIDs on ``topology`` (an engine
    fabric; by default the one the record holds: never built here). Fail-closed: when neither
    can be read the view sees no tenant's jobs and no host.
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
    try:
        h = record.head_of(fabric)
        sets = None if h is None else record.tenant_hosts(  # the committed version: a row held since may be older
            fabric.pk, h, type(fabric).committed_policy_version(fabric.pk))
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
    ports = restricted("tenancy.PartitionMember", view).filter(partition__fabric=fabric)
    port_guids = np.array([int(g, 16) for g in ports.values_list("guid", flat=True).distinct()], dtype=np.uint64)
    return Redaction(job_tenants(view), frozenset(_node_guids(fabric, port_guids, topology).tolist()))




def _node_guids(fabric, port_guids: np.ndarray, topology=None) -> np.ndarray:
    """Node GUIDs owning ``port_guids`` (uint64) in ``topology`` or the fabric's known topology."""
    if topology is None:
        topology = _known_topology(fabric)
    if topology is None or not len(port_guids):
        return port_guids
    node, hit = topology.guid_index.nodes(port_guids)
    return topology.guid[node[hit]].astype(np.uint64)


def _known_topology(fabric):
    """The fabric its engine (or a write that checked GUIDs) published; never built here: a read only reads."""
    return published_fabric(fabric)




def hidden_host_names(view: View, fabric, topology=None) -> dict[str, str] | None:
    """``{real name: host-<i>}`` of the hosts of ``fabric`` (a row) that ``view`` may not name, and
    ``{"0x<GUID>": "hidden"}`` of their node and port GUIDs: the labels of a free text (:func:`relabel`).

    ``topology``: the engine fabric the names are of (default: the fabric's known one). ``{}`` for
    ``ALL``; ``None`` below ``ALL`` when no topology is known: no name may then be shown (fail-closed).
    """
    if view.sees_all:
        return {}
    if topology is None:
        topology = _known_topology(fabric)
    if topology is None:
        return None
    mask = redaction(view, fabric, topology).hidden_nodes(topology)
    hidden = mask.nonzero()[0]
    guids = np.concatenate([topology.guid[hidden], topology.port_guid[mask[topology.port_node]]])
    labels = dict.fromkeys((f"0x{g:016x}" for g in np.unique(guids).tolist()), HIDDEN)
    labels.update((str(topology.node_name[i]), host_label(i)) for i in hidden.tolist())
    return labels
