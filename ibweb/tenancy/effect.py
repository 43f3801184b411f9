"""What a partition change would do, before it is applied: who loses (or gains) whom, which jobs it cuts.

Both policies (before and after) are built with :meth:`fabric_engine.policy.Policy.from_dict`
on the fabric's data, and :func:`fabric_engine.policy.enforce` decides host pairs under both,
exactly as the engine will: two hosts reach each other when they share a partition in which
at least one of them is a full member.

Hosts whose memberships are the same under both policies behave the same, so the hosts are
grouped into classes (one per distinct pair of membership columns; a few per tenant in
practice) and :func:`enforce` decides the pairs of class representatives: ``T x T`` flows for
``T`` classes instead of ``changed x all hosts``. Counts per host and per job follow from the
class sizes. A fabric with more than :data:`MAX_CLASSES` classes is checked class by host.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fabric_engine.policy import Policy, enforce
from fabric_engine.topology import Fabric

__all__ = ["Effect", "change_effect", "MAX_CLASSES"]

#: Most host classes decided pairwise (``MAX_CLASSES**2`` flows); beyond, changed classes against each host.
MAX_CLASSES = 2048


@dataclass
class Effect:
    """The effect of one change; host and job lists are the ``limit`` worst, counts are complete."""

    changed_hosts: int = 0
    hosts_losing: int = 0
    hosts_gaining: int = 0
    pairs_lost: int = 0
    pairs_gained: int = 0
    hosts: list = field(default_factory=list)  # [{"host", "node", "lost", "gained", "lost_examples": [...]}]
    jobs: list = field(default_factory=list)  # [{"id", "tenant", "pairs_cut", "hosts", "hosts_cut"}]

    @property
    def harmless(self) -> bool:
        return self.pairs_lost == 0


def _plain(policy: Policy) -> Policy:
    """The policy without QoS: reachability is the partitions' business (an SL's VL does not cut a pair)."""
    return Policy(policy.pkeys, policy.names, policy.membership, policy.sl, policy.rate_limit_gbps, None)


def _reach(policy: Policy, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    return enforce(policy, src, dst, np.zeros(len(src), dtype=np.int8)).allowed


def _classes(p0: Policy, p1: Policy, hosts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(class of each host, representative node of each class)``."""
    cols = np.concatenate([p0.membership[:, hosts], p1.membership[:, hosts]], axis=0).T  # [H, K0 + K1]
    _, first, cls = np.unique(cols, axis=0, return_index=True, return_inverse=True)
    return cls.ravel(), hosts[first]


def change_effect(fabric: Fabric, before: dict, after: dict, changed: np.ndarray, jobs: list[dict] | None = None,
                  limit: int = 20, examples: int = 5) -> Effect:
    """The :class:`Effect` of going from policy data ``before`` to ``after`` (see :meth:`Policy.from_dict`).

    Parameters
    ----------
    fabric : Fabric
        The fabric the GUIDs of both policies name.
    changed : ndarray of int
        Node indices of the hosts whose membership changes (the others' pairs can only change with them).
    jobs : list of dict, optional
        ``{"id", "tenant", "hosts": node indices}`` of the running jobs.
    """
    p0, p1 = _plain(Policy.from_dict(fabric, before)), _plain(Policy.from_dict(fabric, after))
    hosts = np.asarray(fabric.hosts, dtype=np.int64)
    changed = np.intersect1d(np.asarray(changed, dtype=np.int64), hosts)
    out = Effect(changed_hosts=int(len(changed)))
    if not len(changed) or len(hosts) < 2:
        return out
    cls_of_host, rep = _classes(p0, p1, hosts)
    T = len(rep)
    if T > MAX_CLASSES:
        raise ValueError(f"{T} distinct memberships: too many to preview")  # never on real partition plans
    src, dst = np.repeat(rep, T), np.tile(rep, T)
    lost = (_reach(p0, src, dst) & ~_reach(p1, src, dst)).reshape(T, T)
    gained = (~_reach(p0, src, dst) & _reach(p1, src, dst)).reshape(T, T)
    size = np.bincount(cls_of_host, minlength=T)
    cls = np.full(fabric.num_nodes, -1, dtype=np.int64)
    cls[hosts] = cls_of_host

    def per_host(m: np.ndarray) -> np.ndarray:  # pairs a host of each class loses (or gains), not with itself
        return m.astype(np.int64) @ size - np.diag(m).astype(np.int64)

    lost_c, gained_c = per_host(lost), per_host(gained)
    changed_cls = np.zeros(T, dtype=bool)
    changed_cls[cls[changed]] = True

    def pairs(m: np.ndarray) -> int:  # unordered host pairs with at least one end in a changed class
        w = m & (changed_cls[:, None] | changed_cls[None, :])
        return int((size @ w.astype(np.int64) @ size - (np.diag(w) * size).sum()) // 2)

    out.pairs_lost, out.pairs_gained = pairs(lost), pairs(gained)
    lost_h, gained_h = lost_c[cls[changed]], gained_c[cls[changed]]
    out.hosts_losing, out.hosts_gaining = int((lost_h > 0).sum()), int((gained_h > 0).sum())
    names = fabric.node_name
    first_of = {int(c): hosts[cls_of_host == c][: examples + 1] for c in np.unique(cls[changed])}
    for i in np.lexsort((-gained_h, -lost_h))[:limit]:
        if not (lost_h[i] or gained_h[i]):
            break
        c = cls[changed[i]]
        peers = [h for j in np.flatnonzero(lost[c]) for h in first_of.get(int(j), _first(hosts, cls_of_host, j,
                                                                                          examples + 1))]
        peers = [h for h in peers if h != changed[i]][:examples]
        out.hosts.append({"host": str(names[changed[i]]), "node": int(changed[i]), "lost": int(lost_h[i]),
                          "gained": int(gained_h[i]), "lost_examples": [str(names[h]) for h in peers]})
    out.jobs = _jobs_cut(jobs or [], cls, lost, changed_cls, limit)
    return out


def _first(hosts: np.ndarray, cls_of_host: np.ndarray, c: int, n: int) -> np.ndarray:
    return hosts[np.flatnonzero(cls_of_host == c)[:n]]


def _jobs_cut(jobs: list[dict], cls: np.ndarray, lost: np.ndarray, changed_cls: np.ndarray, limit: int) -> list:
    cut = []
    T = len(changed_cls)
    for job in jobs:  # loop over jobs; each is a class count vector
        h = np.asarray(job.get("hosts", []), dtype=np.int64)
        c = cls[h] if len(h) else h
        c = c[c >= 0]
        if len(c) < 2 or not changed_cls[c].any():
            continue
        n = np.bincount(c, minlength=T)
        w = lost & (changed_cls[:, None] | changed_cls[None, :])
        pairs = int((n @ w.astype(np.int64) @ n - (np.diag(w) * n).sum()) // 2)
        if pairs:
            per_host = w.astype(np.int64) @ n - np.diag(w)
            cut.append({"id": job["id"], "tenant": job.get("tenant"), "pairs_cut": pairs, "hosts": int(len(h)),
                        "hosts_cut": int(n[per_host > 0].sum())})
    cut.sort(key=lambda j: -j["pairs_cut"])
    return cut[:limit]
