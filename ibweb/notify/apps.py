from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "ibweb.notify"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from . import receivers  # noqa: F401 - dispatches stored events that open and clear
