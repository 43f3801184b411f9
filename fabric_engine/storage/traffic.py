"""Storage traffic of a workload: data loading, checkpoint bursts and background reads.

* **Data loading**: a job with ``read_gbps`` reads that much in total while it runs;
  each rank reads its own file, striped over ``stripe_count`` servers, at an equal
  share on every stripe (large sequential reads). Rate-driven flows (finite demand).
* **Checkpoints**: every ``checkpoint.every`` iterations each rank writes its shard
  (``size / n`` bytes), cut into stripes by :func:`~.striping.stripe_bytes`. Greedy
  flows that move bytes; the checkpoint ends when its slowest write does.
* **Background reads**: ``background_read_gbps`` read in total by a random
  ``background_fraction`` of the GPU hosts (seeded), not attributed to a job.

Files start on consecutive servers (Lustre's round-robin allocator): rank ``r`` of
the ``k``-th job starts on server ``(ranks before the job + r) mod S``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..workload import Flows, Job, compute_hosts
from .model import StorageModel
from .striping import stripe_bytes, stripe_servers

__all__ = ["StorageFlows", "storage_flows", "ROLE_LOAD", "ROLE_CHECKPOINT", "ROLE_BACKGROUND"]

#: What a storage flow is for (``StorageFlows.role``).
ROLE_LOAD, ROLE_CHECKPOINT, ROLE_BACKGROUND = 0, 1, 2


@dataclass(frozen=True)
class StorageFlows:
    """Storage flows: ``flows`` (``F`` rows), ``incidence`` CSR ``(F, 2L + 2S)``, ``role`` int8 ``(F,)``."""

    flows: Flows
    incidence: sp.csr_matrix
    role: np.ndarray

    def __len__(self) -> int:
        return len(self.flows)


def storage_flows(model: StorageModel, jobs: Sequence[Job], tenants: Sequence[str], seed: int = 0) -> StorageFlows:
    """Every storage flow of ``jobs`` (``tenants``: the tenant list their ``tenant`` codes index)."""
    cfg = model.config
    s_count = model.num_servers
    c, srv, write, dem, nbytes, job, tenant, sl, role = ([] for _ in range(9))
    base = 0
    for k, j in enumerate(jobs):  # one block of flows per job
        n = len(j.hosts)
        first = (base + np.arange(n)) % max(s_count, 1)
        base += n
        if j.read_gbps > 0:
            lay = stripe_servers(first, cfg.stripe_count, s_count)
            w = lay.shape[1]
            c.append(np.repeat(j.hosts, w))
            srv.append(lay.ravel())
            write.append(np.zeros(n * w, bool))
            dem.append(np.full(n * w, j.read_gbps / n / w))
            nbytes.append(np.zeros(n * w))
            role.append(np.full(n * w, ROLE_LOAD))
        if j.checkpoint is not None:
            count = j.checkpoint.stripe_count or cfg.stripe_count
            lay = stripe_servers(first, count, s_count)
            w = lay.shape[1]
            c.append(np.repeat(j.hosts, w))
            srv.append(lay.ravel())
            write.append(np.ones(n * w, bool))
            dem.append(np.full(n * w, np.inf))
            per = stripe_bytes(j.checkpoint.size_bytes / n, count, cfg.stripe_size, s_count)
            nbytes.append(np.tile(per, n))
            role.append(np.full(n * w, ROLE_CHECKPOINT))
        added = sum(len(x) for x in c) - sum(len(x) for x in job)
        job.append(np.full(added, k))
        tenant.append(np.full(added, list(tenants).index(j.tenant)))
        sl.append(np.full(added, j.sl))
    if cfg.background_read_gbps > 0 and s_count:
        hosts = compute_hosts(model.fabric)
        rng = np.random.default_rng((seed, 6))
        readers = np.sort(rng.choice(hosts, size=max(1, int(round(cfg.background_fraction * len(hosts)))),
                                     replace=False))
        lay = stripe_servers(np.arange(len(readers)) % s_count, cfg.stripe_count, s_count)
        w = lay.shape[1]
        m = len(readers) * w
        c.append(np.repeat(readers, w))
        srv.append(lay.ravel())
        write.append(np.zeros(m, bool))
        dem.append(np.full(m, cfg.background_read_gbps / m))
        nbytes.append(np.zeros(m))
        role.append(np.full(m, ROLE_BACKGROUND))
        job.append(np.full(m, -1))
        tenant.append(np.full(m, -1))
        sl.append(np.zeros(m))

    def cat(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    flows, inc = model.transfers(cat(c, np.int64), cat(srv, np.int64), cat(write, bool), demand=cat(dem, float),
                                 nbytes=cat(nbytes, float), job=cat(job, np.int32), tenant=cat(tenant, np.int32),
                                 sl=cat(sl, np.int8))
    return StorageFlows(flows, inc, cat(role, np.int8))
