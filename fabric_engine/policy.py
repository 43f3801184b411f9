"""Partitions and QoS as the engine enforces them: which flows may flow, on which VL, how hard.

The web app turns its tenancy rows into plain data (:meth:`Policy.from_dict`); the
emulator and solver call :func:`enforce` on their flow arrays and, if they want the
priority behaviour of VL arbitration, :func:`allocate` instead of a plain
``max_min_fair``. Nothing here imports Django.

Interface
---------
``Policy.from_dict(fabric, data)`` with ``data`` as JSON::

    {"partitions": [{"name": "acme", "pkey": 1,
                     "members": [["0xb83fd20300000011", "full"], ...],   # port GUIDs
                     "keywords": {"ALL_CAS": "limited"},                 # ALL, ALL_CAS, ALL_SWITCHES, ...
                     "sl": 1,                                            # optional: forces the SL of its flows
                     "rate_limit_gbps": 100.0}],                         # optional: caps each flow
     "qos": {"sl2vl": [16 VLs], "vlarb_high": [[vl, weight], ...], "vlarb_low": [[vl, weight], ...],
             "high_limit": 0, "max_vls": 8}}                             # optional (absent: QoS off)

``enforce(policy, src, dst, sl, pkey_index=None) -> FlowPolicy``: arrays of shape
``(F,)`` (``src``/``dst`` node indices, ``sl`` 0..15; ``pkey_index`` the partition a
flow's job uses, -1 for "any shared one"). Returns ``allowed`` (bool), ``reason``
(:data:`REASONS` code), ``partition`` (index into ``policy.names``; for a flow blocked
because both ends are limited members, the partition they share), ``sl`` (after the
partition's SL), ``vl``, ``priority`` (1 high, 0 low), ``weight`` (VL arbitration
weight, > 0 where allowed) and ``rate_cap_gbps`` (``inf`` when unlimited).

Isolation rule (IBA 10.9): two ports can talk on a P_Key when both are members and at
least one is a full member; limited members cannot talk to each other. A port with
``both`` counts as full. An empty policy (no partitions) blocks nothing, like
OpenSM without ``partitions.conf`` (``Default=0x7fff : ALL=full``).

QoS rule: a flow's VL is ``sl2vl[sl]``; VL 15 or a VL at or above ``max_vls`` drops the
flow. A VL with a non-zero weight in the high-priority table is served first
(priority 1) with that weight; otherwise its low-table weight applies; a VL with no
weight in either table gets no bandwidth (reason ``"no-vl-weight"``).

Examples
--------
>>> from fabric_engine.topology.generate import fat_tree
>>> f = fat_tree(hosts=4, radix=4)
>>> h = f.hosts
>>> g = [f"0x{int(f.port_guid[f.port_offset[n]]):016x}" for n in h]
>>> pol = Policy.from_dict(f, {"partitions": [
...     {"name": "a", "pkey": 1, "members": [[g[0], "full"], [g[1], "limited"], [g[2], "limited"]]}]})
>>> fp = enforce(pol, np.array([h[0], h[1], h[0]]), np.array([h[1], h[2], h[3]]), np.zeros(3, int))
>>> fp.allowed.tolist(), [REASONS[r] for r in fp.reason]
([True, False, False], ['ok', 'both-limited', 'no-shared-partition'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .errors import FabricEngineError
from .flows import max_min_fair
from .topology import KIND_HOST, KIND_SWITCH, Fabric

__all__ = [
    "LIMITED", "FULL", "BOTH", "MEMBERSHIP_CODES", "REASONS", "Policy", "VLArbitration", "FlowPolicy",
    "enforce", "allocate", "violations",
]

LIMITED = 1
FULL = 2
BOTH = LIMITED | FULL
MEMBERSHIP_CODES = {"limited": LIMITED, "full": FULL, "both": BOTH}
#: ``reason`` codes of :class:`FlowPolicy`.
REASONS = ("ok", "no-shared-partition", "both-limited", "not-in-partition", "sl-dropped", "no-vl-weight")
_OK, _NO_SHARED, _BOTH_LIMITED, _NOT_IN, _DROPPED, _NO_WEIGHT = range(len(REASONS))


@dataclass(frozen=True)
class VLArbitration:
    """SL-to-VL map and per-VL arbitration derived from the two VL arbitration tables.

    ``sl2vl`` int8 ``[16]``; ``priority`` int8 ``[16]`` (1 where the VL has high-table
    weight); ``weight`` float64 ``[16]`` (summed table weight of the VL in its class);
    ``max_vls`` and ``high_limit`` as configured.
    """

    sl2vl: np.ndarray
    priority: np.ndarray
    weight: np.ndarray
    max_vls: int = 15
    high_limit: int = 0

    @classmethod
    def from_tables(cls, sl2vl, vlarb_high, vlarb_low, high_limit: int = 0, max_vls: int = 15) -> VLArbitration:
        """Build from an ``sl2vl`` list of 16 VLs and ``(vl, weight)`` pairs of each table."""
        s = np.asarray(sl2vl, dtype=np.int64)
        if s.shape != (16,) or (s < 0).any() or (s > 15).any():
            raise FabricEngineError("qos.sl2vl: needs 16 VLs in 0..15")
        if not 1 <= max_vls <= 15:
            raise FabricEngineError(f"qos.max_vls {max_vls}: must be 1..15")
        w = {}
        for name, table in (("vlarb_high", vlarb_high), ("vlarb_low", vlarb_low)):
            t = np.asarray(table, dtype=np.int64).reshape(-1, 2)
            if ((t[:, 0] < 0) | (t[:, 0] > 14)).any() or ((t[:, 1] < 0) | (t[:, 1] > 255)).any():
                raise FabricEngineError(f"qos.{name}: VLs must be 0..14 and weights 0..255")
            w[name] = np.bincount(t[:, 0], weights=t[:, 1], minlength=16).astype(np.float64)
        high = w["vlarb_high"] > 0
        weight = np.where(high, w["vlarb_high"], w["vlarb_low"])
        return cls(s.astype(np.int8), high.astype(np.int8), weight, int(max_vls), int(high_limit))


@dataclass(frozen=True)
class Policy:
    """Partition membership per node and optional QoS, ready for :func:`enforce`.

    ``pkeys`` int32 ``[K]``; ``names`` tuple of ``K`` str; ``membership`` uint8
    ``[K, N]`` (bit 1 limited, bit 2 full, per node index: a host is a member when
    any of its ports is); ``sl`` int8 ``[K]`` (-1: keep the flow's SL);
    ``rate_limit_gbps`` float64 ``[K]`` (``inf``: none); ``qos`` or ``None``.
    """

    pkeys: np.ndarray
    names: tuple[str, ...]
    membership: np.ndarray
    sl: np.ndarray
    rate_limit_gbps: np.ndarray
    qos: VLArbitration | None = None

    @property
    def num_partitions(self) -> int:
        return len(self.pkeys)

    @classmethod
    def from_dict(cls, fabric: Fabric, data: dict) -> Policy:
        """Build from plain data (see the module docstring); raises :class:`FabricEngineError` naming the field."""
        parts = data.get("partitions", [])
        n = fabric.num_nodes
        K = len(parts)
        membership = np.zeros((K, n), dtype=np.uint8)
        kinds = {"ALL": (KIND_HOST, KIND_SWITCH), "ALL_CAS": (KIND_HOST,), "ALL_SWITCHES": (KIND_SWITCH,),
                 "ALL_ROUTERS": (), "SELF": ()}
        sl = np.full(K, -1, dtype=np.int8)
        rate = np.full(K, np.inf)
        for k, p in enumerate(parts):  # loop over partitions; members are vectorized
            where = f"partitions[{k}] ({p.get('name', '?')})"
            members = p.get("members", [])
            if members:
                guids = np.array([int(g, 0) if isinstance(g, str) else int(g) for g, _ in members], dtype=np.uint64)
                try:
                    codes = np.array([MEMBERSHIP_CODES[m] for _, m in members], dtype=np.uint8)
                except KeyError as exc:
                    raise FabricEngineError(f"{where}: membership {exc} is not full, limited or both") from None
                nodes, found = fabric.guid_index.nodes(guids)
                if not found.all():
                    raise FabricEngineError(f"{where}: port GUID 0x{int(guids[~found][0]):016x} is not in the fabric")
                np.bitwise_or.at(membership[k], nodes, codes)
            for word, m in p.get("keywords", {}).items():
                if word not in kinds or m not in MEMBERSHIP_CODES:
                    raise FabricEngineError(f"{where}: bad keyword membership {word}={m}")
                membership[k, np.isin(fabric.kind, kinds[word])] |= MEMBERSHIP_CODES[m]
            if p.get("sl") is not None:
                if not 0 <= int(p["sl"]) <= 15:
                    raise FabricEngineError(f"{where}: sl {p['sl']} outside 0..15")
                sl[k] = int(p["sl"])
            if p.get("rate_limit_gbps") is not None:
                if float(p["rate_limit_gbps"]) <= 0:
                    raise FabricEngineError(f"{where}: rate_limit_gbps must be positive")
                rate[k] = float(p["rate_limit_gbps"])
        qos = data.get("qos")
        arb = None
        if qos:
            arb = VLArbitration.from_tables(qos["sl2vl"], qos.get("vlarb_high", []), qos.get("vlarb_low", []),
                                            qos.get("high_limit", 0), qos.get("max_vls", 15))
        return cls(np.array([int(p["pkey"]) for p in parts], dtype=np.int32),
                   tuple(str(p.get("name", "")) for p in parts), membership, sl, rate, arb)


@dataclass(frozen=True)
class FlowPolicy:
    """Per-flow outcome of :func:`enforce`; every array has shape ``(F,)``."""

    allowed: np.ndarray
    reason: np.ndarray
    partition: np.ndarray
    sl: np.ndarray
    vl: np.ndarray
    priority: np.ndarray
    weight: np.ndarray
    rate_cap_gbps: np.ndarray


def _first_bit(bits: np.ndarray, k: int) -> np.ndarray:
    """Index of the first set bit of each packed row (-1 when none), int32 ``[F]``."""
    if bits.shape[0] == 0:
        return np.zeros(0, dtype=np.int32)
    unpacked = np.unpackbits(bits, axis=1, count=k).astype(bool)
    return np.where(unpacked.any(axis=1), unpacked.argmax(axis=1), -1).astype(np.int32)


def enforce(policy: Policy, src: np.ndarray, dst: np.ndarray, sl: np.ndarray,
            pkey_index: np.ndarray | None = None) -> FlowPolicy:
    """Isolation and QoS of flows ``src -> dst`` on service level ``sl`` (see the module docstring)."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    f_count = len(src)
    sl_in = np.broadcast_to(np.asarray(sl, dtype=np.int8), (f_count,))
    K = policy.num_partitions
    reason = np.zeros(f_count, dtype=np.int8)
    partition = np.full(f_count, -1, dtype=np.int32)
    if K:
        m = policy.membership
        any_bits = np.packbits(m.T != 0, axis=1)  # [N, W]
        full_bits = np.packbits((m.T & FULL) != 0, axis=1)
        ok = (any_bits[src] & full_bits[dst]) | (full_bits[src] & any_bits[dst])
        shared = any_bits[src] & any_bits[dst]
        partition = _first_bit(ok, K)
        blocked = partition < 0
        limited_pair = _first_bit(shared, K)
        reason[blocked] = np.where(limited_pair[blocked] >= 0, _BOTH_LIMITED, _NO_SHARED)
        partition[blocked] = limited_pair[blocked]
        if pkey_index is not None:
            idx = np.asarray(pkey_index, dtype=np.int64)
            fixed = idx >= 0
            if (idx >= K).any():
                raise FabricEngineError(f"pkey_index must be < {K} (number of partitions)")
            ms, md = m[idx[fixed], src[fixed]], m[idx[fixed], dst[fixed]]
            r = np.where((ms == 0) | (md == 0), _NOT_IN, np.where(((ms | md) & FULL) == 0, _BOTH_LIMITED, _OK))
            reason[fixed] = r
            partition[fixed] = idx[fixed]
    has_part = partition >= 0
    part_sl = np.where(has_part, policy.sl[np.maximum(partition, 0)] if K else -1, -1)
    eff_sl = np.where(part_sl >= 0, part_sl, sl_in).astype(np.int8)
    cap = np.where(has_part & (reason == _OK), policy.rate_limit_gbps[np.maximum(partition, 0)] if K else np.inf,
                   np.inf)
    if policy.qos is None:
        vl = eff_sl.astype(np.int8)
        priority = np.zeros(f_count, dtype=np.int8)
        weight = np.ones(f_count)
    else:
        q = policy.qos
        vl = q.sl2vl[eff_sl]
        safe_vl = np.minimum(vl, 15)
        priority = q.priority[safe_vl]
        weight = q.weight[safe_vl]
        ok_now = reason == _OK
        reason[ok_now & ((vl == 15) | (vl >= q.max_vls))] = _DROPPED
        reason[(reason == _OK) & (weight <= 0)] = _NO_WEIGHT
    return FlowPolicy(reason == _OK, reason, partition, eff_sl, vl.astype(np.int8), priority.astype(np.int8),
                      weight.astype(np.float64), cap.astype(np.float64))


def allocate(incidence: sp.csr_matrix, capacity: np.ndarray, demand: np.ndarray, fp: FlowPolicy) -> np.ndarray:
    """Rates of flows under ``fp``: blocked flows get 0, capped flows at most their cap, and
    high-priority VLs are served before low-priority ones (weighted max-min within a class).

    Strict priority is the limit of VL arbitration with ``high_limit`` 255; with a smaller
    limit real switches let some low-priority traffic through, which this ignores.

    Returns float64 ``[F]``.
    """
    demand = np.minimum(np.asarray(demand, dtype=np.float64), fp.rate_cap_gbps)
    demand = np.where(fp.allowed, demand, 0.0)
    rate = np.zeros(len(demand))
    free = np.asarray(capacity, dtype=np.float64).copy()
    inc = sp.csr_matrix(incidence)
    for level in (1, 0):  # two priority classes
        rows = np.flatnonzero((fp.priority == level) & (demand > 0))
        if not len(rows):
            continue
        sub = inc[rows]
        r = max_min_fair(sub, free, demand[rows], np.maximum(fp.weight[rows], 1e-12))
        rate[rows] = r
        free = np.maximum(free - np.asarray(sub.T @ r).ravel(), 0.0)
    return rate


def violations(fp: FlowPolicy, job: np.ndarray, job_names: list[str], policy: Policy) -> list[dict]:
    """One alert per job with blocked flows: ``{"kind", "job", "partition", "reason", "flows"}``.

    ``job`` int ``[F]`` (-1: background, ignored). The partition is the one the flows
    share as limited members or were asked to use, ``None`` when they share none.
    """
    job = np.asarray(job, dtype=np.int64)
    bad = (~fp.allowed) & (job >= 0)
    if not bad.any():
        return []
    counts = np.bincount(job[bad], minlength=len(job_names))
    out = []
    for j in np.flatnonzero(counts):  # loop over jobs, not flows
        rows = np.flatnonzero(bad & (job == j))
        first = rows[0]
        part = int(fp.partition[first])
        out.append({"kind": "isolation", "job": job_names[j],
                    "partition": policy.names[part] if part >= 0 else None,
                    "reason": REASONS[int(fp.reason[first])], "flows": int(counts[j])})
    return out
