"""ibweb's fabric engine: InfiniBand topology, routing, workloads and congestion.

Python with numpy and scipy, three small C kernels (``_maxmin.c``, ``routing/_lidgreedy.c``,
``telemetry/_perfquery.c``) and ctypes (:mod:`.allocator`); it never imports Django or :mod:`ibweb`.
"""

from .errors import FabricEngineError, FormatError, RoutingError, SolverError, TopologyError
from .topology import Fabric

__all__ = ["Fabric", "FabricEngineError", "FormatError", "RoutingError", "SolverError", "TopologyError"]
__version__ = "0.1.0"
