"""ibweb's fabric engine: InfiniBand topology, routing, workloads and congestion.

Pure Python with numpy and scipy; it never imports Django or :mod:`ibweb`.
"""

from .errors import FabricEngineError, FormatError, RoutingError, SolverError, TopologyError
from .topology import Fabric

__all__ = ["Fabric", "FabricEngineError", "FormatError", "RoutingError", "SolverError", "TopologyError"]
__version__ = "0.1.0"
