"""Storage during an emulation: which storage flows run in a tick, checkpoint progress, and the frame's report.

A job's checkpoint starts at the first tick boundary after it completes
``checkpoint.every`` iterations since the last one. The job is synchronous: while
it writes it neither computes nor communicates, and its data loading pauses. The
checkpoint's duration ``T`` is that of its slowest write at the tick's rates (the
writes form one lock-step group of the paced solve); progress per tick is
``spent / T``. When it ends, the job resumes with a compute phase. Its GPU time cost
is ``duration x hosts`` GPU-seconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..workload import Job
from .model import StorageModel
from .traffic import ROLE_BACKGROUND, ROLE_CHECKPOINT, ROLE_LOAD, StorageFlows, storage_flows

__all__ = ["StorageSession"]

_SAT = 1 - 1e-6  # a column at or above this fraction of its capacity is saturated
_CK_FIELDS = ("left", "next", "count", "last_s", "gpu_s", "elapsed", "bytes")


class StorageSession:
    """The storage side of an :class:`~fabric_engine.emulator.Emulator` (see the module docstring)."""

    def __init__(self, model: StorageModel) -> None:
        self.model = model
        self.sf: StorageFlows | None = None
        self.jobs: list[Job] = []
        self.tenants: list[str] = []

    # ----------------------------------------------------------------- load
    def load(self, jobs: Sequence[Job], tenants: Sequence[str], seed: int, keep: dict[str, tuple]) -> StorageFlows:
        """Expand the storage flows of ``jobs`` and restore checkpoint state by job name."""
        self.jobs, self.tenants = list(jobs), list(tenants)
        self.sf = storage_flows(self.model, jobs, tenants, seed)
        n = len(jobs)
        self.every = np.array([j.checkpoint.every if j.checkpoint else 0 for j in jobs], dtype=np.int64)
        self.size = np.array([j.checkpoint.size_bytes if j.checkpoint else 0.0 for j in jobs])
        self.hosts = np.array([len(j.hosts) for j in jobs], dtype=np.float64)
        self.ck = {"left": np.zeros(n), "next": self.every.astype(np.float64), "count": np.zeros(n),
                   "last_s": np.full(n, np.nan), "gpu_s": np.zeros(n), "elapsed": np.zeros(n), "bytes": np.zeros(n)}
        for k, j in enumerate(jobs):
            if j.name in keep:
                for name, value in zip(_CK_FIELDS, keep[j.name], strict=True):
                    self.ck[name][k] = value
        return self.sf

    def saved(self) -> dict[str, tuple]:
        return {j.name: tuple(self.ck[f][k] for f in _CK_FIELDS) for k, j in enumerate(self.jobs)}

    # ----------------------------------------------------------------- tick
    def restart(self, fresh: np.ndarray, iterations: np.ndarray) -> None:
        """Jobs whose run window just opened: no checkpoint in progress, the next one ``every`` iterations on."""
        self.ck["left"][fresh] = 0.0
        self.ck["next"][fresh] = iterations[fresh] + self.every[fresh]

    def begin(self, running: np.ndarray, iterations: np.ndarray) -> np.ndarray:
        """Start the checkpoints that are due; returns the mask of jobs writing during this tick."""
        ck = self.ck
        due = running & (self.every > 0) & (ck["left"] <= 0) & (iterations >= ck["next"])
        ck["left"][due], ck["elapsed"][due] = 1.0, 0.0
        return running & (ck["left"] > 0)

    def rows(self, running: np.ndarray, writing: np.ndarray) -> np.ndarray:
        """Storage flow rows that run this tick."""
        sf = self.sf
        job = sf.flows.job.astype(np.int64)
        j = np.maximum(job, 0)
        on = ((sf.role == ROLE_LOAD) & running[j] & ~writing[j]) | (sf.role == ROLE_BACKGROUND) | (
            (sf.role == ROLE_CHECKPOINT) & writing[j])
        return np.flatnonzero(on & ((job >= 0) | (sf.role == ROLE_BACKGROUND)))

    def advance(self, writing: np.ndarray, duration: np.ndarray, tick: float, iterations: np.ndarray) -> np.ndarray:
        """Move the checkpoints on by one tick at ``duration`` seconds per whole checkpoint; returns seconds spent.

        A checkpoint that ends schedules the next one ``every`` iterations after ``iterations``.
        """
        ck = self.ck
        need = ck["left"] * duration
        spent = np.where(writing, np.where(np.isfinite(need), np.minimum(tick, need), tick), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(writing & np.isfinite(duration) & (duration > 0), spent / duration, 0.0)
        ck["bytes"] += np.minimum(step, ck["left"]) * self.size
        ck["left"] = np.where(writing, np.maximum(ck["left"] - step, 0.0), ck["left"])
        ck["elapsed"] += spent
        done = writing & (ck["left"] <= 1e-9)
        ck["left"][done] = 0.0
        ck["last_s"][done] = ck["elapsed"][done]
        ck["count"][done] += 1
        ck["gpu_s"][done] += ck["elapsed"][done] * self.hosts[done]
        ck["next"][done] = iterations[done] + self.every[done]
        return spent

    # --------------------------------------------------------------- report
    def frame(self, rows: np.ndarray, carried: np.ndarray, bottleneck: np.ndarray, column_rate: np.ndarray,
              link_rate: np.ndarray, capacity: np.ndarray, duration: np.ndarray) -> dict:
        """The frame's ``storage`` section (see docs/feed-protocol.md).

        ``rows``: storage rows solved this tick; ``carried``/``bottleneck``: their tick-averaged
        rate and pass-1 bottleneck column; ``column_rate``: load of the ``2S`` backend columns;
        ``link_rate``/``capacity``: per directed link; ``duration``: seconds per checkpoint now.
        """
        m, sf = self.model, self.sf
        s_count = m.num_servers
        e = 2 * m.fabric.num_links
        fl = sf.flows.take(rows)
        write = sf.role[rows] == ROLE_CHECKPOINT
        server = np.searchsorted(m.servers, np.where(write, fl.dst, fl.src))
        read_gbps = np.bincount(server[~write], weights=carried[~write], minlength=s_count)
        write_gbps = np.bincount(server[write], weights=carried[write], minlength=s_count)
        with np.errstate(divide="ignore", invalid="ignore"):
            port_util_out = np.where(m.port_out >= 0, link_rate[np.maximum(m.port_out, 0)]
                                     / capacity[np.maximum(m.port_out, 0)], 0.0)
            port_util_in = np.where(m.port_in >= 0, link_rate[np.maximum(m.port_in, 0)]
                                    / capacity[np.maximum(m.port_in, 0)], 0.0)
        nic_out = np.zeros(s_count, bool)
        nic_in = np.zeros(s_count, bool)
        np.logical_or.at(nic_out, m.port_server, port_util_out >= _SAT)
        np.logical_or.at(nic_in, m.port_server, port_util_in >= _SAT)
        backend_full = column_rate >= m.backend_gbps * _SAT
        net_bound = bottleneck >= 0
        net_bound &= bottleneck < e
        net_r = np.bincount(server[~write & net_bound[:len(rows)]], minlength=s_count) > 0
        net_w = np.bincount(server[write & net_bound[:len(rows)]], minlength=s_count) > 0

        def verdict(backend: np.ndarray, nic: np.ndarray, net: np.ndarray, k: int) -> str | None:
            return "backend" if backend[k] else ("network" if nic[k] or net[k] else None)

        servers = []
        for k, node in enumerate(m.servers):  # one entry per server
            servers.append({
                "node": int(node), "name": str(m.fabric.node_name[node]), "ports": int(m.fabric.nports[node]),
                "read_gbps": round(float(read_gbps[k]), 3), "write_gbps": round(float(write_gbps[k]), 3),
                "backend_read_gbps": float(m.backend_gbps[k]), "backend_write_gbps": float(m.backend_gbps[s_count + k]),
                "network_gbps": float(m.network_gbps[k]),
                "read_bottleneck": verdict(backend_full[:s_count], nic_out, net_r, k) if read_gbps[k] > 0 else None,
                "write_bottleneck": verdict(backend_full[s_count:], nic_in, net_w, k) if write_gbps[k] > 0 else None})
        n = len(self.jobs)
        owner = fl.job.astype(np.int64)
        mine = owner >= 0
        j_read = np.bincount(owner[mine & ~write], weights=carried[mine & ~write], minlength=n)
        j_write = np.bincount(owner[mine & write], weights=carried[mine & write], minlength=n)
        ck = self.ck
        jobs = []
        for k, job in enumerate(self.jobs):  # one entry per job with storage traffic
            if job.read_gbps <= 0 and job.checkpoint is None:
                continue
            entry = {"id": job.name, "tenant": job.tenant, "read_gbps": round(float(j_read[k]), 3),
                     "write_gbps": round(float(j_write[k]), 3), "checkpoint": None}
            if job.checkpoint is not None:
                writing = ck["left"][k] > 0
                est = float(duration[k]) if writing and np.isfinite(duration[k]) else None
                entry["checkpoint"] = {
                    "size_bytes": float(self.size[k]), "every": int(self.every[k]),
                    "state": "writing" if writing else "idle",
                    "progress": round(1.0 - float(ck["left"][k]), 4) if writing else None,
                    "elapsed_s": round(float(ck["elapsed"][k]), 3) if writing else None,
                    "eta_s": round(float(ck["left"][k]) * est, 3) if est is not None else None,
                    "next_iteration": int(ck["next"][k]), "count": int(ck["count"][k]),
                    "last_s": None if np.isnan(ck["last_s"][k]) else round(float(ck["last_s"][k]), 3),
                    "last_gpu_s": None if np.isnan(ck["last_s"][k]) else round(float(ck["last_s"][k]
                                                                                    * self.hosts[k]), 3),
                    "gpu_s_total": round(float(ck["gpu_s"][k]), 3), "bytes_written": float(ck["bytes"][k])}
            jobs.append(entry)
        t_idx = fl.tenant.astype(np.int64)
        names = self.tenants + ["background"]
        t_idx = np.where(t_idx >= 0, t_idx, len(self.tenants))
        t_read = np.bincount(t_idx[~write], weights=carried[~write], minlength=len(names))
        t_write = np.bincount(t_idx[write], weights=carried[write], minlength=len(names))
        tenants = [{"tenant": t, "read_gbps": round(float(t_read[i]), 3), "write_gbps": round(float(t_write[i]), 3)}
                   for i, t in enumerate(names) if i < len(self.tenants) or t_read[i] > 0]
        cfg = m.config
        return {"servers": servers, "jobs": jobs, "tenants": tenants,
                "totals": {"read_gbps": round(float(read_gbps.sum()), 3),
                           "write_gbps": round(float(write_gbps.sum()), 3),
                           "backend_read_gbps": float(m.backend_gbps[:s_count].sum()),
                           "backend_write_gbps": float(m.backend_gbps[s_count:].sum())},
                "layout": {"stripe_count": cfg.stripe_count, "stripe_size": cfg.stripe_size}}
