"""Which links each job's traffic can use, what each job sends, and which jobs share a link.

Links of a job
--------------
Traffic of a job goes between its HCAs of one rail, over the paths the LFTs give.
The union of those paths over every ordered pair is the set of links the job *can*
use whatever collective it runs. The path from ``s`` to ``d`` is the uplink of ``s``
then the LFT walk from ``s``'s leaf switch to ``d``'s LID, so pairs that leave from
the same leaf share everything after the first hop: one representative sender per
leaf is walked to every destination (plus every HCA's own up- and downlink). That is
``leaves x HCAs`` walks per rail instead of ``HCAs^2``, and exact; they go to
:meth:`Routing.port_paths` in chunks of ``chunk`` so memory stays bounded.

The result is a sparse jobs x directed-links incidence (CSR, 1.0 where the job can
cross the link), so the jobs on a link are one column and the links of a job one row.

Observed bandwidth of a job
---------------------------
What a job sends is what its HCAs send: the rate on each HCA's uplink (from the
HCA port counters, or the switch port's receive counters, see
:mod:`fabric_engine.telemetry.observe`). An HCA shared by several jobs has its rate
split among them in proportion to ``weights`` (their expected rates from there,
:mod:`.expected`), or evenly.

>>> from fabric_engine.topology.generate import fat_tree
>>> from fabric_engine.routing import route
>>> f = fat_tree(hosts=8, radix=4)
>>> r = route(f)
>>> inc = job_links(r, [{1: f.hosts[:2]}, {1: f.hosts[:4]}])
>>> inc.shape[0], bool(inc[0].nnz <= inc[1].nnz)
(2, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from ..routing import Routing
from ..topology import Fabric

__all__ = ["job_links", "uplinks", "job_bandwidth", "link_jobs", "attribute_links", "CHUNK_PAIRS"]

#: Sender-destination pairs walked per call of ``Routing.port_paths``.
CHUNK_PAIRS = 1 << 20

RailNodes = Mapping[int, np.ndarray]


def uplinks(fabric: Fabric, nodes: np.ndarray) -> np.ndarray:
    """Directed link leaving the first port of every node of ``nodes``, int64 (-1 where not cabled)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    return fabric.port_out_link[fabric.port_offset[nodes]] if nodes.size else np.zeros(0, np.int64)


