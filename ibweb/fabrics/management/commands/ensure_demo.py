from django.core.management.base import BaseCommand

from ibweb.fabrics.demo import ensure_demo


class Command(BaseCommand):
    help = "Create the demo fabric (slug 'demo') if it does not exist."

    def handle(self, *args, **options) -> None:
        fabric, created = ensure_demo()
        self.stdout.write(f"{'created' if created else 'kept'} fabric {fabric.slug!r}")
