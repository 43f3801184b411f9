from django.contrib import admin

from .models import Fabric


@admin.register(Fabric)
class FabricAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "mode", "routing_engine", "tick_s", "updated")
    list_filter = ("mode", "routing_engine")
    search_fields = ("name", "slug", "description")
    prepopulated_fields = {"slug": ("name",)}
