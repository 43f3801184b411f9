"""How long routing a fabric will take, from a model fitted to measured routing runs.

The work of every routing engine grows with the size of the forwarding tables it
fills: one entry per switch and destination, ``S x N`` (switches times nodes). Per
engine the model is a power law ``t = b * (S * N) ** p``, fitted by least squares in
log space to routing runs of generated fat trees of growing size, timed on one
machine by ``manage.py calibrate_routing`` (which writes :data:`MODEL_FILE`; the file
records the machine, the runs and the fit). The estimate comes with the spread of the
fit: the largest ratio between a measured run and the model (``low``..``high``).
Another machine, or a faster engine, needs a new calibration.
"""

from __future__ import annotations

import json
import os
import platform
import time
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["MODEL_FILE", "estimate", "calibrate", "fit", "load_model", "LADDER"]

MODEL_FILE = Path(__file__).with_name("routing_model.json")
#: The fat trees a calibration routes: (hosts, radix, levels).
LADDER = ((256, 32, 2), (512, 64, 2), (1024, 64, 2), (2048, 64, 2), (4096, 64, 3), (8192, 64, 3))
#: Runs shorter than this are left out of a fit (timer and scheduler noise dominate them).
MIN_SECONDS = 0.004


def fit(work: np.ndarray, seconds: np.ndarray) -> dict:
    """``{"b", "p", "spread"}`` of ``t = b * work ** p`` fitted in log space; ``spread`` >= 1 is the worst ratio."""
    x, y = np.log(np.asarray(work, dtype=float)), np.log(np.asarray(seconds, dtype=float))
    p, log_b = np.polyfit(x, y, 1) if len(x) >= 2 else (1.0, float(y[0] - x[0]))
    residual = y - (log_b + p * x)
    return {"b": float(np.exp(log_b)), "p": float(p), "spread": float(np.exp(np.abs(residual).max()))}


@lru_cache(maxsize=1)
def load_model(path: str = str(MODEL_FILE)) -> dict:
    """The calibration file's content (``{}`` when there is none)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def estimate(engine: str, switches: int, nodes: int, model: dict | None = None) -> dict | None:
    """``{"seconds", "low", "high", "work", "machine", "calibrated"}`` for routing ``engine`` on a fabric of this
    size, or ``None`` when the engine has not been calibrated."""
    model = load_model() if model is None else model
    coef = (model.get("engines") or {}).get(engine)
    if not coef:
        return None
    work = float(max(switches, 1) * max(nodes, 1))
    seconds = coef["b"] * work ** coef["p"]
    spread = max(float(coef.get("spread", 1.0)), 1.0)
    return {"seconds": seconds, "low": seconds / spread, "high": seconds * spread, "work": work,
            "machine": model.get("machine", ""), "calibrated": model.get("calibrated", "")}


def calibrate(engines: list[str], ladder=LADDER, budget_s: float = 60.0, progress=None) -> dict:
    """Route the ``ladder`` of fat trees with each engine, timing each run, and fit the model.

    An engine stops climbing the ladder once one run took more than ``budget_s`` / 4 (slow engines
    are fitted on the smaller trees). ``progress(engine, hosts, seconds)`` is called after each run.
    """
    from fabric_engine.routing import route
    from fabric_engine.topology.generate import fat_tree

    runs: dict[str, list] = {}
    fits: dict[str, dict] = {}
    for engine in engines:
        runs[engine] = []
        for hosts, radix, levels in ladder:
            f = fat_tree(hosts=hosts, radix=radix, levels=levels)
            start = time.perf_counter()
            route(f, engine)
            seconds = time.perf_counter() - start
            runs[engine].append({"hosts": hosts, "switches": f.num_switches, "nodes": f.num_nodes,
                                 "seconds": round(seconds, 5)})
            if progress is not None:
                progress(engine, hosts, seconds)
            if seconds > budget_s / 4:
                break
        usable = [r for r in runs[engine] if r["seconds"] >= MIN_SECONDS] or runs[engine]
        fits[engine] = fit(np.array([r["switches"] * r["nodes"] for r in usable]),
                           np.array([r["seconds"] for r in usable]))
    return {"calibrated": datetime.now(tz=UTC).isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} "
                       f"{platform.python_version()}",
            "model": "t = b * (switches * nodes) ** p", "engines": fits, "runs": runs}
