"""Read and write ibsim net files (ibsim-utils), so any fabric can run in ibsim under real OpenSM.

A net file is ibnetdiscover-compatible text whose node ids are free names
(``ibsim`` README and ``net-examples``)::

    switchguid=0x98039b0300000001
    Switch  64 "leaf01"     # "leaf01" enhanced port 0 lid 1 lmc 0
    [1]     "gpu0001"[1]    # "gpu0001 HCA-1" lid 49 4xHDR

    caguid=0xb83fd20300000010
    Hca     1 "gpu0001"     # "gpu0001 HCA-1"
    [1]     "leaf01"[1]     # lid 49 lmc 0 "leaf01" lid 1 4xHDR

How ibsim 0.10 reads it (``sim_net.c``): ``switchguid=``/``caguid=`` set the GUID
the next node of that type gets (a CA reserves ``ports + 1`` GUIDs; port GUID =
node GUID + port), so :func:`write` puts one before every node to keep the fabric's
GUIDs. Each link must be listed from both ends. Link width and speed come from the
trailing ``lid <remote-lid> <w>x<SPEED>`` of a port line (this enables the widths
and all speeds up to the given one on that port; the active value is the best
common to both ends); older files use the PortInfo enable bitmasks ``w=``, ``s=``
(SDR/DDR/QDR) and ``e=`` (FDR/EDR/HDR/NDR bits) instead, which :func:`read` also
understands. ``lid N`` on a switch header or a CA port line presets LIDs, which
OpenSM keeps when they are free.

Limits of ibsim 0.10 (Debian 13), seen with ``ibnetdiscover`` against it: it knows
SDR, DDR, QDR, FDR, EDR and HDR; ``NDR`` and ``XDR`` are refused with "cannot parse
speed" and the port falls back to SDR, and ``FDR10`` shows as QDR. :func:`write`
still writes the fabric's true speed (so :func:`read` round-trips it); use HDR or
slower when the result is to be compared with what ibsim reports. Node ids must not
contain ``"``, ``#`` or ``@`` and must fit ibsim's 64-byte ``NODEIDLEN``.
"""

from __future__ import annotations

from ..errors import FormatError
from ..topology import KIND_SWITCH, Fabric
from . import netfile
from ._render import descriptions, node_ports

__all__ = ["read", "write", "IBSIM_SPEEDS"]

#: Lane speeds ibsim 0.10 simulates (others fall back to SDR, FDR10 shows as QDR).
IBSIM_SPEEDS = ("SDR", "DDR", "QDR", "FDR", "EDR", "HDR")
_MAX_ID = 63


def read(text: str, source: str = "<ibsim>") -> Fabric:
    """Parse an ibsim net file into a :class:`Fabric` (node names = node ids)."""
    return netfile.parse(text, source, "ibsim")


def write(fabric: Fabric, preset_lids: bool = True) -> str:
    """The ibsim net file of ``fabric``; raises ``FormatError`` for names ibsim cannot take.

    With ``preset_lids=False`` every LID is written as 0, so the subnet manager
    assigns its own (OpenSM keeps preset LIDs that are free).
    """
    f = fabric
    names = [str(n) for n in f.node_name]
    for nm in names:
        if any(ch in nm for ch in '"#@') or len(nm) > _MAX_ID or not nm:
            raise FormatError("ibsim", None, f"node name {nm!r} cannot be an ibsim node id "
                                             f"(1..{_MAX_ID} characters, no '\"', '#' or '@')")
    is_sw = (f.kind == KIND_SWITCH).tolist()
    desc = descriptions(f)
    lid = f.lid.tolist() if preset_lids else [0] * f.num_nodes
    port_lid = f.port_lid.tolist() if preset_lids else [0] * len(f.port_lid)
    offset = f.port_offset.tolist()
    nports = f.nports.tolist()
    out = [f"# ibsim net file of fabric {f.name!r}: {f.num_switches} switches, {f.num_hosts} hosts, "
           f"{f.num_links} links (written by fabric_engine)", ""]
    chassis = {name: int(ch["guid"], 16) for ch in f.meta.get("chassis") or () for name in ch["switches"]}
    for n, ports in node_ports(f, remote_lids=preset_lids):
        g = int(f.guid[n])
        if is_sw[n]:
            if names[n] in chassis:  # a director's ASICs share the chassis' system image GUID
                out.append(f"sysimgguid=0x{chassis[names[n]]:016x}")
            out.append(f"switchguid=0x{g:016x}")
            out.append(f'Switch\t{nports[n]} "{names[n]}"\t\t# "{desc[n]}" enhanced port 0 lid {lid[n]} lmc 0')
            out += [f'[{p}]\t"{names[r]}"[{rp}]\t\t# "{desc[r]}" lid {rl} {rate}' for p, r, rp, rl, rate in ports]
        else:
            out.append(f"caguid=0x{g:016x}")
            out.append(f'Hca\t{nports[n]} "{names[n]}"\t\t# "{desc[n]}"')
            out += [f'[{p}]\t"{names[r]}"[{rp}]\t\t# lid {port_lid[offset[n] + p - 1]} lmc 0 "{desc[r]}" lid {rl} '
                    f"{rate}" for p, r, rp, rl, rate in ports]
        out.append("")
    return "\n".join(out) + "\n"
