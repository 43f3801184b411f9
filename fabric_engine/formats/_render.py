"""Per-port line data for the text writers (ibnetdiscover output, ibsim net files)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..topology import KIND_HOST, SPEEDS, Fabric
from ._common import host_description

__all__ = ["descriptions", "node_ports"]


def descriptions(fabric: Fabric) -> list[str]:
    """NodeDescription of every node: switches their name, hosts ``"<name> HCA-1"``."""
    return [host_description(str(n)) if k == KIND_HOST else str(n)
            for n, k in zip(fabric.node_name, fabric.kind.tolist(), strict=True)]


def node_ports(fabric: Fabric, remote_lids: bool = True) -> Iterator[tuple[int, list[tuple[int, int, int, int, str]]]]:
    """For every node in index order: ``(node, [(port, remote node, remote port, remote lid, "4xNDR"), ...])``.

    ``remote lid`` is the remote switch's LID or the remote host port's LID; ports
    are ascending; unconnected ports are absent. ``remote_lids=False`` gives 0 LIDs.
    """
    f = fabric
    src, dst, sp, dp = f.dl_src, f.dl_dst, f.dl_src_port.astype(np.int64), f.dl_dst_port.astype(np.int64)
    order = np.lexsort((sp, src))
    rlid = np.where(f.kind[dst] == KIND_HOST, f.port_lid[f.port_offset[dst] + dp - 1], f.lid[dst])
    if not remote_lids:
        rlid = np.zeros_like(rlid)
    width = np.concatenate([f.width, f.width])
    speed = np.concatenate([f.speed, f.speed])
    rate = [f"{int(w)}x{SPEEDS[s]}" for w, s in zip(width[order].tolist(), speed[order].tolist(), strict=True)]
    rows = list(zip(sp[order].tolist(), dst[order].tolist(), dp[order].tolist(), rlid[order].tolist(), rate,
                    strict=True))
    bounds = np.searchsorted(src[order], np.arange(f.num_nodes + 1))
    for n in range(f.num_nodes):
        yield n, rows[bounds[n]:bounds[n + 1]]
