"""``python manage.py export_opensm FABRIC DIR``: write partitions.conf, qos-policy.conf and opensm.conf (its qos_*
and, with a congestion control policy, cc_* options)."""

from django.core.management.base import BaseCommand, CommandError

from ibweb.fabrics.models import Fabric
from ibweb.tenancy.exporters import export_all


class Command(BaseCommand):
    help = ("Write the OpenSM partitions.conf, qos-policy.conf and the qos_* and cc_* opensm.conf lines of a fabric "
            "into DIR.")

    def add_arguments(self, parser):
        parser.add_argument("fabric", help="fabric slug")
        parser.add_argument("directory", help="output directory (created if missing)")

    def handle(self, *args, fabric: str, directory: str, **options):
        try:
            row = Fabric.objects.get(slug=fabric)
        except Fabric.DoesNotExist:
            known = ", ".join(Fabric.objects.values_list("slug", flat=True)) or "none"
            raise CommandError(f"no fabric {fabric!r}; known: {known}") from None
        for path in export_all(row, directory):
            self.stdout.write(str(path))
