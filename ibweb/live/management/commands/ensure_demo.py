from django.core.management.base import BaseCommand

from ibweb.fabrics.demo import ensure_demo
from ibweb.tenancy.demo import ensure_demo_policy


class Command(BaseCommand):
    help = "Create the demo fabric (slug 'demo') and its tenants' partitions if they do not exist."

    def handle(self, *args, **options) -> None:
        fabric, created = ensure_demo()
        self.stdout.write(f"{'created' if created else 'kept'} fabric {fabric.slug!r}")
        made = ensure_demo_policy(fabric)
        if made:
            self.stdout.write(f"created {made} tenant partitions")
