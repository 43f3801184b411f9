"""API tokens in the admin: a new token's key is made on save and shown once (a message), never again."""

from django.contrib import admin, messages

from .models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Add a token (user and name); lists show its prefix, never its key or digest."""

    list_display = ("name", "user", "prefix", "created", "last_used")
    search_fields = ("name", "user__username", "prefix")
    raw_id_fields = ("user",)

    def get_readonly_fields(self, request, obj=None):
        return ("prefix", "created", "last_used") + (("user",) if obj is not None else ())

    def get_fields(self, request, obj=None):
        return ("user", "name") + (("prefix", "created", "last_used") if obj is not None else ())

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            raw = obj.set_new_key()
            messages.warning(request, f"API token {obj.name!r} of {obj.user}: {raw} (shown once; store it now)")
        super().save_model(request, obj, form, change)
