import asyncio

from django.core.management.base import BaseCommand

from ibweb.live.engine.supervisor import EngineSupervisor


class Command(BaseCommand):
    help = "Run the engines of fabrics in this process (all, or those named), following changes to them."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slugs", nargs="*", help="fabric slugs (default: every emulated fabric)")

    def handle(self, *args, slugs: list[str], **options) -> None:
        asyncio.run(self._run(slugs))

    async def _run(self, slugs: list[str]) -> None:
        supervisor = EngineSupervisor(slugs)
        await supervisor.start()
        if not supervisor.tasks:
            self.stderr.write("no fabric to run yet; waiting for one to be created")
        try:
            await supervisor.wait()
        finally:
            await supervisor.stop()
