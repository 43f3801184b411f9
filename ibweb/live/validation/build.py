"""The validation report of one fabric as the web keeps it: :func:`fabric_engine.validation.validate` and the capped
isolation advice (:func:`fabric_engine.validation.advise`) on what the fabric's engine and collectors gave, each
finding placed on the map. Pure (no Django): the bench times it as the web runs it.

Each finding gets ``focus``: what the map opens on (``{"link": directed link}`` for a finding about a cable or a
port, ``{"node": index}`` for one about a node, None when it names neither), and ``nodes``: the node indices it
names (what a view's relabelling looks up first), and ``hosts``: the host names its texts hold (what a view
relabels even after the host left the fabric). The advice's ports carry ``node_index`` and ``focus`` alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from fabric_engine.topology import KIND_HOST, Fabric
from fabric_engine.validation import ValidationSettings, advise, validate
from ibweb.access.relabel import candidates

from .sm_silent import silent_findings, split_sms, with_findings

__all__ = ["build_report", "finding_focus", "hosts_named", "host_names", "SEPARATORS"]

#: Where a finding's subject may end a node's name: ``node/port``, ``node fan 3``, ``a/1 - b/2``.
SEPARATORS = re.compile(r"[ /]")


def _node_of(fabric: Fabric, key: str) -> int | None:
    """The node a subject's prefix names (a name, or a ``0x`` node or port GUID); None if none."""
    try:
        return fabric.node(int(key, 16) if key[:2].lower() == "0x" else key)
    except (KeyError, ValueError, OverflowError):
        return None


def finding_focus(fabric: Fabric, subject: str, link: int | None) -> tuple[dict | None, list[int]]:
    """Where the map opens for a finding (see the module docstring) and the nodes its subject names.

    A subject is ``node``, ``node/port``, ``node <part>`` (a fan, a sensor) or ``a/port - b/port``; the longest
    prefix ending at a separator that names a node is taken (node names hold spaces).
    """
    nodes: list[int] = []
    for part in subject.split(" - ") if " - " in subject else [subject]:  # one or two ends
        cuts = [m.start() for m in SEPARATORS.finditer(part)] + [len(part)]
        for end in reversed(cuts):  # a few separators per subject
            i = _node_of(fabric, part[:end])
            if i is not None:
                nodes.append(i)
                rest = part[end + 1:]
                if link is None and part[end:end + 1] == "/" and rest.isdigit() and 1 <= int(rest) <= fabric.nports[i]:
                    d = int(fabric.out_link(i, int(rest)))
                    if d >= 0:
                        link = d
                break
    if link is not None:
        return {"link": int(link)}, nodes
    return ({"node": nodes[0]} if nodes else None), nodes


def host_names(fabric: Fabric) -> tuple[frozenset[str], int]:
    """The host names of ``fabric`` and the most words one spans (``gpu001 mlx5_0``: 2; names are capped at 64
    characters)."""
    names = fabric.node_name[fabric.kind == KIND_HOST].tolist()
    return frozenset(names), 1 + max((n.count(" ") for n in names if " " in n), default=0)


def hosts_named(finding: dict, names: frozenset[str], words: int) -> list[str]:
    """The host names of ``names`` (:func:`host_names`) a finding's texts (subject, message, evidence) hold: kept
    with the finding, so a view relabels them even once the host has left the fabric (the digest's older report)."""
    texts: list[str] = [finding["subject"], finding["message"]]
    stack = [finding.get("evidence")]
    while stack:  # the evidence's few values
        v = stack.pop()
        if isinstance(v, str):
            texts.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return sorted({c for text in texts for c in candidates(text, words) if c in names})


def _vitals(devices) -> list:
    """The device records the checks judge: switch vitals (fans, PSUs, temperatures, firmware)."""
    return list(getattr(devices, "vitals", None) or ())


def isolated_on(fabric: Fabric, isolated: Iterable[dict]) -> list[dict]:
    """The ports isolated now (:func:`ibweb.live.validation.isolations.open_isolations`) placed on ``fabric``: each
    with ``guid`` as text, ``node_index`` (None: its node is not in the fabric now) and ``focus`` (its cable, else
    its node, else None)."""
    out = []
    for r in isolated:  # the ports isolated now (a few)
        node = _node_of(fabric, f"0x{int(r['guid']):x}")
        focus = None
        if node is not None:
            d = int(fabric.out_link(node, int(r["port"]))) if 1 <= int(r["port"]) <= fabric.nports[node] else -1
            focus = {"link": d} if d >= 0 else {"node": node}
        out.append({**r, "guid": f"0x{int(r['guid']):016x}", "node_index": node, "focus": focus})
    return out


def build_report(fabric: Fabric, *, plan=None, devices=None, port_grade: np.ndarray | None = None,
                 score: np.ndarray | None = None, history: Iterable = (), t: float,
                 settings: ValidationSettings | None = None, inputs: dict | None = None,
                 isolated: Iterable[dict] = ()) -> dict:
    """The report as the web stores it: ``{"t", "report": {fabric, kpis, counts, checks, findings}, "isolation":
    {...} or None (no link-health grades), "isolated": [...], "inputs": {...}}``.

    ``devices``: a :class:`fabric_engine.devices.DeviceReadings` (its ``vitals``, ``sms`` and ``pkeys``, and, as the
    store keeps them, which SMs did not answer the collector's last round: findings of the SM check; None: none
    read); ``port_grade``/``score``: link-health grade and effective BER per port slot (None: not graded);
    ``inputs``: what the caller says about its inputs (shown with the report); ``isolated``: the ports isolated now
    (listed as ``"isolated"``, :func:`isolated_on`).
    """
    sms, silent = split_sms(devices)
    pkeys: Sequence = getattr(devices, "pkeys", None) or ()
    report = validate(fabric, plan=plan, sminfo=sms, pkeys=pkeys, devices=_vitals(devices), port_grade=port_grade,
                      settings=settings)
    report = with_findings(report, silent_findings(fabric, silent, getattr(devices, "sm_round", None)))
    out = report.as_dict()
    names, words = host_names(fabric)
    for f, d in zip(report.findings, out["findings"], strict=True):  # one per finding
        d["focus"], d["nodes"] = finding_focus(fabric, f.subject, f.link)
        d["hosts"] = hosts_named(d, names, words)
    iso = None
    if port_grade is not None:
        plan_ = advise(fabric, port_grade, score=score, history=history)
        iso = plan_.as_dict()
        for part in ("advised", "held_back"):
            for a in iso[part]:  # the listed ports only (at most the cap and 100 more)
                node = fabric.node(a["node"])
                d = int(fabric.out_link(node, a["port"]))
                a["node_index"], a["focus"] = int(node), {"link": d if d >= 0 else a["cable"]}
    return {"t": float(t), "report": out, "isolation": iso, "isolated": isolated_on(fabric, isolated),
            "inputs": {"plan": plan is not None, "vitals": len(_vitals(devices)), "sms": len(sms),
                       "pkey_tables": len(pkeys), "sms_silent": len(silent), "graded": port_grade is not None,
                       **(inputs or {})}}
