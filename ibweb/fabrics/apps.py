from django.apps import AppConfig


class FabricsConfig(AppConfig):
    name = "ibweb.fabrics"
    verbose_name = "Fabrics"

    def ready(self) -> None:
        # Web, engine and worker processes route and solve: their numpy temporaries reuse freed memory
        # instead of faulting pages in again (reasons and figures in fabric_engine.allocator).
        from fabric_engine.allocator import keep_freed_memory

        keep_freed_memory()
