"""``manage.py prune_events``: apply the events' retention now (the recorder also does it hourly)."""

from django.core.management.base import BaseCommand

from ibweb.events.recorder import MAX_ROWS, RETENTION_DAYS, prune


class Command(BaseCommand):
    help = "Delete cleared events older than the retention period and the oldest beyond the per-fabric cap."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--days", type=float, default=RETENTION_DAYS, help=f"default {RETENTION_DAYS:g}")
        parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help=f"per fabric, default {MAX_ROWS:,}")

    def handle(self, *args, days: float, max_rows: int, **options) -> None:
        if days <= 0 or max_rows < 1:
            self.stderr.write("--days must be positive and --max-rows at least 1")
            raise SystemExit(2)
        self.stdout.write(f"deleted {prune(days=days, max_rows=max_rows)} events")
