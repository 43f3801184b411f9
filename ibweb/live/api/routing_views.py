"""The routing report of a fabric: ``GET /api/fabrics/fabrics/<slug>/routing/``.

For the routing the fabric's engine runs on (the same one the path API walks): the engine asked
for and the one whose tables these are (a fallback says why, as OpenSM logs it), engine warnings,
unreachable (switch, LID) entries and host pairs, destinations per inter-switch port (balance, per
switch too), path lengths and the credit-loop check (:func:`fabric_engine.routing.quality.report`).

The fabric's runner computes the report once per routing (:func:`ibweb.live.engine.runner.routing_report`)
and publishes it in the fabric's runtime record (:mod:`ibweb.runtime.record`); this view only reads it.
Everything in it is fabric-wide (switch names, counts) but the warnings and the fallback's reason:
OpenSM's words, free texts that may name a host (``ERR AB0F: CA connected directly to another CA:
0x... (gpu0001 port 1 <-> ...)``), built deep in the routing engines. A view that does not see a
host's tenant reads them relabelled (:meth:`ibweb.live.feed.view.FeedView.free_text`): the host's name
as ``host-<i>``, its node and port GUIDs as ``hidden``.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from ibweb.access import view_of
from ibweb.live.api.base import FabricView, NotPublished
from ibweb.live.feed.view import cached_feed_view
from ibweb.runtime import record

__all__ = ["RoutingReportView"]


@extend_schema(responses=OpenApiTypes.OBJECT)
class RoutingReportView(FabricView):
    """How the fabric is routed: engine used, fallback, warnings, unreachable entries, balance, credit loops."""

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        report = record.routing_report(fabric.pk, self.head(fabric))  # computed by the engine, once per routing
        if report is None:
            raise NotPublished(f"fabric {fabric.slug} has no routing report yet: its engine has not routed it")
        data = dict(report)
        view = view_of(request.user)
        fallback = data.get("fallback")
        if not view.sees_all and (data["warnings"] or fallback):
            fv, _, _ = cached_feed_view(view.key, fabric)
            if fv is None or fv.fabric is None:
                raise NotPublished(f"fabric {fabric.slug}: its record is being replaced; try again")
            data["warnings"] = [fv.free_text(w) for w in data["warnings"]]
            if isinstance(fallback, dict):
                data["fallback"] = {**fallback, "reason": fv.free_text(fallback.get("reason"))}
        data["requested_engine"] = fabric.routing_engine
        data["slug"] = fabric.slug
        return Response(data)
