"""Hostile inputs of issue 14 and a command that measures what each one costs.

Each example is a function returning a zero-argument callable that feeds the input
to the code that reads it, as the server does (upload, fabric spec, push API), and
then does what the engine would do next with what was accepted (build the fabric,
route it). The regression tests call them under tracemalloc;
``python -m tests.support.hostile`` runs each one in a fresh process and prints its peak
resident memory above the interpreter's baseline, its wall time and its outcome::

    .venv/bin/python -m tests.support.hostile
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable

__all__ = ["EXAMPLES", "ibnetdiscover_far_lid", "json_nports", "fat_tree_radix", "iblinkinfo_far_lid",
           "sample_huge_lid", "peak_memory"]

FAR_LID = 100_000_000


def ibnetdiscover_far_lid() -> str:
    """A real-looking ibnetdiscover file with one host LID missing and a switch at LID 100,000,000."""
    from fabric_engine.formats import ibnetdiscover
    from fabric_engine.topology.generate import fat_tree

    text = ibnetdiscover.write(fat_tree(hosts=16, radix=8))
    text = re.sub(r"(# \"leaf01\" enhanced port 0 lid )\d+", rf"\g<1>{FAR_LID}", text, count=1)
    return re.sub(r"(\]\t\t# lid )\d+( lmc 0)", r"\g<1>0\g<2>", text, count=1)


def json_nports(nports: int = 10_000) -> dict:
    """The ibweb JSON of a small fat tree whose first switch declares ``nports`` ports."""
    from fabric_engine.formats.json_format import to_json
    from fabric_engine.topology.generate import fat_tree

    doc = to_json(fat_tree(hosts=16, radix=8))
    doc["nodes"]["nports"][0] = nports
    return doc


def fat_tree_radix(radix: int = 800) -> dict:
    """A fabric spec's topology: a 2-level fat tree of switches of ``radix`` ports."""
    return {"generator": "fat_tree", "hosts": 512, "radix": radix}


def iblinkinfo_far_lid() -> str:
    """The captured iblinkinfo of ibsim's fat tree with one switch's LID changed to 100,000,000."""
    from pathlib import Path

    text = (Path(__file__).parents[1] / "data" / "telemetry" / "iblinkinfo.txt").read_text()
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("Switch:"):
            lid = lines[i + 1].split()[0]
            break
    # Every line that names that LID, as the switch itself or as a far end.
    fixed = [re.sub(rf"^(\s+){lid}(\s)", rf"\g<1>{FAR_LID}\g<2>", ln) for ln in lines]
    fixed = [re.sub(rf"(==>\s+){lid}(\s)", rf"\g<1>{FAR_LID}\g<2>", ln) for ln in fixed]
    return "".join(fixed)


def sample_huge_lid() -> dict:
    """A push body whose one sample has ``lid: 2**40``."""
    return {"samples": [{"lid": 2**40, "port": 1, "t": 1.0, "counters": {"PortXmitData": 1}}]}


def peak_memory(fn: Callable[[], object]) -> tuple[object, int]:
    """``(result or raised exception, peak bytes allocated while fn ran)`` under tracemalloc.

    numpy reports its array buffers to tracemalloc, so the peak includes them.
    """
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001  (the caller inspects it)
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _read_ibnetdiscover() -> None:
    from fabric_engine.formats import read

    read(ibnetdiscover_far_lid(), source="far-lid.ibnd")


def _json_then_route() -> None:
    from fabric_engine.routing import route
    from fabric_engine.scenario import build_fabric

    route(build_fabric({"fabric": json_nports(), "source": "nports.json"}), "minhop")


def _fat_tree_then_route() -> None:
    from fabric_engine.routing import route
    from fabric_engine.scenario import build_fabric

    route(build_fabric(fat_tree_radix()), "minhop")


def _iblinkinfo_then_fabric() -> None:
    from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo

    fabric_from_linkinfo(parse_iblinkinfo(iblinkinfo_far_lid(), source="iblinkinfo"))


def _sample_records() -> None:
    from fabric_engine.telemetry import CounterSamples

    CounterSamples.from_records(json.loads(json.dumps(sample_huge_lid()))["samples"], source="samples")


#: name -> what the server does with the input (parse, then build/route what it accepted).
EXAMPLES: dict[str, Callable[[], None]] = {
    "ibnetdiscover, switch LID 100,000,000": _read_ibnetdiscover,
    "JSON fabric, nports 10,000, routed": _json_then_route,
    "fat tree radix 800, routed": _fat_tree_then_route,
    "iblinkinfo, LID 100,000,000, fabric built": _iblinkinfo_then_fabric,
    "pushed sample, lid 2**40": _sample_records,
}


def _measure(name: str) -> str:
    import numpy  # noqa: F401  (baseline includes numpy and scipy, as in the server)
    import scipy.sparse  # noqa: F401

    import fabric_engine.routing  # noqa: F401
    import fabric_engine.scenario  # noqa: F401

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        EXAMPLES[name]()
        outcome = "accepted"
    except Exception as exc:  # noqa: BLE001  (the outcome is what we report)
        outcome = f"{type(exc).__name__}: {str(exc)[:90]}"
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
    return f"{name:45s} {peak / 1024:8.1f} MB {took:7.2f} s  {outcome}"


def main() -> None:
    print(f"{'example':45s} {'peak RSS':>11s} {'time':>9s}  outcome")
    for name in EXAMPLES:
        out = subprocess.run([sys.executable, "-m", "tests.support.hostile", name], capture_output=True, text=True)
        print(out.stdout.strip() or out.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(_measure(sys.argv[1]))
    else:
        main()
