"""The demo fabric that ``make run`` creates."""

from fabric_engine.scenario import DEMO_SPEC

from .models import Fabric

DEMO_SLUG = "demo"


def ensure_demo() -> tuple[Fabric, bool]:
    """Create the demo fabric unless it exists; returns it and whether it was created."""
    spec = {k: v for k, v in DEMO_SPEC.items() if k not in ("routing", "tick_s")}
    return Fabric.objects.get_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": "Demo: 512-GPU NDR fat tree",
            "description": "Non-blocking 2-level NDR fat tree, 16 leaves x 32 GPU hosts, 32 spines, 8 storage servers "
                           "on a storage leaf; 8 jobs of 3 tenants with SHARP, data loading and checkpoints.",
            "spec": spec,
            "routing_engine": DEMO_SPEC["routing"],
            "tick_s": DEMO_SPEC["tick_s"],
        },
    )
