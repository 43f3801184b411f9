"""Which jobs were on a link when it went down: the jobs of a fabric's job catalog per port, and the job sets that
down episodes keep (their ``tag``, :mod:`.downs`).

A job is on a port when its routes cross the port's cable (a directed link of its catalog entry's ``links``, in
either direction: the twin's attribution, :func:`fabric_engine.twin.attribution.job_links`, or the emulator's
paths) or when the port is one of its hosts' or the switch port facing one (a job of one host has no routes).
:meth:`DownJobs.set_catalog` takes the catalog of the fabric in use (``{"id", "tenant", "hosts": [node],
"links": [directed link]}`` per job, :mod:`ibweb.runtime.catalog`); :meth:`DownJobs.tag` records the jobs on some
ports now as new job sets, one per port, and gives their numbers (-1: no job); :meth:`DownJobs.jobs` reads sets
back (for the few episodes a report shows). Sets no episode keeps are dropped by :meth:`DownJobs.compact`.
The loops run over jobs or the few sets read back, never over ports or links.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fabric_engine.topology import Fabric

from .port_slots import PortSlots

__all__ = ["DownJobs"]


def _gather(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR rows ``rows`` concatenated, and the length of each."""
    counts = indptr[rows + 1] - indptr[rows]
    total = int(counts.sum())
    starts = np.repeat(indptr[rows] - np.cumsum(counts) + counts, counts)
    return indices[starts + np.arange(total)], counts


class DownJobs:
    """The jobs on each port of the fabric in use, and the job sets kept for down episodes (see the module)."""

    def __init__(self) -> None:
        self._slots = PortSlots()  # ports of the catalog in use with a job
        self._ptr = np.zeros(1, np.int64)  # CSR: port row -> jobs (indices into the job table)
        self._idx = np.zeros(0, np.int64)
        self._ids: list[str] = []  # job table: id and tenant of every job a set names
        self._tenants: list[str | None] = []
        self._known: dict[tuple[str, str | None], int] = {}
        self._set_ptr = np.zeros(1, np.int64)  # CSR: set -> jobs
        self._set_idx = np.zeros(0, np.int64)

    def __len__(self) -> int:
        """Job sets kept."""
        return int(self._set_ptr.size - 1)

    def _job(self, job_id: str, tenant: str | None) -> int:
        key = (job_id, tenant)
        if key not in self._known:
            self._known[key] = len(self._ids)
            self._ids.append(job_id)
            self._tenants.append(tenant)
        return self._known[key]

    def set_catalog(self, fabric: Fabric, catalog: Sequence[dict] | None) -> None:
        """The jobs on each port of ``fabric`` from its job catalog ``catalog`` (entries naming links or nodes
        outside ``fabric`` are left out of those)."""
        links, hosts, link_job, host_job = [], [], [], []
        for entry in catalog or ():  # one entry per job
            k = self._job(str(entry.get("id")), entry.get("tenant"))
            d = np.asarray(entry.get("links") or [], np.int64).ravel()
            h = np.asarray(entry.get("hosts") or [], np.int64).ravel()
            links.append(d)
            hosts.append(h)
            link_job.append(np.full(d.size, k, np.int64))
            host_job.append(np.full(h.size, k, np.int64))
        cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, np.int64))  # noqa: E731
        d, dj, h, hj = cat(links), cat(link_job), cat(hosts), cat(host_job)
        ok = (d >= 0) & (d < 2 * fabric.num_links)
        d, dj = d[ok], dj[ok]
        ok = (h >= 0) & (h < fabric.num_nodes)
        h, hj = h[ok], hj[ok]
        # the hosts' ports, and the ports facing them
        n = fabric.nports[h].astype(np.int64)
        hn = np.repeat(h, n)
        hp = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n) + 1
        hjob = np.repeat(hj, n)
        out = fabric.port_out_link[fabric.slot(hn, hp)] if hn.size else np.zeros(0, np.int64)
        cabled = out >= 0
        d = np.concatenate([d, out[cabled]])
        dj = np.concatenate([dj, hjob[cabled]])
        node = np.concatenate([fabric.dl_src[d], fabric.dl_dst[d], hn]).astype(np.int64)
        port = np.concatenate([fabric.dl_src_port[d], fabric.dl_dst_port[d], hp]).astype(np.int64)
        job = np.concatenate([dj, dj, hjob])
        jobs = max(len(self._ids), 1)
        key = np.unique((node * 256 + port) * jobs + job)
        pk, job = key // jobs, key % jobs
        first = np.r_[True, pk[1:] != pk[:-1]] if pk.size else np.zeros(0, bool)
        uport = pk[first]
        self._slots = PortSlots()
        rows = self._slots.lookup(np.asarray(fabric.guid, np.uint64)[uport // 256], uport % 256)
        per_port = np.diff(np.r_[np.flatnonzero(first), pk.size])
        order = np.argsort(np.repeat(rows, per_port), kind="stable")
        self._idx = job[order]
        self._ptr = np.r_[0, np.cumsum(np.bincount(rows, per_port, minlength=rows.size))].astype(np.int64)

    def tag(self, guid: np.ndarray, port: np.ndarray) -> np.ndarray:
        """A new job set per port (GUID, port number) with the jobs on it now; its number, -1 where no job is."""
        rows = self._slots.find(np.asarray(guid, np.uint64), np.asarray(port, np.int64))
        out = np.full(rows.size, -1, np.int64)
        has = np.flatnonzero(rows >= 0)
        if not has.size:
            return out
        jobs, counts = _gather(self._ptr, self._idx, rows[has])
        some = counts > 0
        base = len(self)
        out[has[some]] = base + np.arange(int(some.sum()))
        self._set_idx = np.concatenate([self._set_idx, jobs])
        self._set_ptr = np.concatenate([self._set_ptr, self._set_ptr[-1] + np.cumsum(counts[some])])
        return out

    def jobs(self, tags: Sequence[int] | np.ndarray) -> list[list[dict]]:
        """The jobs of each set ``tags`` (a few): ``[{"id", "tenant"}, ...]`` sorted by id (-1 or unknown: none)."""
        out = []
        for t in np.asarray(tags, np.int64).tolist():  # the few episodes a report shows
            if not 0 <= t < len(self):
                out.append([])
                continue
            ks = self._set_idx[self._set_ptr[t]:self._set_ptr[t + 1]].tolist()
            out.append(sorted(({"id": self._ids[k], "tenant": self._tenants[k]} for k in ks),
                              key=lambda j: j["id"]))
        return out

    def compact(self, in_use: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Keep only the sets ``in_use`` (tags of the episodes kept); returns ``(old, new)`` numbers of the kept
        sets, for :meth:`fabric_engine.health.downs.DownTracker.retag`."""
        keep = np.unique(np.asarray(in_use, np.int64))
        keep = keep[(keep >= 0) & (keep < len(self))]
        jobs, counts = _gather(self._set_ptr, self._set_idx, keep)
        self._set_idx = jobs
        self._set_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
        return keep, np.arange(keep.size, dtype=np.int64)
