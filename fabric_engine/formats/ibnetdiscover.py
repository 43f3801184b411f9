"""Read and write ``ibnetdiscover`` topology output (infiniband-diags).

The format, as ``ibnetdiscover`` prints it (one record per node, blank-line separated)::

    vendid=0x2c9
    devid=0xd2f0
    sysimgguid=0x98039b0300000001
    switchguid=0x98039b0300000001(98039b0300000001)
    Switch  64 "S-98039b0300000001"     # "leaf01" enhanced port 0 lid 1 lmc 0
    [1]     "H-b83fd20300000010"[1](b83fd20300000011)   # "gpu0001 HCA-1" lid 49 4xNDR
    [33]    "S-98039b0300000011"[1]     # "spine01" lid 17 4xNDR

    caguid=0xb83fd20300000010
    Ca      1 "H-b83fd20300000010"      # "gpu0001 HCA-1"
    [1](b83fd20300000011)   "S-98039b0300000001"[1]     # lid 49 lmc 0 "leaf01" lid 1 4xNDR

A port line gives the local port, the remote node id and port (a CA port's GUID in
parentheses), then after ``#`` the remote description, the remote LID and the
link's active width and speed (``4xNDR``); a CA's line starts its comment with its
own ``lid N lmc M``. Unconnected ports are not listed; a node's port count comes
from its header. Node names are taken from the descriptions (see
:mod:`fabric_engine.formats._common` for the ``" HCA-1"`` convention, multi-HCA
hosts and SHARP aggregation nodes); the grammar and error rules are in
:mod:`fabric_engine.formats.netfile`.

>>> from fabric_engine.topology.generate import fat_tree
>>> f = fat_tree(hosts=4, radix=4)
>>> read(write(f)).node_name.tolist() == f.node_name.tolist()
True
"""

from __future__ import annotations

from ..topology import KIND_SWITCH, Fabric
from . import netfile
from ._render import descriptions, node_ports

__all__ = ["read", "write"]

_VENDID = 0x2C9  # Mellanox/NVIDIA
_DEVID_SWITCH = 0xD2F2  # Quantum-2 (NDR)
_DEVID_CA = 0x1021  # ConnectX-7


def read(text: str, source: str = "<ibnetdiscover>", node_name_map: dict[int, str] | None = None) -> Fabric:
    """Parse ``ibnetdiscover`` output into a :class:`Fabric`; raises ``FormatError`` naming the line.

    ``node_name_map`` (node GUID -> name) replaces the NodeDescriptions it names, as ``--node-name-map`` does.
    """
    return netfile.parse(text, source, "ibnetdiscover", node_name_map)


def write(fabric: Fabric) -> str:
    """``ibnetdiscover``-style text for ``fabric`` (node ids ``S-<guid>`` / ``H-<guid>``)."""
    f = fabric
    is_sw = (f.kind == KIND_SWITCH).tolist()
    guid = [int(g) for g in f.guid]
    ids = [f"{'S' if s else 'H'}-{g:016x}" for s, g in zip(is_sw, guid, strict=True)]
    desc = descriptions(f)
    lid = f.lid.tolist()
    port_lid = f.port_lid.tolist()
    port_guid = [int(g) for g in f.port_guid]
    offset = f.port_offset.tolist()
    nports = f.nports.tolist()
    out = ["#", f"# Topology file: written by fabric_engine from fabric {f.name!r}", "#", ""]
    chassis = {name: int(ch["guid"], 16) for ch in f.meta.get("chassis") or () for name in ch["switches"]}
    for n, ports in node_ports(f):
        g = guid[n]
        out += [f"vendid=0x{_VENDID:x}", f"devid=0x{_DEVID_SWITCH if is_sw[n] else _DEVID_CA:x}",
                f"sysimgguid=0x{chassis.get(str(f.node_name[n]), g):016x}"]
        if is_sw[n]:
            out.append(f"switchguid=0x{g:016x}({g:016x})")
            out.append(f'Switch\t{nports[n]} "{ids[n]}"\t\t# "{desc[n]}" enhanced port 0 lid {lid[n]} lmc 0')
            for p, r, rp, rl, rate in ports:
                rguid = "" if is_sw[r] else f"({port_guid[offset[r] + rp - 1]:016x}) "
                out.append(f'[{p}]\t"{ids[r]}"[{rp}]{rguid}\t\t# "{desc[r]}" lid {rl} {rate}')
        else:
            out.append(f"caguid=0x{g:016x}")
            out.append(f'Ca\t{nports[n]} "{ids[n]}"\t\t# "{desc[n]}"')
            for p, r, rp, rl, rate in ports:
                s = offset[n] + p - 1
                out.append(f'[{p}]({port_guid[s]:016x}) \t"{ids[r]}"[{rp}]\t\t'
                           f'# lid {port_lid[s]} lmc 0 "{desc[r]}" lid {rl} {rate}')
        out.append("")
    return "\n".join(out) + "\n"
