"""What every bench prints for ``make bench``: the machine, and one ``TARGET`` line per target.

A ``TARGET`` line reads ``TARGET OK|MISSED | <what> | <measured> | <target>``; ``summary.py``
collects them from the output of all benches and prints them as one table.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path


def deployed_allocator() -> str:
    """Set this process's allocator as ibweb's processes and the CLI run the engine; a line saying which it is.

    Benches that run engine code without Django call it (Django processes set it up in ``ibweb.fabrics``).
    """
    from fabric_engine.allocator import keep_freed_memory

    if keep_freed_memory():
        return "allocator: freed memory kept for reuse, as in ibweb's processes (fabric_engine.allocator)"
    return "allocator: as the environment sets it (fabric_engine.allocator left it alone)"


def machine() -> str:
    """One line naming the machine the figures were measured on (cores, CPU, memory, load)."""
    cpu = platform.processor() or platform.machine()
    try:
        info = Path("/proc/cpuinfo").read_text().splitlines()
        cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
        mem = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    except OSError:
        mem = float("nan")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"machine: {os.cpu_count()} cores, {cpu}, {mem:.0f} GiB, load average {load:.1f}"


def target(what: str, measured: float, limit: float, unit: str = "", *, at_least: bool = False,
           digits: int = 3) -> bool:
    """Print the ``TARGET`` line of ``measured`` against ``limit`` (at most, or ``at_least``); returns whether met."""
    ok = measured >= limit if at_least else measured <= limit
    op = ">=" if at_least else "<="
    print(f"TARGET {'OK' if ok else 'MISSED'} | {what} | {measured:.{digits}g} {unit} | {op} {limit:g} {unit}".rstrip(),
          flush=True)
    return ok
