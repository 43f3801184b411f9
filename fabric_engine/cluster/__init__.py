"""Clusters of fabrics: compute planes (one subnet per rail), a storage fabric and a management fabric.

* :mod:`.generate`: emulated multi-plane clusters, jobs placed once on hosts, collectives split over the rails;
* :mod:`.hosts`: hosts joined across the fabrics by name and system image GUID;
* :mod:`.planes`: the planes compared from their newest frames (load, imbalance, each job at its slowest rail),
  and the twins' expected against observed per job across the telemetry-fed planes.
"""

from .generate import ClusterFabric, cluster_fabrics
from .hosts import ClusterHosts, join_hosts
from .planes import cluster_whatif, compare_planes, twin_across_planes

__all__ = ["ClusterFabric", "cluster_fabrics", "ClusterHosts", "join_hosts", "compare_planes", "cluster_whatif",
           "twin_across_planes"]
