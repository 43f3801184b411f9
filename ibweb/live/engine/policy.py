"""A fabric's partitions, QoS and congestion control settings, applied to its source, and its tenants' hosts,
published in its runtime record.

:class:`PolicyApplier` brings both within one tick of a change of the fabric's policy version (read through
:class:`~ibweb.live.engine.policy_watch.PolicyVersionWatch`, which never holds the tick), and again after
each new topology (the policy names GUIDs of that fabric).
"""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async

from fabric_engine.errors import FabricEngineError
from fabric_engine.policy import Policy
from ibweb.access import tenant_host_sets
from ibweb.live.engine.policy_watch import PolicyVersionWatch
from ibweb.runtime import record
from ibweb.tenancy.engine_policy import policy_data
from ibweb.tenancy.models import congestion_control_of

__all__ = ["PolicyApplier"]

log = logging.getLogger("ibweb.live")


class PolicyApplier:
    """Applies one fabric row's policy to its source.

    ``version``: ``(policy version, source topology version)`` last applied (or tried); None: apply it again.
    """

    def __init__(self, row) -> None:
        self.row = row
        self.fabric_id = row.pk
        self.slug = row.slug
        self.watch = PolicyVersionWatch(self.fabric_id)
        self.version: tuple | None = None

    def reset(self) -> None:
        """Apply the policy again on the next tick (a new topology, or a new source)."""
        self.version = None

    async def apply(self, source, record_version: str | None, topology_version) -> None:
        """Hand the fabric's partitions and QoS to ``source`` when they changed since the last tick.

        ``record_version``: the record whose tenant host sets are published first (None: none yet);
        ``topology_version``: the source's topology version behind that record.
        """
        current = await self.watch.current()  # never holds the tick on a database that does not answer
        version = (current, topology_version)
        if current is None or version == self.version or source.fabric is None:
            return
        await self.publish_tenant_hosts(source, record_version, version[0])
        data = await sync_to_async(policy_data)(self.row)
        try:
            policy = await asyncio.to_thread(Policy.from_dict, source.fabric, data)
        except FabricEngineError as exc:  # e.g. a member GUID the discovered fabric does not have (yet)
            log.warning("fabric %s: policy not applied: %s", self.slug, exc)
            self.version = version  # tried again on the next change, not every tick
            return
        await asyncio.to_thread(source.apply_policy, policy)
        cc = await sync_to_async(congestion_control_of)(self.row)
        try:
            await asyncio.to_thread(source.apply_congestion_control, cc)
        except FabricEngineError as exc:  # a fabric its model cannot run it on: the settings are refused when saved
            log.warning("fabric %s: congestion control not applied: %s", self.slug, exc)
        self.version = version
        log.info("fabric %s: policy version %d applied", self.slug, version[0])

    async def publish_tenant_hosts(self, source, record_version: str | None, policy: int) -> None:
        """Store each tenant's hosts on the published fabric in record ``record_version``, as of policy ``policy``.

        Read after ``policy`` (a change bumps the version once committed), so the sets are never
        older than the version they carry.
        """
        if record_version is None:
            return
        sets = await sync_to_async(tenant_host_sets)(self.row, source.fabric)
        await asyncio.to_thread(record.publish_tenants, self.fabric_id, record_version, policy, sets)
