"""A fabric's validation report (issue 38) and its switches' device panels:

* ``GET /api/fabrics/fabrics/<slug>/validation/``: KPIs (connected endpoints, topology correctness, healthy links),
  each check's status, the findings worst first with their evidence and ``map_url`` (the map focused on the
  finding's cable or node), the isolation advice (capped, never executed) joined with the jobs on each advised
  cable and its cable what-if, the daily digest. ``?problems=1``: only what failed. ``?refresh=1``: computed now
  (the ``ALL`` level: operators; others get the kept report, which the task computes again when due: ``stale``
  and ``age_s`` say when it is).
* ``GET /api/fabrics/fabrics/<slug>/validation/findings.csv``: the findings as CSV (``?problems=1`` too).
* ``GET /api/fabrics/fabrics/<slug>/devices/<node>/``: a switch's vitals, node record and findings (those of the
  kept report, if one is: the panel never computes one).

Validation is fabric-wide: every view that may see the fabric reads it, hosts it may not name as ``host-<index>``
and P_Keys of partitions it does not see as ``hidden`` (:mod:`ibweb.live.validation.shown`).
"""

from __future__ import annotations

import csv
import io
import json

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response

from fabric_engine.validation.report import CSV_COLUMNS
from ibweb.access import view_of
from ibweb.http.csv_cells import csv_cell
from ibweb.live.api.base import FabricView, NotPublished, query_flag
from ibweb.live.validation.answer import NotReady, validation_for
from ibweb.live.validation.device import NotASwitch, device_panel
from ibweb.runtime import device_readings

__all__ = ["ValidationView", "ValidationCsvView", "DeviceView", "csv_text"]


def csv_text(answer: dict) -> str:
    """The findings of a shown report as CSV: :data:`fabric_engine.validation.report.CSV_COLUMNS` and ``map_url``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow((*CSV_COLUMNS, "map_url"))
    for f in answer["report"]["findings"]:  # one row per finding
        w.writerow([csv_cell(f["check"]), f["severity"], csv_cell(f["subject"]), "" if f["link"] is None else f["link"],
                    csv_cell(f["message"]), json.dumps(f["evidence"], sort_keys=True), f.get("map_url") or ""])
    return buf.getvalue()


class _Validation(FabricView):
    def answer(self, request, slug: str) -> dict:
        fabric = self.fabric(request, slug)
        refresh = query_flag(request, "refresh")
        if refresh and not view_of(request.user).sees_all:
            raise PermissionDenied("recomputing the validation report is for operators; the kept report is "
                                   "computed again on its interval")
        try:
            return validation_for(request.user, fabric, problems_only=query_flag(request, "problems"), refresh=refresh)
        except NotReady as e:
            raise NotPublished(str(e)) from None


@extend_schema(responses=OpenApiTypes.OBJECT)
class ValidationView(_Validation):
    """The fabric validation report (see the module docstring)."""

    def get(self, request, slug: str):
        return Response(self.answer(request, slug))


@extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
class ValidationCsvView(_Validation):
    """The validation report's findings as CSV (one row per finding, evidence as JSON, the map link)."""

    def get(self, request, slug: str):
        answer = self.answer(request, slug)
        response = HttpResponse(csv_text(answer), content_type="text/csv; charset=utf-8")
        suffix = "-problems" if answer["report"].get("problems_only") else ""
        response["Content-Disposition"] = f'attachment; filename="{slug}-validation{suffix}.csv"'
        return response


@extend_schema(responses=OpenApiTypes.OBJECT)
class DeviceView(FabricView):
    """A switch's device panel: vitals (fans, PSUs, temperatures, firmware, uptime) as its collectors read them, its
    node record and the validation findings about it. ``node``: a switch's name or ``0x`` GUID; 404 for a host."""

    def get(self, request, slug: str, node: str):
        fabric = self.fabric(request, slug)
        f, i, hidden = self.node(request, fabric, node)
        try:
            report = validation_for(request.user, fabric, kept_only=True)  # its findings if a report is kept
        except NotReady:
            report = None
        try:
            panel = device_panel(f, i, device_readings.read(fabric.pk), report["report"]["findings"] if report
                                 else None)
        except NotASwitch:  # named as asked: the node's own name may be one this view may not see
            raise NotFound(f"{node!r} in fabric {fabric.slug} is not a switch: device panels are of switches") from None
        return Response({"fabric": fabric.slug, **panel})
