from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "ibweb.tenancy"
    verbose_name = "Tenancy"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the receivers)
