import asyncio

from django.core.management.base import BaseCommand

from ibweb.live.engine import EngineSupervisor


class Command(BaseCommand):
    help = "Run the engine loop of emulated fabrics in this process (all, or those named)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slugs", nargs="*", help="fabric slugs (default: every emulated fabric)")

    def handle(self, *args, slugs: list[str], **options) -> None:
        asyncio.run(self._run(slugs))

    async def _run(self, slugs: list[str]) -> None:
        supervisor = EngineSupervisor()
        await supervisor.start(slugs or None)
        if not supervisor.tasks:
            self.stderr.write("no emulated fabric to run")
            return
        try:
            await asyncio.gather(*supervisor.tasks.values())
        finally:
            await supervisor.stop()