def _groups(jobs: Sequence[RailNodes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Members of every (job, rail) group: ``(job, group, node)`` int64, grouped contiguously."""
    job, group, node = [], [], []
    g = 0
    for k, rails in enumerate(jobs):  # one entry per job and rail
        for nodes in rails.values():
            nodes = np.unique(np.asarray(nodes, dtype=np.int64))
            job.append(np.full(len(nodes), k, dtype=np.int64))
            group.append(np.full(len(nodes), g, dtype=np.int64))
            node.append(nodes)
            g += 1
    if not node:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(job), np.concatenate(group), np.concatenate(node)


def _pairs(fabric: Fabric, group: np.ndarray, node: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One representative sender per (group, leaf) paired with every member of its group.

    Returns ``(pair_group, src, dst)`` int64 without ``src == dst``.
    """
    if node.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    leaf = fabric.host_leaf[node].astype(np.int64)
    cabled = leaf >= 0
    key = group * (fabric.num_nodes + 1) + np.where(cabled, leaf, fabric.num_nodes)
    _, first = np.unique(key, return_index=True)
    first = first[cabled[first]]
    rep_group, rep = group[first], node[first]
    # members of each group are contiguous (see _groups): start and size per group
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    sizes = np.diff(np.r_[starts, len(group)])
    gid = group[starts]
    pos = np.searchsorted(gid, rep_group)
    count = sizes[pos]
    total = int(count.sum())
    owner = np.repeat(np.arange(len(rep)), count)
    idx = np.arange(total) - np.repeat(np.cumsum(count) - count, count) + np.repeat(starts[pos], count)
    src, dst = rep[owner], node[idx]
    keep = src != dst
    return rep_group[owner][keep], src[keep], dst[keep]


def job_links(routing: Routing, jobs: Sequence[RailNodes], *, chunk: int = CHUNK_PAIRS) -> sp.csr_matrix:
    """The directed links each job's traffic can use under ``routing`` (see the module docstring).

    Parameters
    ----------
    jobs : sequence of mappings
        For every job, rail -> node indices of its HCAs on that rail (a :class:`~.catalog.KnownJob`'s ``rails``).

    Returns
    -------
    scipy.sparse.csr_matrix, float64, shape ``(J, 2L)``
        1.0 where job ``j`` can cross directed link ``d``.
    """
    f = routing.fabric
    e = 2 * f.num_links
    job, group, node = _groups(jobs)
    n_jobs = len(jobs)
    group_job = np.zeros(int(group.max(initial=-1)) + 1, dtype=np.int64)
    group_job[group] = job
    keys = []
    # the HCAs' own up- and downlinks, for groups of two or more
    sizes = np.bincount(group, minlength=len(group_job))
    multi = sizes[group] >= 2
    up = uplinks(f, node[multi])
    ok = up >= 0
    for links in (up[ok], np.asarray(f.reverse(up[ok]), dtype=np.int64)):
        keys.append(job[multi][ok] * e + links)
    pg, src, dst = _pairs(f, group, node)
    first = uplinks(f, src)
    lids = f.port_lid[f.port_offset[dst]]
    for lo in range(0, len(src), chunk):  # a loop over chunks of pairs, each walked vectorized
        hi = lo + chunk
        inc, _ = routing.port_paths(first[lo:hi], lids[lo:hi])
        row = np.repeat(np.arange(inc.shape[0]), np.diff(inc.indptr))
        keys.append(np.unique(group_job[pg[lo:hi][row]] * e + inc.indices))
    all_keys = np.unique(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
    return sp.csr_matrix((np.ones(len(all_keys)), (all_keys // e, all_keys % e)), shape=(n_jobs, e))


def job_bandwidth(fabric: Fabric, jobs: Sequence[RailNodes], rate_gbps: np.ndarray,
                  weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """What each job's HCAs send and receive, Gb/s, from per-directed-link rates.

    Parameters
    ----------
    rate_gbps : ndarray, float, ``(2L,)``
        Observed rate of every directed link.
    weights : ndarray, float, ``(J, N)``-shaped sparse or None
        Share of each node's traffic that belongs to each job (node shared by several jobs);
        default: an even split among the jobs on the node.

    Returns
    -------
    sent, received : ndarray, float64, ``(J,)``
    """
    f = fabric
    job, _, node = _groups(jobs)
    n_jobs = len(jobs)
    if node.size == 0:
        return np.zeros(n_jobs), np.zeros(n_jobs)
    up = uplinks(f, node)
    ok = up >= 0
    rate = np.asarray(rate_gbps, dtype=np.float64)
    tx = np.where(ok, rate[np.where(ok, up, 0)], 0.0)
    rx = np.where(ok, rate[np.where(ok, np.asarray(f.reverse(np.where(ok, up, 0))), 0)], 0.0)
    if weights is None:
        share = 1.0 / np.bincount(node, minlength=f.num_nodes)[node]
    else:
        w = sp.csr_matrix(weights)
        mine = np.asarray(w[job, node]).ravel()
        total = np.asarray(w.sum(axis=0)).ravel()[node]
        even = 1.0 / np.bincount(node, minlength=f.num_nodes)[node]
        share = np.where(total > 0, mine / np.where(total > 0, total, 1.0), even)
    sent = np.bincount(job, weights=tx * share, minlength=n_jobs)
    received = np.bincount(job, weights=rx * share, minlength=n_jobs)
    return sent, received


def link_jobs(incidence: sp.csr_matrix, links: Sequence[int] | np.ndarray) -> list[np.ndarray]:
    """For each directed link of ``links``, the indices of the jobs that can use it (int64, ascending)."""
    cols = sp.csc_matrix(incidence[:, np.asarray(links, dtype=np.int64)])
    return [cols.indices[cols.indptr[i]:cols.indptr[i + 1]].astype(np.int64) for i in range(cols.shape[1])]


def attribute_links(rate_gbps: np.ndarray, links: Sequence[int] | np.ndarray, incidence: sp.csr_matrix,
                    job_rates: sp.csr_matrix | None = None, job_gbps: np.ndarray | None = None,
                    most: int = 3, sent_gbps: np.ndarray | None = None) -> list[list[tuple[int, float]]]:
    """For each of ``links`` (a few hot ones), up to ``most`` jobs on it with their estimated share, Gb/s.

    A link's observed rate is split among the jobs that can use it in proportion to
    ``job_rates`` (jobs x links: each job's expected rate there) when given, else to
    ``job_gbps`` (each job's observed bandwidth), else evenly. With ``sent_gbps`` (``(J,)``,
    what each job's HCAs were seen to send) no job is given more of a link than it sent: what
    a job cannot have carried goes to the other jobs on the link up to what they sent, and
    what no known job can have carried is left unattributed (the shares then add up to less
    than the link's rate: traffic of hosts outside the known jobs). Returns, per link,
    ``[(job index, gbps), ...]`` largest first.

    >>> inc = sp.csr_matrix(np.ones((2, 1)))
    >>> attribute_links(np.array([120.0]), [0], inc, sent_gbps=np.array([0.0, 50.0]))
    [[(1, 50.0), (0, 0.0)]]
    """
    links = np.asarray(links, dtype=np.int64)
    cols = sp.csc_matrix(incidence[:, links])
    exp = sp.csc_matrix(job_rates[:, links]) if job_rates is not None else None
    sent = np.asarray(sent_gbps, dtype=np.float64) if sent_gbps is not None else None
    out = []
    for i, d in enumerate(links.tolist()):  # a loop over the few links asked about
        jobs = cols.indices[cols.indptr[i]:cols.indptr[i + 1]]
        if jobs.size == 0:
            out.append([])
            continue
        w = np.ones(len(jobs))
        if exp is not None:
            col = exp[:, i].toarray().ravel()[jobs]
            w = col if col.sum() > 0 else w
        elif job_gbps is not None:
            col = np.asarray(job_gbps, dtype=np.float64)[jobs]
            w = col if col.sum() > 0 else w
        total = float(rate_gbps[d])
        gbps = total * w / w.sum() if sent is None else _capped_shares(total, w, np.maximum(sent[jobs], 0.0))
        order = np.argsort(-gbps, kind="stable")[:most]
        out.append([(int(jobs[k]), float(gbps[k])) for k in order])
    return out


def _capped_shares(total: float, weight: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``total`` split in proportion to ``weight``, none above its ``cap``, the excess to the others (water-filling).

    Each round fills every open entry or caps at least one, so it ends within ``len(weight)`` rounds
    (a handful of jobs per link).
    """
    share = np.zeros(len(weight))
    open_ = cap > 0
    left = total
    while left > 1e-12 and open_.any():
        w = np.where(open_, weight, 0.0)
        w = w if w.sum() > 0 else open_.astype(np.float64)
        offer = left * w / w.sum()
        room = cap - share
        full = open_ & (offer >= room)
        if not full.any():
            return share + offer
        share[full] = cap[full]
        left -= float(room[full].sum())
        open_ &= ~full
    return share
