from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from ibweb.auth.admin_access import AllTenantsAdmin

from .choices import FabricMode
from .models import Analysis, Cluster, Fabric

#: The spec field's label and help per mode (None: a new fabric, whose mode is chosen on the same form).
SPEC_TEXT = {
    FabricMode.EMULATED: ("Scenario", "Scenario: topology generator, jobs, background."),
    None: ("Spec", "Emulated fabrics: the scenario (topology generator, jobs, background). Telemetry-fed fabrics "
                   "have none: leave {} (the collector discovers the topology; add it under Telemetry, or create "
                   "the fabric from the New fabric page)."),
}


@admin.register(Fabric)
class FabricAdmin(AllTenantsAdmin):
    """Fabrics with their scenario (every tenant's jobs): the ``ALL`` level. A telemetry-fed fabric has no scenario:
    its spec is not shown."""

    list_display = ("name", "slug", "mode", "cluster", "cluster_role", "rail", "routing_engine", "tick_s",
                    "congestion_model", "updated")
    list_filter = ("mode", "cluster", "routing_engine")
    search_fields = ("name", "slug", "description")
    prepopulated_fields = {"slug": ("name",)}

    def get_exclude(self, request: HttpRequest, obj: Fabric | None = None) -> tuple:
        hidden = ("spec",) if obj is not None and obj.mode == FabricMode.TELEMETRY else ()
        return (*(super().get_exclude(request, obj) or ()), *hidden)

    def get_form(self, request: HttpRequest, obj: Fabric | None = None, change: bool = False, **kwargs) -> type:
        form = super().get_form(request, obj, change=change, **kwargs)
        spec = form.base_fields.get("spec")
        if spec is not None:
            spec.label, spec.help_text = SPEC_TEXT.get(obj.mode if obj is not None else None, SPEC_TEXT[None])
        return form


class ClusterFabricInline(admin.TabularInline):
    """A cluster's fabrics, read here; which cluster, role and rail a fabric has is set on the fabric."""

    model = Fabric
    fields = ("name", "slug", "mode", "cluster_role", "rail")
    readonly_fields = fields
    ordering = ("cluster_role", "rail", "name")
    extra = 0
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Cluster | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Cluster | None = None) -> bool:
        return False


@admin.register(Cluster)
class ClusterAdmin(AllTenantsAdmin):
    """Clusters: their fabrics (planes by rail, storage, management) are set on each fabric and listed here.
    Operators manage them, policy admins and viewers view them (migration 0009)."""

    list_display = ("name", "slug", "created")
    search_fields = ("name", "slug", "description")
    prepopulated_fields = {"slug": ("name",)}
    inlines = (ClusterFabricInline,)


@admin.register(Analysis)
class AnalysisAdmin(AllTenantsAdmin):
    """Analyses are started from the API or the dashboard (which queue the task); here they are read or deleted."""

    list_display = ("id", "fabric", "kind", "status", "progress", "created", "finished", "requested_by")
    list_filter = ("kind", "status", "fabric")
    readonly_fields = ("fabric", "kind", "params", "status", "progress", "result", "error", "created", "started",
                       "finished", "requested_by")

    def has_add_permission(self, request) -> bool:
        return False
