"""Admin for tenancy: inline members validated against the fabric, bulk add, audit of every change."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.forms.models import BaseInlineFormSet
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils.html import format_html

from fabric_engine.formats.opensm_cc import write_cc_conf
from ibweb.auth.admin_access import AllTenantsAdmin, ViewScopedAdmin

from . import audit, services
from .choices import AuditAction
from .forms import BulkMembersForm, PartitionForm
from .inventory import check_guids, normalize_guid
from .models import AuditEntry, CongestionControlPolicy, Partition, PartitionMember, QosPolicy, ServiceClass, Tenant


class AuditedAdmin(ViewScopedAdmin):
    """Records one audit entry per add, change (including inlines) and delete; rows follow the user's view."""

    def save_model(self, request, obj, form, change):
        request._tenancy_before = audit.snapshot(type(obj).objects.get(pk=obj.pk)) if change else None
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        audit.record(request.user, AuditAction.UPDATE if change else AuditAction.CREATE, form.instance,
                     before=getattr(request, "_tenancy_before", None), via="admin")

    def delete_model(self, request, obj):
        audit.record(request.user, AuditAction.DELETE, obj, before=audit.snapshot(obj), after=None, via="admin")
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            audit.record(request.user, AuditAction.DELETE, obj, before=audit.snapshot(obj), after=None, via="admin")
        super().delete_queryset(request, queryset)


@admin.register(ServiceClass)
class ServiceClassAdmin(AuditedAdmin):
    list_display = ("name", "sl", "rate_limit", "mtu_limit")
    list_filter = ("sl",)
    search_fields = ("name", "description")


@admin.register(Tenant)
class TenantAdmin(AuditedAdmin):
    list_display = ("name", "slug", "service_class", "partition_count", "user_count")
    list_filter = (("service_class", admin.RelatedOnlyFieldListFilter),)
    search_fields = ("name", "slug", "description", "contacts", "users__username")
    prepopulated_fields = {"slug": ("name",)}
    filter_horizontal = ("users",)

    def get_queryset(self, request):
        # counted rows are grouped, which drops the model's default ordering (autocomplete pages them)
        return super().get_queryset(request).annotate(n_parts=Count("partitions", distinct=True),
                                                      n_users=Count("users", distinct=True)).order_by("name")

    @admin.display(description="partitions", ordering="n_parts")
    def partition_count(self, obj) -> int:
        return obj.n_parts

    @admin.display(description="users", ordering="n_users")
    def user_count(self, obj) -> int:
        return obj.n_users


#: Partitions with more members than this list none of them inline (the page would be thousands of rows):
#: the admin links to the member search of the "Tenants and policy" page instead, and still offers new rows.
INLINE_MEMBERS_MAX = 20


