"""Fabric validation (issue 38): readers of ``sminfo`` and ``smpquery pkeys``, checks returning
:class:`Finding` s, the report (KPIs, problems only, JSON/CSV, the daily diff) and isolation advice.
Pure Python and numpy; device vitals are read by attribute (:mod:`fabric_engine.devices.vitals`)."""

from .findings import ERROR, INFO, SEVERITIES, WARNING, Finding
from .isolation import Advice, IsolationPlan, advise, default_cap, whatif_inputs
from .pkeys import PKeyTable, read_pkeys
from .ports import link_grades, port_grades
from .report import ValidationReport, ValidationSettings, diff_reports, validate
from .sminfo import SmInfo, read_sminfo

__all__ = ["Finding", "ERROR", "WARNING", "INFO", "SEVERITIES", "read_sminfo", "SmInfo", "read_pkeys", "PKeyTable",
           "validate", "ValidationReport", "ValidationSettings", "diff_reports", "advise", "Advice",
           "IsolationPlan", "default_cap", "whatif_inputs", "port_grades", "link_grades"]
