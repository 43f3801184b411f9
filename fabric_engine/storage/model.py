"""Storage servers, their backends as virtual links, and the flows of reads and writes.

Every server (a host of role ``storage``) has its HCA ports on the fabric and a
backend (e.g. an NVMe array) that reads at ``read_gbps`` and writes at
``write_gbps``. The backend is modelled as two *virtual links* per server appended
after the ``2L`` directed links of the fabric: column ``2L + s`` is server ``s``'s
read backend, ``2L + S + s`` its write backend. Every read from server ``s`` crosses
its read column, every write its write column, so the max-min fair solver bounds
the server's total exactly like a link; the extra columns are stripped before a
frame is published.

A client talks to a server over all the server's ports at once (LNet multi-rail):
its flow is split evenly over one path per server port
(:func:`fabric_engine.flows.split_incidence`). Paths follow the LFTs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import FabricEngineError
from ..flows import split_incidence
from ..routing import Routing
from ..topology import ROLES
from ..workload import KIND_STORAGE_READ, KIND_STORAGE_WRITE, Flows
from .striping import LUSTRE_STRIPE_COUNT, LUSTRE_STRIPE_SIZE

__all__ = ["StorageConfig", "StorageModel"]


@dataclass(frozen=True)
class StorageConfig:
    """Backend bandwidths (per server, Gb/s), file layout, and background reads.

    The default backend, 40 GB/s read and 20 GB/s write per server, is an assumption
    of the order of a dual-controller all-NVMe Lustre appliance, not a vendor figure;
    set it for the system at hand. ``stripe_count`` and ``stripe_size`` default to
    Lustre's (1 and 1 MiB; -1 stripes over every server). ``background_read_gbps``
    is read, in total, by a ``background_fraction`` of the GPU hosts (other users).
    """

    read_gbps: float = 320.0
    write_gbps: float = 160.0
    stripe_count: int = LUSTRE_STRIPE_COUNT
    stripe_size: float = float(LUSTRE_STRIPE_SIZE)
    background_read_gbps: float = 0.0
    background_fraction: float = 0.1

    def __post_init__(self) -> None:
        if self.read_gbps <= 0 or self.write_gbps <= 0:
            raise FabricEngineError("storage: read_gbps and write_gbps must be positive")
        if self.stripe_size <= 0 or (self.stripe_count != -1 and self.stripe_count < 1):
            raise FabricEngineError("storage: stripe_size must be positive, stripe_count -1 or at least 1")
        if self.background_read_gbps < 0 or not 0 <= self.background_fraction <= 1:
            raise FabricEngineError("storage: background_read_gbps >= 0 and background_fraction in 0..1")


class StorageModel:
    """The storage servers of a routed fabric and the flows to and from them.

    Attributes
    ----------
    servers : ndarray of int64 ``(S,)``
        Node indices of the servers (role ``storage``), ascending.
    columns : int
        Virtual link columns appended to the incidence (``2 S``).
    backend_gbps : ndarray of float64 ``(2 S,)``
        Capacity of those columns: read backends, then write backends.

    Examples
    --------
    >>> from fabric_engine.topology.generate import fat_tree
    >>> from fabric_engine.routing import route
    >>> f = fat_tree(hosts=6, radix=4, storage_servers=1, storage_ports=2)
    >>> st = StorageModel(route(f), StorageConfig(read_gbps=80.0))
    >>> flows, inc = st.transfers(f.hosts[:1], np.array([0]), np.array([False]), demand=np.array([np.inf]))
    >>> inc.shape[1] == 2 * f.num_links + 2, float(inc[0, 2 * f.num_links])
    (True, 1.0)
    """

    def __init__(self, routing: Routing, config: StorageConfig | None = None) -> None:
        self.routing = routing
        self.fabric = f = routing.fabric
        self.config = config or StorageConfig()
        h = f.hosts
        self.servers = h[f.role[h] == ROLES.index("storage")].astype(np.int64)
        s = len(self.servers)
        self.columns = 2 * s
        self.backend_gbps = np.concatenate([np.full(s, self.config.read_gbps), np.full(s, self.config.write_gbps)])
        nports = f.nports[self.servers].astype(np.int64)
        self._slots = np.concatenate([f.port_offset[n] + np.arange(k) for n, k in zip(self.servers, nports,
                                                                                         strict=True)]
                                     ).astype(np.int64) if s else np.zeros(0, np.int64)
        self._slot_server = np.repeat(np.arange(s), nports)
        out = f.port_out_link[self._slots] if s else np.zeros(0, np.int64)
        #: Directed links out of (into) every server port, and the server of each.
        self.port_out = out.astype(np.int64)
        self.port_in = np.where(out >= 0, f.reverse(np.maximum(out, 0)), -1).astype(np.int64)
        self.port_server = self._slot_server
        self.network_gbps = np.bincount(self._slot_server, weights=np.where(out >= 0, f.capacity_gbps[out], 0.0),
                                        minlength=s)

    @property
    def num_servers(self) -> int:
        return len(self.servers)

    @property
    def width(self) -> int:
        """Columns of the extended incidence: ``2L + 2S``."""
        return 2 * self.fabric.num_links + self.columns

    def transfer_paths(self, clients: np.ndarray, server: np.ndarray,
                       write: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """The paths of :meth:`transfers`' flows, one per server port: incidence float64 ``(P, 2L + 2S)`` (the
        route and the backend, entries of 1), each path's flow ``(P,)`` and whether it has no route ``(P,)``.

        A flow to or from a server of several ports is split evenly over them (a path each).
        """
        f = self.fabric
        c = np.asarray(clients, dtype=np.int64)
        s = np.asarray(server, dtype=np.int64)
        w = np.asarray(write, dtype=bool)
        n = len(c)
        if n and (s.min() < 0 or s.max() >= self.num_servers):
            raise FabricEngineError(f"storage: server index outside 0..{self.num_servers - 1}")
        first_slot = np.searchsorted(self._slot_server, np.arange(self.num_servers))
        nports = np.bincount(self._slot_server, minlength=self.num_servers)
        k = nports[s]
        owner = np.repeat(np.arange(n), k)
        slot = self._slots[first_slot[s][owner] + (np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k))]
        client_slot = f.port_offset[c][owner]
        ws = w[owner]
        first = np.where(ws, f.port_out_link[client_slot], f.port_out_link[slot])
        lid = np.where(ws, f.port_lid[slot], f.port_lid[client_slot])
        sub, broken_sub = self.routing.port_paths(first, lid)
        col = np.where(ws, self.num_servers + s[owner], s[owner])
        backend = sp.csr_matrix((np.ones(len(owner)), (np.arange(len(owner)), col)), shape=(len(owner), self.columns))
        paths = sp.hstack([sp.csr_matrix(sub, dtype=np.float64), backend], format="csr")
        return paths, owner, np.asarray(broken_sub, dtype=bool)

    def transfers(self, clients: np.ndarray, server: np.ndarray, write: np.ndarray, *,
                  demand: np.ndarray, nbytes: np.ndarray | None = None, job: np.ndarray | int = -1,
                  tenant: np.ndarray | int = -1, sl: np.ndarray | int = 0) -> tuple[Flows, sp.csr_matrix]:
        """Flows between ``clients`` (host nodes) and servers (indices into :attr:`servers`).

        ``write`` True: client -> server through the write backend; False: server -> client
        through the read backend. Returns the flows (kind ``storage_read``/``storage_write``;
        flows without a route get demand 0) and their incidence, float64 ``(F, 2L + 2S)``.
        """
        c = np.asarray(clients, dtype=np.int64)
        s = np.asarray(server, dtype=np.int64)
        w = np.asarray(write, dtype=bool)
        n = len(c)
        paths, owner, broken_sub = self.transfer_paths(c, s, w)
        net = split_incidence(paths[:, :2 * self.fabric.num_links], owner, n)
        broken = np.bincount(owner, weights=broken_sub, minlength=n) > 0
        col = np.where(w, self.num_servers + s, s)
        backend = sp.csr_matrix((np.ones(n), (np.arange(n), col)), shape=(n, self.columns))
        inc = sp.hstack([net, backend], format="csr")
        dem = np.where(broken, 0.0, np.broadcast_to(np.asarray(demand, dtype=np.float64), (n,)))
        flows = Flows(np.where(w, c, self.servers[s]), np.where(w, self.servers[s], c), dem, sl=sl, job=job,
                      tenant=tenant, nbytes=nbytes, kind=np.where(w, KIND_STORAGE_WRITE, KIND_STORAGE_READ))
        return flows, inc
