"""``manage.py calibrate_routing``: time each routing engine on a ladder of fat trees and fit the estimate model."""

import json

from django.core.management.base import BaseCommand

from fabric_engine.routing import ENGINES
from ibweb.fabrics import routing_estimate


class Command(BaseCommand):
    help = "Measure routing times and write the model the new-fabric page estimates routing time with."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--engine", action="append", choices=sorted(ENGINES), help="default: every engine")
        parser.add_argument("--budget", type=float, default=60.0, help="seconds per engine, about (default 60)")
        parser.add_argument("--output", default=str(routing_estimate.MODEL_FILE))

    def handle(self, *args, engine, budget: float, output: str, **options) -> None:
        engines = engine or list(ENGINES)

        def progress(name: str, hosts: int, seconds: float) -> None:
            self.stdout.write(f"  {name:8} {hosts:6,} hosts  {seconds:8.3f} s")

        model = routing_estimate.calibrate(engines, budget_s=budget, progress=progress)
        with open(output, "w") as out:
            json.dump(model, out, indent=1)
            out.write("\n")
        self.stdout.write(f"model {model['model']} on {model['machine']}:")
        for name, c in model["engines"].items():
            self.stdout.write(f"  {name:8} b={c['b']:.3e} p={c['p']:.3f}  "
                              f"worst run within x{c['spread']:.2f} of the model")
        self.stdout.write(f"written to {output}")
