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

from fabric_engine.errors import FabricEngineError
from fabric_engine.scenario import build_fabric

from ..analyses import ParamError, clean_params
from ..models import Analysis, Fabric
from ..tasks import run_analysis

__all__ = ["AnalysisSerializer", "AnalysisViewSet"]


class AnalysisSerializer(serializers.ModelSerializer):
    """An analysis; clients send ``kind`` and ``params``, the rest is the task's."""

    fabric = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    params = serializers.JSONField(required=False, default=dict,
                                   help_text="ebb: patterns, seed, method, pattern, engine; whatif_links: "
                                             "failed_cables, ebb_patterns, seed; whatif_engine: engine, "
                                             "ebb_patterns, seed.")

    class Meta:
        model = Analysis
        fields = ["id", "fabric", "kind", "params", "status", "progress", "result", "error", "created", "started",
                  "finished", "requested_by"]
        read_only_fields = ["status", "progress", "result", "error", "created", "started", "finished"]

    def validate(self, attrs: dict) -> dict:
        fabric: Fabric = self.context["fabric"]
        topology = fabric.spec.get("topology")
        if not topology:
            raise serializers.ValidationError({"fabric": f"fabric {fabric.slug} has no topology to analyse"})
        try:
            num_links = build_fabric(topology).num_links
        except FabricEngineError as exc:
            raise serializers.ValidationError({"fabric": f"its topology cannot be built: {exc}"}) from exc
        try:
            attrs["params"] = clean_params(attrs["kind"], attrs.get("params", {}), num_links)
        except ParamError as exc:
            raise serializers.ValidationError({"params": {exc.field: [exc.message]}}) from exc
        return attrs


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
            self._fabric = get_object_or_404(Fabric.objects.restrict(self.request.user), slug=self.kwargs["slug"])
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