class MemberFormSet(BaseInlineFormSet):
    """Checks every GUID of the inline against the parent partition's fabric in one go.

    A partition of more than :data:`INLINE_MEMBERS_MAX` members shows no existing rows, only new ones.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and self.queryset.count() > INLINE_MEMBERS_MAX:
            self.queryset = self.queryset.none()

    def clean(self):
        super().clean()
        fabric = getattr(self.instance, "fabric", None) if self.instance.fabric_id else None
        rows = []
        for form in self.forms:
            if not hasattr(form, "cleaned_data") or not form.cleaned_data or form.cleaned_data.get("DELETE"):
                continue
            try:
                form.cleaned_data["guid"] = form.instance.guid = normalize_guid(form.cleaned_data.get("guid", ""))
            except ValidationError as exc:
                form.add_error("guid", exc.message_dict["guid"])
                continue
            rows.append(form)
        seen = {}
        for form in rows:
            g = form.cleaned_data["guid"]
            if g in seen:
                form.add_error("guid", f"GUID {g} is listed twice")
            seen[g] = form
        if fabric is None or not rows:
            return
        for form in rows:
            try:
                check_guids(fabric, [form.cleaned_data["guid"]], field="guid")
            except ValidationError as exc:
                form.add_error("guid", exc.message_dict["guid"])


class PartitionMemberInline(admin.TabularInline):
    model = PartitionMember
    formset = MemberFormSet
    extra = 3
    fields = ("guid", "membership")


@admin.register(Partition)
class PartitionAdmin(AuditedAdmin):
    form = PartitionForm
    list_display = ("name", "pkey_display", "fabric", "tenant", "ipoib", "sl", "mtu", "rate", "member_count")
    list_filter = ("fabric", ("tenant", admin.RelatedOnlyFieldListFilter), "ipoib", "default_membership", "sl")
    search_fields = ("name", "description", "members__guid", "tenant__name")
    list_select_related = ("fabric", "tenant")
    inlines = [PartitionMemberInline]
    readonly_fields = ("members_summary", "bulk_add")
    fieldsets = [
        (None, {"fields": ("fabric", "tenant", "name", "pkey", "description", "members_summary", "bulk_add")}),
        ("IPoIB and QoS", {"fields": ("ipoib", "mtu", "rate", "sl", "service_class", "index0")}),
        ("Membership", {"fields": ("default_membership", "all_cas", "all_switches", "all_routers", "self_port")}),
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_members=Count("members")).order_by("fabric", "pkey")

    @admin.display(description="P_Key", ordering="pkey")
    def pkey_display(self, obj) -> str:
        return obj.pkey_hex

    @admin.display(description="members", ordering="n_members")
    def member_count(self, obj) -> int:
        return obj.n_members

    @admin.display(description="members")
    def members_summary(self, obj) -> str:
        if not obj.pk:
            return "Save the partition first."
        count = obj.members.count()
        url = reverse("tenancy:policy-detail", args=[obj.fabric.slug]) + f"?partition={obj.pkey_hex}#members"
        listed = "listed below" if count <= INLINE_MEMBERS_MAX else f"more than {INLINE_MEMBERS_MAX}, so none inline"
        return format_html('{} ({}); <a href="{}">search, add and remove them on the Tenants and policy page</a>',
                           f"{count:,} members", listed, url)

    @admin.display(description="bulk add")
    def bulk_add(self, obj) -> str:
        if not obj.pk:
            return "Save the partition first."
        url = reverse("admin:tenancy_partition_bulk_members", args=[obj.pk])
        return format_html('<a href="{}">Add members from pasted GUIDs or a host-name pattern</a>', url)

    def get_urls(self):
        extra = [path("<int:pk>/bulk-members/", self.admin_site.admin_view(self.bulk_members_view),
                      name="tenancy_partition_bulk_members")]
        return extra + super().get_urls()

    def bulk_members_view(self, request, pk: int):
        partition = get_object_or_404(self.get_queryset(request), pk=pk)
        if not (self.has_change_permission(request, partition)
                and request.user.has_perm("tenancy.add_partitionmember")):
            raise PermissionDenied
        form = BulkMembersForm(request.POST or None, partition=partition)
        if request.method == "POST" and form.is_valid():
            entries = form.cleaned_data["entries"]
            try:
                services.add_members(partition, entries, request.user, "admin")
            except ValidationError as exc:
                for msg in exc.message_dict.get("guids", exc.messages):
                    form.add_error("guids", msg)
            else:
                messages.success(request, f"{len(entries)} members added to {partition}.")
                return redirect("admin:tenancy_partition_change", partition.pk)
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "original": partition,
                   "form": form, "title": f"Add members to {partition}"}
        return render(request, "admin/tenancy/partition/bulk_members.html", context)


@admin.register(QosPolicy)
class QosPolicyAdmin(AuditedAdmin):
    list_display = ("fabric", "enabled", "max_vls", "high_limit", "sl2vl")
    list_filter = ("enabled",)
    search_fields = ("fabric__name", "fabric__slug")


@admin.register(CongestionControlPolicy)
class CongestionControlPolicyAdmin(AuditedAdmin):
    list_display = ("fabric", "enabled")
    list_filter = ("enabled",)
    search_fields = ("fabric__name", "fabric__slug")
    readonly_fields = ("opensm_conf",)

    @admin.display(description="opensm.conf lines")
    def opensm_conf(self, obj) -> str:
        try:
            return write_cc_conf(obj.congestion_control()) if obj.pk else "Save the policy first."
        except ValueError as exc:
            return f"invalid settings: {exc}"


@admin.register(AuditEntry)
class AuditEntryAdmin(AllTenantsAdmin):
    list_display = ("time", "username", "action", "via", "object_type", "object_repr", "fabric")
    list_filter = ("action", "via", "object_type", "fabric")
    search_fields = ("username", "object_repr", "object_id")
    date_hierarchy = "time"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
