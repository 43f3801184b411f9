from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "ibweb.tenancy"
    verbose_name = "Tenancy"
