"""Per-port line data for the text writers (ibnetdiscover output, ibsim net files)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..topology import KIND_HOST, SPEEDS, Fabric
from ._common import AN_DESCRIPTION, host_description

__all__ = ["descriptions", "node_ports"]


def descriptions(fabric: Fabric) -> list[str]:
    """NodeDescription of every node: as read (``meta["node_desc"]``), else switches their name, SHARP
    Aggregation Nodes the description they all share, hosts ``"<name> HCA-1"``."""
    kept = fabric.meta.get("node_desc") or {}
    an = set(fabric.aggregation_nodes.tolist())
    return [kept.get(str(i)) or (AN_DESCRIPTION if i in an else host_description(str(n)) if k == KIND_HOST else str(n))
            for i, (n, k) in enumerate(zip(fabric.node_name, fabric.kind.tolist(), strict=True))]


def _loopback_rows(fabric: Fabric) -> dict[int, list[tuple[int, int, int, int, str]]]:
    """Port rows of the loopback cables kept in ``meta["loopbacks"]`` (both ports), by node."""
    rows: dict[int, list[tuple[int, int, int, int, str]]] = {}
    for name, pa, pb, *rate in fabric.meta.get("loopbacks") or ():
        n = fabric.node(str(name))
        lid = int(fabric.port_lid[fabric.port_offset[n] + int(pa) - 1])
        r = rate[0] if rate else "4xSDR"
        rows.setdefault(n, []).extend([(int(pa), n, int(pb), lid, r), (int(pb), n, int(pa), lid, r)])
    return rows


def node_ports(fabric: Fabric, remote_lids: bool = True) -> Iterator[tuple[int, list[tuple[int, int, int, int, str]]]]:
    """For every node in index order: ``(node, [(port, remote node, remote port, remote lid, "4xNDR"), ...])``.

    ``remote lid`` is the remote switch's LID or the remote host port's LID; ports
    are ascending; unconnected ports are absent; loopback cables (``meta["loopbacks"]``)
    are listed at both their ports. ``remote_lids=False`` gives 0 LIDs.
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
    loops = _loopback_rows(f)
    for n in range(f.num_nodes):
        mine = rows[bounds[n]:bounds[n + 1]]
        if n in loops:
            mine = sorted(mine + [(p, r, rp, rl if remote_lids else 0, rate) for p, r, rp, rl, rate in loops[n]])
        yield n, mine
