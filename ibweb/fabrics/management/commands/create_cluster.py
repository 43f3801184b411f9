import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from ibweb.fabrics.clusters import create_cluster
from ibweb.http.json_input import JSONInputError, loads


class Command(BaseCommand):
    help = ("Create an emulated cluster from a cluster spec (JSON file: planes, plane topology, optional storage "
            "topology, jobs; see fabric_engine.cluster.generate): one fabric per plane and the storage fabric.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("spec", type=Path, help="cluster spec, JSON")
        parser.add_argument("--slug", required=True)
        parser.add_argument("--name", help="display name (default: the slug)")
        parser.add_argument("--routing", default="minhop", help="routing engine of every fabric")

    def handle(self, *args, spec: Path, slug: str, name: str | None, routing: str, **options) -> None:
        try:
            body = loads(spec.read_bytes(), what=str(spec))
        except OSError as exc:
            raise CommandError(f"{spec}: {exc.strerror}") from None
        except JSONInputError as exc:
            raise CommandError(f"{spec}: {exc}") from None
        try:
            cluster = create_cluster(body, slug, name or slug, routing_engine=routing)
        except ValidationError as exc:
            raise CommandError(f"{spec}: {'; '.join(f'{k}: {v}' for k, v in exc.message_dict.items())}") from None
        fabrics = ", ".join(f.slug for f in cluster.fabrics.order_by("pk"))
        self.stdout.write(f"created cluster {cluster.slug!r}: {fabrics}")
        self.stdout.write(json.dumps({"cluster": cluster.slug}))
