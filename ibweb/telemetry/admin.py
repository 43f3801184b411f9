from django.contrib import admin, messages

from . import store
from .models import CollectorConfig, PushToken, Sweep


class PushTokenInline(admin.TabularInline):
    model = PushToken
    extra = 0
    fields = ("name", "prefix", "created", "last_used")
    readonly_fields = ("prefix", "created", "last_used")


@admin.register(CollectorConfig)
class CollectorConfigAdmin(admin.ModelAdmin):
    list_display = ("fabric", "source", "interval_s", "timeout_s", "shard_size", "enabled", "routing")
    list_filter = ("source", "enabled")
    search_fields = ("fabric__name", "fabric__slug")
    inlines = [PushTokenInline]
    readonly_fields = ("routing",)
    fieldsets = [
        (None, {"fields": ("fabric", "source", "enabled")}),
        ("Where the data comes from", {"fields": ("command_prefix", "environment", "drop_dir", "timeout_s")}),
        ("Routing", {"fields": ("lfts_path", "routing")}),
        ("Schedule", {"fields": ("interval_s", "stale_after_s", "shard_size")}),
        ("Counters", {"fields": ("wrap_counters", "tick_code", "thresholds")}),
    ]

    @admin.display(description="Routing in use")
    def routing(self, obj: CollectorConfig) -> str:
        status = store.routing_status(obj.fabric_id) if obj.pk else None
        if not status:
            return "not routed yet"
        what = f"OpenSM LFT dump {status['path']}" if status["source"] == "opensm-dump" else \
            f"{status['engine']} (computed)"
        return f"{what}: {status['reason']}" if status.get("reason") else what

    def save_formset(self, request, form, formset, change):
        tokens = formset.save(commit=False)
        for token in tokens:
            if isinstance(token, PushToken) and not token.digest:
                raw = token.set_new_key()
                messages.warning(request, f"Push token {token.name!r}: {raw} (shown once; store it now)")
            token.save()
        for gone in formset.deleted_objects:
            gone.delete()
        formset.save_m2m()


@admin.register(Sweep)
class SweepAdmin(admin.ModelAdmin):
    list_display = ("id", "config", "source", "status", "started", "duration_s", "shards", "ports")
    list_filter = ("status", "source")
    readonly_fields = [f.name for f in Sweep._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(PushToken)
class PushTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "config", "prefix", "created", "last_used")
    readonly_fields = ("prefix", "created", "last_used")

    def save_model(self, request, obj, form, change):
        if not obj.digest:
            raw = obj.set_new_key()
            messages.warning(request, f"Push token {obj.name!r}: {raw} (shown once; store it now)")
        super().save_model(request, obj, form, change)
