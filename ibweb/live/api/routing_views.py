"""The routing report of a fabric: ``GET /api/fabrics/fabrics/<slug>/routing/``.

For the routing the fabric's engine runs on (the same one the path API walks): the engine asked
for and the one whose tables these are (a fallback says why, as OpenSM logs it), engine warnings,
unreachable (switch, LID) entries and host pairs, destinations per inter-switch port (balance, per
switch too), path lengths and the credit-loop check (:func:`fabric_engine.routing.quality.report`).

The fabric's runner computes the report once per routing (:func:`ibweb.live.runner.routing_report`)
and publishes it in the fabric's runtime record (:mod:`ibweb.runtime.record`); this view only reads it.
Everything in it is fabric-wide (switch names, counts); a host name that reaches a warning is
replaced by its ``host-<i>`` label for a view that does not see that host's tenant.
"""

from __future__ import annotations

from rest_framework.response import Response

from ibweb.access import hidden_host_names, relabel, view_of
from ibweb.runtime import record

from .views import NotPublished, _FabricView

__all__ = ["RoutingReportView"]


class RoutingReportView(_FabricView):
    """How the fabric is routed: engine used, fallback, warnings, unreachable entries, balance, credit loops."""

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        report = record.routing_report(fabric.pk, self.head(fabric))  # computed by the engine, once per routing
        if report is None:
            raise NotPublished(f"fabric {fabric.slug} has no routing report yet: its engine has not routed it")
        data = dict(report)
        view = view_of(request.user)
        if not view.sees_all and data["warnings"]:
            labels = hidden_host_names(view, fabric, self.engine_fabric(fabric))
            data["warnings"] = [relabel(w, labels) for w in data["warnings"]]
        data["requested_engine"] = fabric.routing_engine
        data["slug"] = fabric.slug
        return Response(data)
