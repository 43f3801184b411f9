"""Engine processes share the fabrics on one Redis: each leads a balanced share.

Every process that runs engines (``run_engine``, or a web worker running the embedded engine) beats
every ``beat_s`` seconds: its token and the time into the sorted set ``<namespace>:engines``, the ids of
the fabrics it runs into ``<namespace>:engines:<token>`` (expiring with the beat). From the members whose beat is
younger than ``ttl_s`` and what each runs, every process computes the same :func:`assign`: capacity-
bounded rendezvous hashing, so each member leads at most ``ceil(fabrics / members)`` and a member that
joins or leaves moves few fabrics. The leader lock of each fabric (:mod:`ibweb.live.engine.leader`) stays the
single source of truth: a runner tries to take a free lock only for a fabric assigned to its process (or
one left free for longer than a grace), and hands over a fabric assigned elsewhere once the membership
has been stable for ``settle_s``. A process that dies stops beating: within ``ttl_s`` the others assign
its fabrics among themselves and take each one as its lock expires.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Iterable, Mapping

from redis import asyncio as aioredis

__all__ = ["assign", "FabricShare", "members_key"]

log = logging.getLogger("ibweb.live")



def members_key(namespace: str = "ibweb") -> str:
    """The sorted set of a deployment's engine processes (``settings.REDIS_NAMESPACE``)."""
    return f"{namespace}:engines"


def _score(member: str, fabric_id: int) -> int:
    """The rendezvous weight of ``member`` for a fabric: the same in every process."""
    return int.from_bytes(hashlib.blake2b(f"{member}/{fabric_id}".encode(), digest_size=8).digest(), "big")


def assign(candidates: Mapping[str, Iterable[int]]) -> dict[int, str]:
    """Which member leads each fabric, given the fabrics each live member runs.

    Fabrics in id order; each goes to its highest-weighted candidate that still has room: ``fabrics // members``
    each, one more for at most ``fabrics % members`` of them, so loads differ by one at most where every member
    runs every fabric. When all its candidates are full, the least loaded one takes it.

    >>> a = assign({"p": [1, 2, 3, 4], "q": [1, 2, 3, 4]})
    >>> sorted(a), sorted(a.values()).count("p")
    ([1, 2, 3, 4], 2)
    """
    runs: dict[int, list[str]] = {}
    for member, fabric_ids in candidates.items():
        for fid in fabric_ids:
            runs.setdefault(int(fid), []).append(member)
    if not runs:
        return {}
    base, extra = divmod(len(runs), len(candidates))
    load = dict.fromkeys(candidates, 0)
    out: dict[int, str] = {}
    for fid in sorted(runs):
        ranked = sorted(runs[fid], key=lambda m: (-_score(m, fid), m))
        room = [m for m in ranked if load[m] < base or (load[m] == base and extra > 0)]
        member = room[0] if room else min(ranked, key=lambda m: (load[m], m))
        if load[member] == base:
            extra -= 1
        out[fid] = member
        load[member] += 1
    return out


class FabricShare:
    """This process's place among the engine processes on one Redis, and the fabrics it should lead."""

    def __init__(self, redis_url: str, beat_s: float = 1.0, ttl_s: float = 3.0, settle_s: float = 2.0,
                 token: str | None = None, namespace: str = "ibweb") -> None:
        self.redis = aioredis.from_url(redis_url)
        self.key = members_key(namespace)
        self.token = token or secrets.token_hex(6)
        self.beat_s, self.ttl_s, self.settle_s = beat_s, ttl_s, settle_s
        self.assignment: dict[int, str] = {}
        self.members: tuple[str, ...] = ()
        self._changed = time.monotonic()
        self._beaten = False

    async def beat(self, fabric_ids: Iterable[int]) -> None:
        """Say that this process lives and runs ``fabric_ids``; read the others and recompute the assignment."""
        now = time.time()
        ttl_ms = max(1, int(self.ttl_s * 1000))
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(self.key, {self.token: now})
            pipe.set(f"{self.key}:{self.token}", ",".join(map(str, sorted(int(f) for f in fabric_ids))), px=ttl_ms)
            pipe.zremrangebyscore(self.key, "-inf", now - self.ttl_s)
            pipe.zrange(self.key, 0, -1)
            *_, raw = await pipe.execute()
        members = sorted(m.decode() for m in raw)
        lists = await self.redis.mget([f"{self.key}:{m}" for m in members]) if members else []
        candidates = {m: [int(f) for f in v.decode().split(",") if f] for m, v in zip(members, lists, strict=True)
                      if v is not None}
        assignment = assign(candidates)
        if tuple(candidates) != self.members or assignment != self.assignment:
            if self._beaten:
                log.info("engine processes: %d live, this one (%s) leads %d of %d fabrics", len(candidates),
                         self.token, sum(1 for m in assignment.values() if m == self.token), len(assignment))
            self.members, self.assignment, self._changed = tuple(candidates), assignment, time.monotonic()
        self._beaten = True

    def mine(self, fabric_id: int) -> bool:
        """Whether this process should lead the fabric (False until its first beat: the others are not known)."""
        return self._beaten and self.assignment.get(fabric_id, self.token) == self.token

    def settled(self) -> bool:
        """Whether the membership and assignment have not changed for ``settle_s`` (a handover may start)."""
        return self._beaten and time.monotonic() - self._changed >= self.settle_s

    async def leave(self) -> None:
        """Stop counting as a member (a clean shutdown hands the fabrics over at once)."""
        try:
            await self.redis.zrem(self.key, self.token)
            await self.redis.delete(f"{self.key}:{self.token}")
        finally:
            await self.redis.aclose()
