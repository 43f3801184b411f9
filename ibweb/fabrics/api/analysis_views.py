"""API of a fabric's analyses: ``/api/fabrics/fabrics/<slug>/analyses/`` (list, create) and ``.../<id>/``.

Creating one needs the ``fabrics.add_analysis`` permission; it is queued and run by
:func:`ibweb.fabrics.tasks.run_analysis` once the row is committed (``delay_on_commit``).
Under Celery eager (the embedded default) the answer already holds the result; with
workers it says ``queued`` and the fabric's feed carries ``progress`` messages until done.
An ``OPTIONS`` request lists a ``POST`` action only to users who may create one (DRF's
``SimpleMetadata``), which is how the dashboard decides to show its button.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets

from fabric_engine.analysis import whatif_summary
from fabric_engine.errors import FabricEngineError
from fabric_engine.scenario import build_fabric
from ibweb.access import (
    HIDDEN_NODE,
    NOTHING,
    View,
    hidden_host_names,
    job_tenants,
    relabel,
    shown_job_rows,
    view_of,
    visible_fabrics,
)
from ibweb.http.json_input import JSONField

from ..analyses import AnalysisKind, relabel_links
from ..models import Analysis, Fabric
from ..tasks import run_analysis
from .params import clean_params

__all__ = ["AnalysisSerializer", "AnalysisViewSet"]


class AnalysisSerializer(serializers.ModelSerializer):
    """An analysis; clients send ``kind`` and ``params``, the rest is the task's."""

    fabric = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    params = JSONField(required=False, default=dict,
                       help_text="ebb: patterns, seed, method, pattern, engine; whatif_links: "
                                 "failed_cables, ebb_patterns, seed; whatif_engine: engine, "
                                 "ebb_patterns, seed; whatif_roce: qps, seed, same_seed; whatif_live: "
                                 "failed_cables, failed_switches, engine; whatif_congestion: vls, "
                                 "congestion_control.")

    class Meta:
        model = Analysis
        fields = ["id", "fabric", "kind", "params", "status", "progress", "result", "error", "created", "started",
                  "finished", "requested_by"]
        read_only_fields = ["status", "progress", "result", "error", "created", "started", "finished"]

    def validate(self, attrs: dict) -> dict:
        fabric: Fabric = self.context["fabric"]
        topology = fabric.spec.get("topology")
        from ibweb.runtime import record

        head = record.head_of(fabric)  # the fabric its engine runs (any kind)
        if head is not None:
            num_links = int(head["links"])
        elif attrs["kind"] == AnalysisKind.WHATIF_LIVE or fabric.mode == "telemetry":
            raise serializers.ValidationError({"fabric": f"fabric {fabric.slug} has not been discovered yet"})
        elif not topology:
            raise serializers.ValidationError({"fabric": f"fabric {fabric.slug} has no topology to analyse"})
        else:
            try:
                num_links = build_fabric(topology).num_links
            except FabricEngineError as exc:
                raise serializers.ValidationError({"fabric": f"its topology cannot be built: {exc}"}) from exc
        try:
            attrs["params"] = clean_params(attrs["kind"], attrs.get("params", {}), num_links)
        except serializers.ValidationError as exc:  # the kind's serializer (.params): {field: [message]}
            raise serializers.ValidationError({"params": exc.detail}) from exc
        return attrs

    def to_representation(self, instance: Analysis) -> dict:
        """The analysis as the request's view sees it (:func:`redact_analysis`)."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        return redact_analysis(data, view_of(request.user) if request else NOTHING, instance,
                               request.user if request else None)


def _visible_side(side: dict, shown: frozenset) -> dict:
    """A what-if side with the rows of the jobs in ``shown`` only, its worst slowdown over those (the congestion
    what-if's: another tenant's job's is not told)."""
    jobs = [j for j in side.get("jobs", []) if j.get("id") in shown]
    out = {**side, "jobs": jobs}
    if "worst_slowdown" in side:
        slow = [j["slowdown"] for j in jobs if isinstance(j.get("slowdown"), int | float)]
        out["worst_slowdown"] = round(max(slow), 4) if slow else None
    return out


def redact_analysis(data: dict, view: View, analysis: Analysis, user=None) -> dict:
    """An analysis as ``view`` sees it: below ``ALL``, only its tenants' jobs (ids, slowdowns, the worst job),
    hidden hosts' names replaced in the failed cables and the error (every cable end and the whole error when
    the fabric's hosts are not known), and the requester only if it is ``user``."""
    if view.sees_all:
        return data
    out = {**data}
    if analysis.requested_by_id is None or user is None or analysis.requested_by_id != user.pk:
        out["requested_by"] = None
    result = data.get("result")
    if isinstance(result, dict) and "baseline" in result:
        if analysis.kind == AnalysisKind.WHATIF_LIVE:  # the twin's jobs, by their tenant; per-rail rows "<id>/railN"
            tenants = job_tenants(view) or frozenset()
            shown = frozenset(j["id"] for j in result.get("jobs", []) if j.get("tenant") in tenants)
            result = {**result, "jobs": [j for j in result.get("jobs", []) if j["id"] in shown],
                      "rails_delta": [d for d in result.get("rails_delta", [])
                                      if str(d.get("id")).split("/rail")[0] in shown]}
            shown = shown | {str(j.get("id")) for side in ("baseline", "alternative")
                             for j in result[side].get("jobs", []) if str(j.get("id")).split("/rail")[0] in shown}
        else:  # each row by its tenant: a telemetry fabric's jobs are the twin's, not the spec's
            shown = shown_job_rows(view, [*result.get("delta", []), *result["baseline"].get("jobs", [])],
                                   analysis.fabric.spec) or frozenset()
        result = {**result, "delta": [d for d in result.get("delta", []) if d.get("id") in shown]}
        for side in ("baseline", "alternative"):
            result[side] = {**result[side], "jobs": [j for j in result[side].get("jobs", []) if j.get("id") in shown]}
        result["summary"] = whatif_summary(result)
        out["result"] = result
    if isinstance(result, dict) and "sides" in result:  # RoCEv2 what-if: per-job rows of the visible tenants only
        shown = shown_job_rows(view, result.get("summary", []), analysis.fabric.spec) or frozenset()
        result = {**result, "summary": [j for j in result.get("summary", []) if j.get("id") in shown],
                  "sides": [_visible_side(side, shown) for side in result.get("sides", [])]}
        out["result"] = result
    if isinstance(result, dict) and analysis.kind == AnalysisKind.WHATIF_CONGESTION:  # limiting links name hosts
        result = out["result"] = relabel_links(result, hidden_host_names(view, analysis.fabric))
    if (isinstance(result, dict) and result.get("failed")) or data.get("error"):
        labels = hidden_host_names(view, analysis.fabric)  # None: no inventory, no name may be shown
        if isinstance(result, dict) and result.get("failed"):
            result["failed"] = [{**c, "a": _end(c.get("a", ""), labels), "b": _end(c.get("b", ""), labels)}
                                for c in result["failed"]]
        if data.get("error"):
            out["error"] = HIDDEN_ERROR if labels is None else relabel(data["error"], labels)
    return out


def _end(text: str, labels: dict[str, str] | None) -> str:
    return HIDDEN_NODE if labels is None else relabel(text, labels)


#: What a failed analysis's message reads as below ``ALL`` when the fabric's hosts are not known.
HIDDEN_ERROR = "the analysis failed (its message names nodes of the fabric, not shown)"


_SLUG = OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The fabric's slug.")


@extend_schema_view(list=extend_schema(parameters=[_SLUG]), retrieve=extend_schema(parameters=[_SLUG]),
                    create=extend_schema(parameters=[_SLUG]))
class AnalysisViewSet(mixins.CreateModelMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                      viewsets.GenericViewSet):
    """The analyses of one fabric, newest first."""

    serializer_class = AnalysisSerializer
    queryset = Analysis.objects.none()  # the model for DjangoModelPermissions and the schema

    def fabric(self) -> Fabric:
        if not hasattr(self, "_fabric"):
            self._fabric = get_object_or_404(visible_fabrics(view_of(self.request.user)), slug=self.kwargs["slug"])
        return self._fabric

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular builds the schema without a request
            return Analysis.objects.none()
        return Analysis.objects.filter(fabric=self.fabric()).select_related("fabric", "requested_by")

    def get_serializer_context(self) -> dict:
        context = super().get_serializer_context()
        if "slug" in self.kwargs and not getattr(self, "swagger_fake_view", False):
            context["fabric"] = self.fabric()
        return context

    def perform_create(self, serializer: AnalysisSerializer) -> None:
        user = self.request.user if self.request.user.is_authenticated else None
        analysis = serializer.save(fabric=self.fabric(), requested_by=user)
        run_analysis.delay_on_commit(analysis.pk)
        analysis.refresh_from_db()  # eager: already done; with workers: still queued
