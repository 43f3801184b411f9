from django.contrib import admin

from ibweb.admin_access import AllTenantsAdmin

from .models import Analysis, Fabric


@admin.register(Fabric)
class FabricAdmin(AllTenantsAdmin):
    """Fabrics with their scenario (every tenant's jobs): the ``ALL`` level."""

    list_display = ("name", "slug", "mode", "routing_engine", "tick_s", "updated")
    list_filter = ("mode", "routing_engine")
    search_fields = ("name", "slug", "description")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Analysis)
class AnalysisAdmin(AllTenantsAdmin):
    """Analyses are started from the API or the dashboard (which queue the task); here they are read or deleted."""

    list_display = ("id", "fabric", "kind", "status", "progress", "created", "finished", "requested_by")
    list_filter = ("kind", "status", "fabric")
    readonly_fields = ("fabric", "kind", "params", "status", "progress", "result", "error", "created", "started",
                       "finished", "requested_by")

    def has_add_permission(self, request) -> bool:
        return False
