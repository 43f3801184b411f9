"""SMs that stopped answering the collector (issue 38): a standby the collector's ``sminfo <lid>`` no longer reaches
is kept in the device readings with when it last answered (:mod:`ibweb.runtime.device_readings`, :func:`split_sms`); the
report checks mastership on the SMs that answered and names each silent one as a finding of the SM check (a
standby that does not answer cannot take over when the master fails). Pure (no Django)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from fabric_engine.topology import Fabric
from fabric_engine.validation.findings import INFO, WARNING, Finding, severity_rank
from fabric_engine.validation.report import _CHECK_OF, CHECKS, ValidationReport
from fabric_engine.validation.sm import CHECK

__all__ = ["split_sms", "silent_findings", "with_findings"]


def split_sms(devices) -> tuple[list, list[tuple]]:
    """The SMs of ``devices`` (device readings as :mod:`ibweb.runtime.device_readings` keeps them) that answered the
    collector's last round (``sm_round``; or were pushed since), and those that did not, each with when it last
    answered (``sm_seen``; None: unknown). Without a round every SM counts as answering."""
    seen: dict = getattr(devices, "sm_seen", None) or {}
    last_round = getattr(devices, "sm_round", None)
    answering, silent = [], []
    for sm in getattr(devices, "sms", None) or ():  # a few SMs
        t = seen.get(sm.guid)
        if last_round is not None and (t is None or t < last_round):
            silent.append((sm, t))
        else:
            answering.append(sm)
    return answering, silent


def _name(fabric: Fabric, guid: int, lid: int) -> str:
    nodes, found = fabric.guid_index.nodes([guid])
    return f"{fabric.node_name[int(nodes[0])]} (LID {lid})" if found[0] else f"SM 0x{guid:016x} (LID {lid})"


def _when(t: float | None) -> str:
    return "an unknown time" if t is None else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))


def silent_findings(fabric: Fabric, silent: Sequence[tuple], last_round: float | None) -> list[Finding]:
    """One warning per SM of ``silent`` (``(SmInfo, last answered or None)``) that did not answer the collector's
    round of ``last_round``."""
    out = []
    for sm, seen in silent:  # a few SMs
        name = _name(fabric, sm.guid, sm.lid)
        out.append(Finding(CHECK, WARNING, name,
                           f"{name} ({sm.state_name} when last seen) has not answered sminfo since {_when(seen)}: "
                           "an SM that does not answer cannot take over from the master",
                           {"sm": {**sm.as_dict(), "answering": False}, "last_seen": seen, "round": last_round}))
    return out


def with_findings(report: ValidationReport, extra: list[Finding]) -> ValidationReport:
    """``report`` with ``extra`` findings of the SM check among its findings (sorted as the report sorts them: worst
    first, in check order, by subject) and that check's status counted again."""
    if not extra:
        return report

    def key(f: Finding) -> tuple:
        return severity_rank(f.severity), CHECKS.index(_CHECK_OF.get(f.check, f.check)), f.subject

    findings = sorted([*report.findings, *extra], key=key)
    checks = dict(report.checks)
    counted = sum(1 for f in findings if f.check == CHECK and f.severity != INFO)
    checks[CHECK] = {"status": "fail" if counted else "pass", "findings": counted}
    return ValidationReport(report.fabric, findings, checks, report.kpis)
