"""The fabric validation report: every check's findings, the KPIs, the problems-only view, a diff of two
reports (the daily digest) and its JSON and CSV renderings.

:func:`validate` runs the checks whose inputs it is given (a check without its input is listed as skipped,
never as passed): links below their expected width or speed (:mod:`.links`), duplicate GUIDs and LIDs
(:mod:`.identity`), SM mastership (:mod:`.sm`), P_Key mismatches (:mod:`.partitions`), firmware compliance and
device vitals (:mod:`.devices`), suspected switch ASICs (:mod:`.asic`). KPIs:

* ``connected_endpoints``: hosts with a cabled port, of the hosts expected (the fabric's, plus the plan's nodes
  the fabric lacks when a plan is given);
* ``topology_correctness``: the share of planned cables found as planned (neither missing, miswired, nor at
  another speed or width), against the cabling plan or else a reference fabric; ``None`` without either;
* ``healthy_links``: the share of cables neither below their expected rate nor graded warning or worse.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..health.grade import WARNING as GRADE_WARNING
from ..topology import Fabric
from .asic import CHECK as ASIC
from .asic import check_asic
from .devices import CHECK_FIRMWARE, check_firmware, check_vitals
from .findings import INFO, SEVERITIES, Finding, severity_rank
from .identity import duplicate_ids
from .links import CHECK as SLOW
from .links import expected_rates, slow_links
from .partitions import CHECK as PKEY
from .partitions import check_pkeys
from .ports import link_grades
from .sm import CHECK as SM
from .sm import check_sm

__all__ = ["ValidationSettings", "ValidationReport", "validate", "diff_reports", "CHECKS", "CSV_COLUMNS"]

#: Checks in report order.
CHECKS = (SLOW, "duplicate_ids", SM, PKEY, CHECK_FIRMWARE, "device_vitals", ASIC)
CSV_COLUMNS = ("check", "severity", "subject", "link", "message", "evidence")
_CHECK_OF = {"duplicate_guid": "duplicate_ids", "duplicate_lid": "duplicate_ids", "fan": "device_vitals",
             "psu": "device_vitals", "temperature": "device_vitals", "device_errors": "device_vitals"}


@dataclass(frozen=True)
class ValidationSettings:
    """What the checks are configured with: the ASIC share and least ports, the grade counted unhealthy,
    firmware minimums per device type, fallback temperature thresholds."""

    asic_share: float = 0.5
    asic_min_ports: int = 4
    unhealthy_grade: int = GRADE_WARNING
    firmware_minimum: Mapping[str, str] = field(default_factory=dict)
    temp_warning_c: float | None = None
    temp_critical_c: float | None = None


@dataclass(frozen=True)
class ValidationReport:
    """Findings (worst first), per-check status and the KPIs of one fabric."""

    fabric: str
    findings: list[Finding]
    checks: dict[str, dict]
    kpis: dict

    def problems_only(self) -> ValidationReport:
        """The report without ``info`` findings and without the checks that passed or were skipped."""
        return ValidationReport(self.fabric, [f for f in self.findings if f.severity != INFO],
                                {k: v for k, v in self.checks.items() if v["status"] == "fail"}, self.kpis)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in SEVERITIES}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def as_dict(self) -> dict:
        return {"fabric": self.fabric, "kpis": self.kpis, "counts": self.counts(), "checks": self.checks,
                "findings": [f.as_dict() for f in self.findings]}

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.as_dict(), indent=indent)

    def to_csv(self) -> str:
        """One row per finding (:data:`CSV_COLUMNS`; ``evidence`` as JSON)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for f in self.findings:
            w.writerow([f.check, f.severity, f.subject, "" if f.link is None else f.link, f.message,
                        json.dumps(f.evidence, sort_keys=True)])
        return buf.getvalue()


def _share(n: int, d: int) -> float | None:
    return None if d == 0 else round(n / d, 6)


