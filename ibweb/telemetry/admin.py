from django import forms
from django.contrib import admin, messages

from ibweb.auth.admin_access import AllTenantsAdmin
from ibweb.auth.bearer_admin import IssuesTokens

from . import store
from .models import CollectorConfig, PushToken, Sweep


class PushTokenInline(admin.TabularInline):
    model = PushToken
    extra = 0
    fields = ("name", "prefix", "created", "last_used")
    readonly_fields = ("prefix", "created", "last_used")


#: Collector fields that may hold credentials (``sshpass -p``, tokens in the environment): written, never shown.
SECRET_FIELDS = ("command_prefix", "environment")


class CollectorConfigForm(forms.ModelForm):
    """The collector form; :data:`SECRET_FIELDS` are write-only: shown empty, and left empty they keep their value."""

    class Meta:
        model = CollectorConfig
        fields = ["fabric", "source", "enabled", "command_prefix", "environment", "drop_dir", "timeout_s", "lfts_path",
                  "interval_s", "stale_after_s", "shard_size", "wrap_counters", "tick_code", "thresholds",
                  "health_counters", "cc_counters", "opensm_log_path", "validation_every"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name in SECRET_FIELDS:
            field = self.fields[name]
            field.required, field.empty_value = False, None  # empty: kept
            self.initial[name] = None
            keep = "leave empty to keep the current value, " if self.instance.pk else ""
            field.help_text = f"{field.help_text} Write-only: {keep}write [] or {{}} to clear it."
        self.fields["validation_every"].required = False

    def _keep(self, name: str):
        value = self.cleaned_data.get(name)
        if value in (None, ""):
            return getattr(self.instance, name) if self.instance.pk else CollectorConfig._meta.get_field(
                name).get_default()
        return value

    def clean_command_prefix(self):
        return self._keep("command_prefix")

    def clean_validation_every(self):
        """Left empty (a form of before the field): the collector's value, or the default."""
        return self._keep("validation_every")

    def clean_environment(self):
        return self._keep("environment")


@admin.register(CollectorConfig)
class CollectorConfigAdmin(IssuesTokens, AllTenantsAdmin):
    token_label = "Push token"
    form = CollectorConfigForm
    list_display = ("fabric", "source", "interval_s", "timeout_s", "shard_size", "enabled", "routing")
    list_filter = ("source", "enabled")
    search_fields = ("fabric__name", "fabric__slug")
    inlines = [PushTokenInline]
    readonly_fields = ("routing", "secrets_set")
    fieldsets = [
        (None, {"fields": ("fabric", "source", "enabled")}),
        ("Where the data comes from", {"fields": ("command_prefix", "environment", "secrets_set", "drop_dir",
                                                  "timeout_s")}),
        ("Routing", {"fields": ("lfts_path", "routing")}),
        ("Schedule", {"fields": ("interval_s", "stale_after_s", "shard_size", "validation_every")}),
        ("Counters", {"fields": ("wrap_counters", "tick_code", "thresholds", "health_counters", "cc_counters",
                                  "opensm_log_path")}),
    ]

    @admin.display(description="Set now")
    def secrets_set(self, obj: CollectorConfig) -> str:
        """What the write-only fields hold, without their values."""
        if not obj.pk:
            return "-"
        words = len(obj.command_prefix) if isinstance(obj.command_prefix, list) else 0
        keys = ", ".join(sorted(obj.environment)) if isinstance(obj.environment, dict) and obj.environment else "none"
        return f"command prefix of {words} words; environment variables: {keys}"

    @admin.display(description="Routing in use")
    def routing(self, obj: CollectorConfig) -> str:
        status = store.routing_status(obj.fabric_id) if obj.pk else None
        if not status:
            return "not routed yet"
        what = f"OpenSM LFT dump {status['path']}" if status["source"] == "opensm-dump" else \
            f"{status['engine']} (computed)"
        return f"{what}: {status['reason']}" if status.get("reason") else what


@admin.register(Sweep)
class SweepAdmin(AllTenantsAdmin):
    list_display = ("id", "config", "source", "status", "started", "duration_s", "shards", "ports")
    list_filter = ("status", "source")
    readonly_fields = [f.name for f in Sweep._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(PushToken)
class PushTokenAdmin(AllTenantsAdmin):
    list_display = ("name", "config", "prefix", "created", "last_used")
    readonly_fields = ("prefix", "created", "last_used")

    def save_model(self, request, obj, form, change):
        if not obj.digest:
            raw = obj.set_new_key()
            messages.warning(request, f"Push token {obj.name!r}: {raw} (shown once; store it now)")
        super().save_model(request, obj, form, change)
