from django.contrib import admin

from ibweb.auth.admin_access import AllTenantsAdmin
from ibweb.auth.bearer_admin import IssuesTokens

from .models import CablingPlan, JobSource, JobToken, ScheduledJob


class JobTokenInline(admin.TabularInline):
    model = JobToken
    extra = 0
    fields = ("name", "prefix", "created", "last_used")
    readonly_fields = ("prefix", "created", "last_used")


@admin.register(JobSource)
class JobSourceAdmin(IssuesTokens, AllTenantsAdmin):
    token_label = "Job token"
    list_display = ("fabric", "kind", "interval_s", "enabled", "last_poll", "last_error")
    list_filter = ("kind", "enabled")
    search_fields = ("fabric__name", "fabric__slug")
    inlines = [JobTokenInline]
    readonly_fields = ("last_poll", "last_error")
    fieldsets = [
        (None, {"fields": ("fabric", "kind", "enabled", "last_poll", "last_error")}),
        ("Where the jobs come from", {"fields": ("command", "drop_dir", "interval_s", "timeout_s")}),
        ("Hosts and tenants", {"fields": ("host_patterns", "accounts")}),
        ("What the jobs should drive", {"fields": ("patterns", "default_pattern", "low_ratio", "high_ratio",
                                                   "min_gbps", "raise_after", "clear_after")}),
    ]


@admin.register(ScheduledJob)
class ScheduledJobAdmin(AllTenantsAdmin):
    list_display = ("job_id", "fabric", "origin", "tenant", "name", "user", "state", "start", "end", "updated")
    list_filter = ("origin", "fabric")
    search_fields = ("job_id", "tenant", "account", "name", "user")
    readonly_fields = [f.name for f in ScheduledJob._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(CablingPlan)
class CablingPlanAdmin(AllTenantsAdmin):
    list_display = ("fabric", "filename", "cables", "uploaded", "uploaded_by", "checked")
    readonly_fields = ("filename", "cables", "uploaded", "uploaded_by", "report", "checked")
    exclude = ("text", "report_digest")

    def has_add_permission(self, request) -> bool:
        return False  # uploaded from the fabric's plan page or the API, where the file is checked first
