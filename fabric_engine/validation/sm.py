"""Subnet manager mastership from ``sminfo`` (:mod:`.sminfo`).

A subnet has exactly one master SM (IBA 14.4.1): none leaves it unmanaged (no new LIDs, routes or P_Keys after
a change), two split it (each programs its own LFTs). Among the others the SM of the highest priority (then the
lowest GUID) should be master (IBA 14.4.1.1, the SM's polling and handover); a standby outranking the master means
a handover that did not happen (OpenSM's ``master_sm_priority``/sticky settings can keep it so on purpose: a
warning, not an error).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..topology import Fabric
from .findings import ERROR, INFO, WARNING, Finding
from .sminfo import STATES, SmInfo

__all__ = ["check_sm", "CHECK"]

CHECK = "sm_mastership"


def _name(sm: SmInfo, fabric: Fabric | None) -> str:
    if fabric is not None:
        nodes, found = fabric.guid_index.nodes([sm.guid])
        if found[0]:
            return f"{fabric.node_name[int(nodes[0])]} (LID {sm.lid})"
    return f"SM 0x{sm.guid:016x} (LID {sm.lid})"


def check_sm(sms: Sequence[SmInfo], fabric: Fabric | None = None) -> list[Finding]:
    """Findings on the SMs ``sminfo`` reported (an SM reported twice, by the same GUID, counts once)."""
    if not sms:
        return []
    by_guid: dict[int, SmInfo] = {}
    for sm in sms:  # one per SM line
        by_guid.setdefault(sm.guid, sm)
    uniq = list(by_guid.values())
    listed = [sm.as_dict() for sm in uniq]
    masters = [sm for sm in uniq if sm.master]
    out = []
    if not masters:
        out.append(Finding(CHECK, ERROR, "subnet", f"no master SM among the {len(uniq)} SMs sminfo reported "
                           f"({', '.join(f'{_name(s, fabric)}: {s.state_name}' for s in uniq)})", {"sms": listed}))
    elif len(masters) > 1:
        out.append(Finding(CHECK, ERROR, "subnet", f"{len(masters)} master SMs: "
                           f"{', '.join(_name(s, fabric) for s in masters)}", {"sms": listed}))
    if len(masters) == 1:
        m = masters[0]
        for sm in uniq:  # the other SMs
            if sm is m:
                continue
            if sm.priority > m.priority:
                out.append(Finding(CHECK, WARNING, _name(sm, fabric),
                                   f"{_name(sm, fabric)} ({sm.state_name}, priority {sm.priority}) outranks the "
                                   f"master {_name(m, fabric)} (priority {m.priority}): no handover happened",
                                   {"sm": sm.as_dict(), "master": m.as_dict()}))
            elif sm.state_name not in (STATES[2],):
                out.append(Finding(CHECK, INFO, _name(sm, fabric), f"{_name(sm, fabric)} is {sm.state_name}",
                                   {"sm": sm.as_dict(), "master": m.as_dict()}))
    return out
