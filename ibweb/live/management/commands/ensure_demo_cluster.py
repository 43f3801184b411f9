from django.core.management.base import BaseCommand

from ibweb.fabrics.clusters import ensure_demo_cluster
from ibweb.tenancy.demo import ensure_demo_policy


class Command(BaseCommand):
    help = "Create the demo's cluster (two compute planes and a storage fabric) and its tenants' partitions."

    def handle(self, *args, **options) -> None:
        cluster, created = ensure_demo_cluster()
        self.stdout.write(f"{'created' if created else 'kept'} cluster {cluster.slug!r}")
        for fabric in cluster.fabrics.order_by("pk"):
            made = ensure_demo_policy(fabric)
            if made:
                self.stdout.write(f"{fabric.slug}: created {made} tenant partitions")
