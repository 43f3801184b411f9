"""SHARP aggregation resources per switch generation, and the policy of one fabric.

Published figures (NVIDIA SHARP Rev 3.13.0 documentation, "General Information",
Capabilities and Limitations):

* **Quantum** (HDR, SHARPv2): up to 126 aggregation trees in the subnet, 63
  low-latency and 63 streaming-aggregation trees; streaming aggregation is limited
  to one active tree per switch (SHARP v2.6.1, "Reducing the Number of Operational
  VLs": by default a Quantum switch runs a single streaming-aggregation flow).
* **Quantum-2** (NDR, SHARPv3): up to 1,023 trees, 511 low-latency and 511
  streaming; several streaming operations run in parallel on one switch, the limit
  is one active tree per port.
* NCCL through the NCCL-RDMA-SHARP plugin: switches allow at most 2 streaming
  aggregation flows (HPC-X Rev 2.25/2.26, "NCCL-RDMA-SHARP Plugins").

A SHARP all-reduce here is one streaming-aggregation tree per job (the NCCL
CollNet path for large buffers); low-latency trees are listed, never allocated.

Streaming aggregation reaches about 95% of the network bandwidth for
``MPI_Allreduce`` on HDR (Graham et al., "SHARP Streaming-Aggregation Hardware
Design and Evaluation", ISC High Performance 2020, LNCS 12151, doi
10.1007/978-3-030-50743-5_3): the default :attr:`SharpConfig.efficiency`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FabricEngineError
from ..topology import Fabric
from ..topology.speeds import SPEEDS

__all__ = ["SharpGeneration", "GENERATIONS", "SharpConfig", "NCCL_SAT_FLOWS_PER_SWITCH", "DEFAULT_EFFICIENCY",
           "generation_for"]

#: Streaming-aggregation flows one switch takes from the NCCL SHARP plugin (HPC-X "NCCL-RDMA-SHARP Plugins").
NCCL_SAT_FLOWS_PER_SWITCH = 2
#: Fraction of the bottleneck link rate a streaming all-reduce reaches (Graham et al., ISC 2020: about 95%).
DEFAULT_EFFICIENCY = 0.95


@dataclass(frozen=True)
class SharpGeneration:
    """Aggregation resources of one switch generation.

    ``llt_trees`` / ``sat_trees``: low-latency and streaming-aggregation trees per
    subnet; ``sat_per_switch``: active streaming trees per switch (``None``: no
    switch-wide limit); ``sat_per_port``: active streaming trees per switch port
    (``None``: no port limit).
    """

    name: str
    label: str
    llt_trees: int
    sat_trees: int
    sat_per_switch: int | None
    sat_per_port: int | None
    source: str


#: Known generations, by name.
GENERATIONS: dict[str, SharpGeneration] = {
    "quantum": SharpGeneration("quantum", "Quantum (HDR, SHARPv2)", 63, 63, 1, None,
                               "NVIDIA SHARP Rev 3.13.0, General Information"),
    "quantum2": SharpGeneration("quantum2", "Quantum-2 (NDR, SHARPv3)", 511, 511, None, 1,
                                "NVIDIA SHARP Rev 3.13.0, General Information"),
}


def generation_for(fabric: Fabric) -> str | None:
    """The generation of a fabric's switches guessed from its fastest link: HDR -> Quantum, NDR and up -> Quantum-2.

    Slower fabrics (EDR and below: Switch-IB 2 has low-latency SHARP only) give ``None``.
    """
    if fabric.num_links == 0:
        return None
    fastest = int(fabric.speed.max())
    if fastest == SPEEDS.index("HDR"):
        return "quantum"
    if fastest >= SPEEDS.index("NDR"):
        return "quantum2"
    return None


@dataclass(frozen=True)
class SharpConfig:
    """SHARP settings of a fabric: resources (defaults from the generation) and policy.

    Parameters
    ----------
    generation : str or None
        A key of :data:`GENERATIONS`; ``None`` means no streaming aggregation (every request falls back).
    sat_trees, sat_per_switch, sat_per_port : int, optional
        Overrides of the generation's limits.
    flows_per_switch : int
        Streaming flows one switch takes from the NCCL plugin (:data:`NCCL_SAT_FLOWS_PER_SWITCH`).
    efficiency : float
        Aggregated all-reduce rate as a fraction of the tree's bottleneck link rate.
    allowed_tenants : frozenset of str, optional
        Tenants allowed to use SHARP; ``None``: every tenant.
    """

    generation: str | None = "quantum2"
    sat_trees: int | None = None
    sat_per_switch: int | None = None
    sat_per_port: int | None = None
    flows_per_switch: int = NCCL_SAT_FLOWS_PER_SWITCH
    efficiency: float = DEFAULT_EFFICIENCY
    allowed_tenants: frozenset | None = None

    def __post_init__(self) -> None:
        if self.generation is not None and self.generation not in GENERATIONS:
            raise FabricEngineError(f"sharp.generation: unknown {self.generation!r}; known: {', '.join(GENERATIONS)}")
        if not 0 < self.efficiency <= 1:
            raise FabricEngineError(f"sharp.efficiency {self.efficiency}: must be in (0, 1]")
        for name in ("sat_trees", "sat_per_switch", "sat_per_port"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise FabricEngineError(f"sharp.{name} {v}: must not be negative")
        if self.flows_per_switch < 0:
            raise FabricEngineError("sharp.flows_per_switch must not be negative")
        if self.allowed_tenants is not None:
            object.__setattr__(self, "allowed_tenants", frozenset(self.allowed_tenants))

    @property
    def gen(self) -> SharpGeneration | None:
        return GENERATIONS.get(self.generation) if self.generation else None

    @property
    def tree_limit(self) -> int:
        """Streaming trees in the subnet."""
        g = self.gen
        return 0 if g is None else (self.sat_trees if self.sat_trees is not None else g.sat_trees)

    @property
    def switch_limit(self) -> int:
        """Active streaming trees on one switch: the generation's limit and the NCCL plugin's, whichever is lower."""
        g = self.gen
        if g is None:
            return 0
        own = self.sat_per_switch if self.sat_per_switch is not None else g.sat_per_switch
        return min(self.flows_per_switch, own) if own is not None else self.flows_per_switch

    @property
    def port_limit(self) -> int | None:
        """Active streaming trees on one switch port (``None``: unlimited)."""
        g = self.gen
        if g is None:
            return 0
        return self.sat_per_port if self.sat_per_port is not None else g.sat_per_port

    def allows(self, tenant: str) -> bool:
        """Whether ``tenant`` may use SHARP."""
        return self.allowed_tenants is None or tenant in self.allowed_tenants

    def as_dict(self) -> dict:
        g = self.gen
        return {"generation": self.generation, "label": g.label if g else None, "efficiency": self.efficiency,
                "trees": self.tree_limit, "llt_trees": g.llt_trees if g else 0, "per_switch": self.switch_limit,
                "per_port": self.port_limit,
                "allowed_tenants": None if self.allowed_tenants is None else sorted(self.allowed_tenants)}
