from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "ibweb.dashboard"
    verbose_name = "Dashboard"