def validate(fabric: Fabric, *, plan=None, reference: Fabric | None = None, sminfo: Sequence = (),
             pkeys: Sequence = (), devices: Sequence = (), port_grade: np.ndarray | None = None,
             settings: ValidationSettings | None = None) -> ValidationReport:
    """Run the checks on what is given (see the module docstring) and compute the KPIs.

    ``plan``: a :class:`fabric_engine.twin.plan.Plan`; ``reference``: a fabric taken as the plan when there is
    none; ``sminfo``: :class:`.sminfo.SmInfo` records; ``pkeys``: :class:`.pkeys.PKeyTable` s; ``devices``:
    device vitals; ``port_grade``: link-health grade per port slot (:func:`.ports.port_grades`).
    """
    st = settings or ValidationSettings()
    if plan is None and reference is not None:
        from ..twin.plan import plan_from_fabric

        plan = plan_from_fabric(reference, "<reference>")
    findings: list[Finding] = []
    ran: dict[str, str | None] = {}
    exp = expected_rates(fabric, plan)
    findings += slow_links(fabric, expected=exp)
    ran[SLOW] = None
    findings += duplicate_ids(fabric, devices)
    ran["duplicate_ids"] = None
    findings += check_sm(sminfo, fabric)
    ran[SM] = None if sminfo else "no sminfo given"
    findings += check_pkeys(fabric, pkeys)
    ran[PKEY] = None if pkeys else "no P_Key tables given"
    findings += check_firmware(devices, st.firmware_minimum)
    findings += check_vitals(devices, warning_c=st.temp_warning_c, critical_c=st.temp_critical_c)
    ran[CHECK_FIRMWARE] = ran["device_vitals"] = None if devices else "no device vitals given"
    if port_grade is not None:
        findings += check_asic(fabric, port_grade, share=st.asic_share, min_ports=st.asic_min_ports,
                               grade=st.unhealthy_grade)
    ran[ASIC] = None if port_grade is not None else "no link-health grades given"
    findings.sort(key=lambda f: (severity_rank(f.severity), CHECKS.index(_CHECK_OF.get(f.check, f.check)),
                                 f.subject))
    per_check: dict[str, dict] = {}
    for name in CHECKS:
        mine = [f for f in findings if _CHECK_OF.get(f.check, f.check) == name and f.severity != INFO]
        if ran[name] is not None:
            per_check[name] = {"status": "skipped", "findings": 0, "why": ran[name]}
        else:
            per_check[name] = {"status": "fail" if mine else "pass", "findings": len(mine)}
    return ValidationReport(fabric.name, findings, per_check, _kpis(fabric, exp, port_grade, st))


def _kpis(fabric: Fabric, exp: dict, port_grade: np.ndarray | None, st: ValidationSettings) -> dict:
    cabled = fabric.port_out_link >= 0
    hosts = fabric.hosts
    host_cabled = np.bincount(fabric.port_node[cabled], minlength=fabric.num_nodes)[hosts] > 0
    rep = exp.get("plan_report")
    absent = len(rep.unknown_nodes) if rep is not None else 0
    connected = int(host_cabled.sum())
    expected = len(hosts) + absent
    kpis = {"connected_endpoints": {"connected": connected, "expected": expected,
                                    "share": _share(connected, expected)}}
    if rep is not None:
        c = rep.counts
        wrong = c["missing"] + c["miswired"] + c["wrong_speed"] + c["wrong_width"]
        kpis["topology_correctness"] = {"share": _share(rep.planned_cables - wrong, rep.planned_cables),
                                        "planned_cables": rep.planned_cables, "counts": dict(c)}
    else:
        kpis["topology_correctness"] = None
    slow = (fabric.width < exp["width"]) | (fabric.speed < exp["speed"])
    unhealthy = slow.copy()
    graded = 0
    if port_grade is not None:
        lg = link_grades(fabric, port_grade)
        unhealthy |= lg >= st.unhealthy_grade
        graded = int((lg >= 0).sum())
    L = fabric.num_links
    healthy = int(L - unhealthy.sum())
    kpis["healthy_links"] = {"healthy": healthy, "links": L, "share": _share(healthy, L),
                             "below_expected": int(slow.sum()), "graded": graded}
    return kpis


def diff_reports(old: Mapping, new: Mapping) -> dict:
    """What changed from report ``old`` to ``new`` (their :meth:`ValidationReport.as_dict` forms, as stored):
    findings ``new``, ``resolved`` and ``changed`` (severity), by ``(check, subject)``, and each KPI's share
    before and after."""
    before = {(f["check"], f["subject"]): f for f in old.get("findings", ())}
    after = {(f["check"], f["subject"]): f for f in new.get("findings", ())}
    changed = [{"check": k[0], "subject": k[1], "was": before[k]["severity"], "now": after[k]["severity"],
                "message": after[k]["message"]}
               for k in after.keys() & before.keys() if before[k]["severity"] != after[k]["severity"]]

    def share(report: Mapping, name: str):
        v = (report.get("kpis") or {}).get(name)
        return v.get("share") if isinstance(v, dict) else None

    kpis = {name: {"was": share(old, name), "now": share(new, name)}
            for name in sorted(set(old.get("kpis") or {}) | set(new.get("kpis") or {}))}
    return {"fabric": new.get("fabric"), "new": [after[k] for k in sorted(after.keys() - before.keys())],
            "resolved": [before[k] for k in sorted(before.keys() - after.keys())],
            "changed": sorted(changed, key=lambda d: (d["check"], d["subject"])), "kpis": kpis}
