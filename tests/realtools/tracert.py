"""Read ``ibtracert`` (infiniband-diags) output into the switch hops tests compare paths with.

``ibtracert <src-lid> <dst-lid>`` prints one line per hop::

    From ca {0xb83fd20300000010} portnum 1 lid 1-1 "gpu0001"
    [1] -> switch port {0x98039b0300000001}[1] lid 2-2 "leaf01"
    [3] -> switch port {0x98039b0300000005}[1] lid 6-6 "spine01"
    ...
    To ca {0xb83fd20300000050} portnum 1 lid 11-11 "gpu0005"

where ``[out]`` is the port the previous node sends on and ``[in]`` after the GUID
the port the next node receives on.
"""

from __future__ import annotations

import re

__all__ = ["ibtracert_hops", "switch_hops"]

_HOP = re.compile(r'^\[(\d+)\] -> (switch|ca) port \{0x[0-9a-f]+\}\[(\d+)\] lid [\d-]+ "(.*)"')


def ibtracert_hops(text: str) -> list[tuple[str, int, int]]:
    """``(switch name, in port, out port)`` of every switch on the path ``ibtracert`` printed."""
    hops: list[tuple[str, int, int]] = []
    for line in text.splitlines():
        m = _HOP.match(line.strip())
        if not m:
            continue
        if hops and hops[-1][2] < 0:
            hops[-1] = (hops[-1][0], hops[-1][1], int(m.group(1)))
        if m.group(2) == "switch":
            hops.append((m.group(4).split(" ")[0], int(m.group(3)), -1))
    if not hops or hops[-1][2] < 0:
        raise ValueError(f"not a complete ibtracert path:\n{text}")
    return hops


def switch_hops(hops: list[dict]) -> list[tuple[str, int, int]]:
    """The same triples from the ``hops`` of ``Routing.trace`` or the path API (hosts left out)."""
    return [(h["name"], h["in_port"], h["out_port"]) for h in hops if h["in_port"] is not None
            and h["out_port"] is not None]
