from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "ibweb.live"
    verbose_name = "Live feed"
