"""Advice on which ports to take out of service, from the link-health grades; never executed.

What is advised, and how much at once, follows UFM's PDR Deterministic plugin (its README's configuration
table: ``MAX_NUM_ISOLATE`` "maximum ports to be isolated. max(MAX_NUM_ISOLATE, 0.5% * fabric_size)", default 10;
return to service once the link "cross[es] the 126 m test cleanly"; links that fluctuate are not added back
"after their second or third de-isolation"):

* candidates: cables whose worse end is graded ``min_grade`` (error by default) or worse;
* the port to disable is the switch end of a switch-to-CA cable (the end the subnet manager reaches; a host's
  own port needs its host), the worse-graded end of an inter-switch cable;
* ranked by grade, then by ``score`` (e.g. the port's effective BER, higher first), then by cable;
* capped at ``max(10, 0.5% of the fabric's cabled ports)`` at once (``cap``); the rest are listed as held back;
* each with the operator's commands: ``ibportstate <lid> <port> disable`` now, ``ibportstate <lid> <port>
  enable`` after a clean test period (``clean_test_s``, 126 minutes by default);
* a port isolated before (``history``: the ports seen administratively disabled earlier, as ``{"guid", "port",
  "t"}`` or ``(guid, port[, t])``, :func:`ibweb.runtime.device_readings.isolated_history`) and failing again is
  flagged ``failing_again`` with that isolation's time (``isolated_at``), ranked first and advised for
  replacement (``action`` ``"replace"``: the cable or transceiver) with no disable or re-enable command, since
  another disable would only repeat what did not help.

Nothing here runs a command. :func:`whatif_inputs` gives the cable what-if
(:func:`fabric_engine.analysis.whatif.whatif_report`, ``failed_cables``) what it needs to show what cutting the
advised links does to the running jobs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..health.grade import ERROR as GRADE_ERROR
from ..health.grade import GRADES
from ..topology import KIND_HOST, KIND_SWITCH, Fabric
from .names import link_name

__all__ = ["Advice", "IsolationPlan", "advise", "default_cap", "whatif_inputs", "CLEAN_TEST_S", "MIN_CAP",
           "CAP_SHARE"]

#: UFM PDR plugin's ``MAX_NUM_ISOLATE`` default and the fabric share it is raised to.
MIN_CAP, CAP_SHARE = 10, 0.005
#: The clean test period before a port is returned to service (the PDR plugin's 126-minute test).
CLEAN_TEST_S = 126 * 60


@dataclass(frozen=True)
class Advice:
    """One port to take out of service: where, why, and the commands (an operator's to run)."""

    rank: int
    cable: int
    node: str
    port: int
    lid: int
    guid: int
    link: str
    grade: str
    score: float | None
    failing_again: bool
    isolated_at: float | None
    disconnects: tuple[str, ...]
    isolate: str | None
    reenable: str | None
    note: str

    @property
    def action(self) -> str:
        """``"replace"`` (the cable or transceiver) for a port failing again after an isolation, else ``"isolate"``."""
        return "replace" if self.failing_again else "isolate"

    def as_dict(self) -> dict:
        return {"rank": self.rank, "cable": self.cable, "link": self.link, "node": self.node, "port": self.port,
                "lid": self.lid, "guid": f"0x{self.guid:016x}", "grade": self.grade, "score": self.score,
                "failing_again": self.failing_again, "isolated_at": self.isolated_at, "action": self.action,
                "disconnects": list(self.disconnects),
                "commands": {"isolate": self.isolate, "reenable": self.reenable}, "note": self.note}


@dataclass(frozen=True)
class IsolationPlan:
    """The advised ports (at most ``cap``) and the candidates held back by the cap."""

    advised: list[Advice]
    held_back: list[Advice]
    cap: int
    candidates: int
    clean_test_s: int = CLEAN_TEST_S

    def as_dict(self) -> dict:
        return {"cap": self.cap, "candidates": self.candidates, "clean_test_s": self.clean_test_s,
                "executed": False, "advised": [a.as_dict() for a in self.advised],
                "held_back": [a.as_dict() for a in self.held_back]}


def default_cap(fabric: Fabric) -> int:
    """``max(10, 0.5%`` of the fabric's cabled ports``)``."""
    return max(MIN_CAP, math.ceil(CAP_SHARE * 2 * fabric.num_links))


def _history(history: Iterable) -> dict[tuple[int, int], float | None]:
    """``{(guid, port): time of the isolation (None: unknown)}``; raises ValueError naming a bad entry."""
    out: dict[tuple[int, int], float | None] = {}
    for i, h in enumerate(history):  # one entry per port isolated before
        try:
            if isinstance(h, dict):
                guid, port, t = h["guid"], h["port"], h.get("t")
            else:
                guid, port, t = (*h, None)[:3]
            key = (int(guid, 16) if isinstance(guid, str) else int(guid), int(port))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"history[{i}]: {h!r}: expected {{'guid', 'port', 't'}} ({exc})") from None
        t = None if t is None else float(t)
        out[key] = t if out.get(key) is None else min(out[key], t if t is not None else out[key])
    return out


