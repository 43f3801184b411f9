from django.apps import AppConfig


class FabricsConfig(AppConfig):
    name = "ibweb.fabrics"
    verbose_name = "Fabrics"
