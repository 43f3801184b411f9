"""Stacking the flows of many jobs, with their routed paths, for the solver."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import FabricEngineError
from ..topology import Fabric
from .job import Job
from .traffic import Flows

__all__ = ["JobFlows", "expand_jobs", "PathModel"]

#: ``paths(src_hosts, dst_hosts, return_broken=True) -> (incidence, broken)``, e.g. ``Routing.paths``;
#: an adaptive model returns fractional entries (the flow's share of each link).
PathModel = Callable[..., tuple[sp.csr_matrix, np.ndarray]]


@dataclass(frozen=True)
class JobFlows:
    """The flows of a list of jobs, stacked job after job.

    ``flows`` (:class:`Flows`, ``F`` rows); ``incidence`` CSR ``(F, 2L)``;
    ``offsets`` int64 ``(J + 1,)``, job ``k`` owns rows ``offsets[k]:offsets[k + 1]``;
    ``broken`` bool ``(F,)``, flows without a route (their rows are empty).
    """

    flows: Flows
    incidence: sp.csr_matrix
    offsets: np.ndarray
    broken: np.ndarray

    def rows(self, jobs: np.ndarray) -> np.ndarray:
        """Row indices of the flows of ``jobs`` (indices or a mask over jobs), in job order."""
        k = np.flatnonzero(jobs) if np.asarray(jobs).dtype == bool else np.asarray(jobs, dtype=np.int64)
        start, stop = self.offsets[k], self.offsets[k + 1]
        length = stop - start
        if length.sum() == 0:
            return np.zeros(0, dtype=np.int64)
        owner = np.repeat(np.arange(len(k)), length)
        return np.arange(int(length.sum())) - (np.cumsum(length) - length)[owner] + start[owner]


def expand_jobs(jobs: Sequence[Job], fabric: Fabric, paths: PathModel, tenants: Sequence[str] | None = None
                ) -> JobFlows:
    """Expand every job and route the flows that have no incidence of their own, in one call to ``paths``."""
    tenants = list(tenants) if tenants is not None else sorted({j.tenant for j in jobs})
    parts, own = [], []
    for k, job in enumerate(jobs):
        try:
            flows, inc = job.expand(fabric, k, tenants.index(job.tenant))
        except ValueError as exc:
            raise FabricEngineError(f"job {job.name}: {exc}") from None
        parts.append(flows)
        own.append(inc)
    flows = Flows.concat(parts)
    sizes = np.array([len(p) for p in parts], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    e = 2 * fabric.num_links
    routed = np.ones(len(flows), dtype=bool)
    for k, inc in enumerate(own):
        if inc is not None:
            if inc.shape != (sizes[k], e):
                raise FabricEngineError(f"job {jobs[k].name}: its incidence has shape {inc.shape}, "
                                        f"expected ({sizes[k]}, {e})")
            routed[offsets[k]:offsets[k + 1]] = False
    r_rows = np.flatnonzero(routed)
    inc_r, broken_r = paths(flows.src[r_rows], flows.dst[r_rows], return_broken=True)
    broken = np.zeros(len(flows), dtype=bool)
    broken[r_rows] = broken_r
    if r_rows.size == len(flows):
        incidence = sp.csr_matrix(inc_r, dtype=np.float64)
    else:
        blocks = [sp.csr_matrix(inc_r, dtype=np.float64)] + [sp.csr_matrix(i, dtype=np.float64)
                                                             for i in own if i is not None]
        stacked = sp.vstack(blocks, format="csr")
        order = np.concatenate([r_rows, np.flatnonzero(~routed)])
        inverse = np.empty(len(flows), dtype=np.int64)
        inverse[order] = np.arange(len(flows))
        incidence = stacked[inverse]
        broken[~routed] = np.diff(incidence.indptr)[~routed] == 0
    return JobFlows(flows, incidence, offsets, broken)