def advise(fabric: Fabric, port_grade: np.ndarray, *, score: np.ndarray | None = None, history: Iterable = (),
           cap: int | None = None, min_grade: int = GRADE_ERROR, clean_test_s: int = CLEAN_TEST_S,
           held_back_listed: int = 100) -> IsolationPlan:
    """The ranked, capped advice (see the module docstring); ``port_grade``/``score`` per port slot ``[P]``."""
    cap = default_cap(fabric) if cap is None else int(cap)
    if cap < 0:
        raise ValueError(f"cap {cap}: expected at least 0")
    a = fabric.port_offset[fabric.a_node] + fabric.a_port - 1
    b = fabric.port_offset[fabric.b_node] + fabric.b_port - 1
    ga, gb = port_grade[a], port_grade[b]
    worst = np.maximum(ga, gb)
    cand = np.flatnonzero(worst >= min_grade)
    sc = np.full(int(fabric.nports.sum()), np.nan) if score is None else np.asarray(score, dtype=np.float64)
    ka, kb = fabric.kind[fabric.a_node[cand]], fabric.kind[fabric.b_node[cand]]
    # the end to disable: the switch end of a switch-CA cable, the worse end (a on ties) of an ISL
    use_b = np.where(ka != kb, kb == KIND_SWITCH, gb[cand] > ga[cand])
    slot = np.where(use_b, b[cand], a[cand])
    cable_score = np.fmax(sc[a[cand]], sc[b[cand]])
    before = _history(history)
    sg, sp, spg = fabric.guid[fabric.port_node[slot]], fabric.port_num[slot], fabric.port_guid[slot]
    keys = [(g, p) if (g, p) in before else (pg, p) for g, pg, p in
            zip(sg.tolist(), spg.tolist(), sp.tolist(), strict=True)]  # candidates only; a dict lookup each
    again = np.array([k in before for k in keys], dtype=bool)
    again_t = np.array([np.nan if before.get(k) is None else before[k] for k in keys], dtype=np.float64)
    # failing again first (a replacement, not a disable), then by grade, score and cable
    order = np.lexsort((cand, -np.nan_to_num(cable_score, nan=-np.inf), -worst[cand].astype(np.int64), ~again))
    cand, slot, cable_score, again, again_t = cand[order], slot[order], cable_score[order], again[order], \
        again_t[order]
    # hosts whose only cabled port a candidate cable is
    cabled = fabric.port_out_link >= 0
    host_ports = np.bincount(fabric.port_node[cabled & (fabric.kind[fabric.port_node] == KIND_HOST)],
                             minlength=fabric.num_nodes)
    listed = cand[:cap + held_back_listed]
    out: list[Advice] = []
    n = len(listed)
    for rank, (c, s, v, re_, at) in enumerate(zip(listed.tolist(), slot[:n].tolist(), cable_score[:n].tolist(),
                                                  again[:n].tolist(), again_t[:n].tolist(), strict=True), 1):
        node, port = int(fabric.port_node[s]), int(fabric.port_num[s])
        lid = int(fabric.lid[node]) if fabric.kind[node] == KIND_SWITCH else int(fabric.port_lid[s])
        guid = int(fabric.guid[node])
        ends = (int(fabric.a_node[c]), int(fabric.b_node[c]))
        lost = tuple(str(fabric.node_name[h]) for h in ends if fabric.kind[h] == KIND_HOST and host_ports[h] <= 1)
        at_ = None if math.isnan(at) else float(at)
        isolate = None if re_ else f"ibportstate {lid} {port} disable"
        reenable = None if re_ else f"ibportstate {lid} {port} enable"
        if re_:
            when = "" if at_ is None else " at " + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at_))
            note = (f"isolated before{when} and failing again: replace the cable or transceiver rather than "
                    "disable it again")
        else:
            note = f"re-enable after a clean test period of {clean_test_s // 60} minutes"
        if lost:
            note += f"; cuts {', '.join(lost)} off the fabric"
        out.append(Advice(rank, c, str(fabric.node_name[node]), port, lid, guid, link_name(fabric, c),
                          GRADES[int(max(port_grade[a[c]], port_grade[b[c]])) + 1],
                          None if v is None or math.isnan(v) else float(v), bool(re_), at_, lost, isolate, reenable,
                          note))
    return IsolationPlan(out[:cap], out[cap:], cap, int(cand.size), clean_test_s)


def whatif_inputs(advice: Sequence[Advice] | IsolationPlan) -> dict:
    """What the cable what-if needs for the advised ports: ``{"failed_cables": [...]}`` (cable indices, in rank
    order), for :func:`fabric_engine.analysis.whatif.whatif_report` or the twin's live what-if."""
    items = advice.advised if isinstance(advice, IsolationPlan) else advice
    return {"failed_cables": sorted({a.cable for a in items})}

