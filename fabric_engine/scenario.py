"""Scenarios: a fabric, its routing and a workload described as plain data (a spec).

A spec is JSON-ready, so the web app stores it as is and builds the emulator from it::

    {"topology": {"generator": "fat_tree", "hosts": 512, "radix": 64, "speed": "NDR"},
     "routing": "minhop",
     "jobs": [{"name": "llm", "tenant": "acme", "hosts": 128, "placement": "packed",
               "pattern": "ring_allreduce", "buffer_gb": 16, "compute_s": 1.5, "sl": 0}],
     "background": {"fraction": 0.25, "gbps": 20},
     "tick_s": 1.0, "seed": 1}

Job keys: ``name``, ``tenant``, ``hosts`` (a count), ``placement`` (``packed`` or
``scattered``) or instead ``nodelist`` (the hosts by name, a Slurm hostlist such as ``dgx[0001-0064]``),
``pattern`` (see :mod:`fabric_engine.workload.patterns`),
``buffer_gb`` (bytes per iteration, 1e9), ``compute_s``, ``sl``, ``start_s``,
``stop_s``, ``repeat_s``, ``params`` (pattern options, e.g. ``{"stages": 4}``),
``sharp`` (ask for SHARP aggregation), ``read_gbps`` (data loading from storage)
and ``checkpoint`` (``{"params", "every", "bytes_per_param", "stripe_count"}``, see
:class:`fabric_engine.storage.Checkpoint`).
Optional top-level keys: ``sharp`` (:func:`fabric_engine.sharp.spec.manager_from_spec`),
``storage`` (:func:`fabric_engine.storage.spec.model_from_spec`), ``policy`` (partitions and QoS, as
:meth:`fabric_engine.policy.Policy.from_dict` takes them), ``adaptive`` (use the
routing's adaptive path model ``routing.adaptive_paths``), ``ecn_threshold`` and
``xmit_wait_tick`` (see :class:`~fabric_engine.emulator.Emulator`), ``health`` (link health faults:
a raw BER rising, a hot module, a flapping link, a cable swap; see
:mod:`fabric_engine.health.emulated_faults`: with the key, even an empty list, the emulator reads every cable
end's link health each tick, :attr:`~fabric_engine.emulator.Emulator.health_readings`), ``congestion``
(``maxmin`` or ``credit``) and ``congestion_control`` (InfiniBand congestion control settings for the credit
model, :meth:`fabric_engine.backpressure.cc_params.CongestionControl.from_dict`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from .backpressure.cc_params import CongestionControl
from .emulator import Background, Emulator
from .errors import FabricEngineError
from .health.emulated import HealthModel
from .health.emulated_faults import faults_from_spec
from .routing import route
from .routing.options import engine_options
from .sharp.spec import manager_from_spec
from .storage import Checkpoint
from .storage.spec import model_from_spec
from .topology import Fabric, generate
from .topology.limits import check_generator_parameters
from .workload import PLACEMENTS, Job

__all__ = ["DEMO_SPEC", "build_fabric", "build_emulator", "loaded_rail_spec"]

GENERATORS = {"fat_tree": generate.fat_tree, "rail_optimized": generate.rail_optimized,
              "dragonfly_plus": generate.dragonfly_plus}

#: The demo: a non-blocking 2-level NDR fat tree of 512 GPU hosts (16 leaves x 32 hosts, one
#: cable from every leaf to each of 32 spines) plus 8 storage servers of 2 HCA ports on a
#: dedicated storage leaf (``sleaf01``), running 8 jobs of 3 tenants. Four jobs ask for SHARP
#: (initech is not allowed it, so diffusion-xl falls back to its own all-reduce); llama-70b
#: writes a checkpoint every 20 iterations; four jobs load data and a tenth of the hosts read
#: in the background. One of each link health fault: the raw BER of a leaf-spine cable climbs
#: (effective BER a warning after about 250 s, an error after about 570 s), a spine module runs hot
#: (a warning), the cable of an idle host flaps (down 9 s every 2 minutes from 30 s: it carries
#: only background traffic) and a host cable is swapped at 300 s.
DEMO_SPEC: dict = {
    "topology": {"generator": "fat_tree", "hosts": 512, "radix": 64, "levels": 2, "speed": "NDR", "name": "demo",
                 "storage_servers": 8, "storage_ports": 2},
    "routing": "minhop",
    "jobs": [
        {"name": "llama-70b", "tenant": "acme", "hosts": 128, "placement": "packed", "buffer_gb": 16, "compute_s": 1.6,
         "sharp": True, "read_gbps": 400, "checkpoint": {"params": 70e9, "every": 20}},
        {"name": "moe-8x22b", "tenant": "acme", "hosts": 64, "placement": "packed", "pattern": "all_to_all",
         "buffer_gb": 8, "compute_s": 0.8},
        {"name": "vit-huge", "tenant": "globex", "hosts": 64, "placement": "scattered", "pattern": "tree_allreduce",
         "buffer_gb": 4, "compute_s": 0.6, "read_gbps": 800},
        {"name": "bert-ft", "tenant": "globex", "hosts": 32, "placement": "packed", "buffer_gb": 2, "compute_s": 0.5,
         "sharp": True},
        {"name": "gpt-13b", "tenant": "initech", "hosts": 64, "placement": "scattered", "pattern": "pipeline",
         "params": {"stages": 8}, "buffer_gb": 6, "compute_s": 1.2, "start_s": 3},
        {"name": "diffusion-xl", "tenant": "initech", "hosts": 64, "placement": "scattered",
         "pattern": "hierarchical_allreduce", "buffer_gb": 5, "compute_s": 0.9, "sharp": True, "read_gbps": 600},
        {"name": "rlhf-7b", "tenant": "acme", "hosts": 32, "placement": "scattered", "buffer_gb": 3, "compute_s": 0.7,
         "sharp": True, "read_gbps": 100},
        {"name": "eval-sweep", "tenant": "globex", "hosts": 32, "placement": "packed", "pattern": "uniform_random",
         "buffer_gb": 1, "compute_s": 0.4, "start_s": 5, "stop_s": 35, "repeat_s": 60},
    ],
    "background": {"fraction": 0.25, "gbps": 20},
    "sharp": {"allowed_tenants": ["acme", "globex"]},
    "storage": {"read_gbps": 320, "write_gbps": 160, "background_read_gbps": 200, "background_fraction": 0.1},
    "health": [
        {"kind": "ber_rising", "link": "leaf03 40", "from": 6e-5, "to": 3e-4, "over_s": 1800},
        {"kind": "hot_module", "port": "spine07 12", "celsius": 78},
        {"kind": "flapping", "link": "gpu0512 1", "period_s": 120, "down_s": 9, "start_s": 30},
        {"kind": "cable_swap", "link": "leaf05 7", "at_s": 300},
    ],
    "tick_s": 1.0,
    "seed": 1,
}


#: Collectives of :func:`loaded_rail_spec`, in turn.
LOADED_PATTERNS = ("ring_allreduce", "tree_allreduce", "hierarchical_allreduce", "all_to_all")


def loaded_rail_spec(gpus: int, job_gpus: int = 256, tick_s: float = 1.0) -> dict:
    """A fully loaded rail-optimized 3-level NDR fabric of ``gpus`` GPUs (DGX SuperPOD style, 8 GPUs a node).

    Jobs of ``job_gpus`` GPUs cover every GPU, their collectives taking turns through
    :data:`LOADED_PATTERNS`; jobs alternate packed and scattered in pairs of four; 10 % of
    the GPUs send background traffic. This is the fabric the scale targets of issue 15 are
    measured on (``tests/bench/bench_scale.py``).

    >>> spec = loaded_rail_spec(4096)
    >>> spec["topology"]["nodes"], len(spec["jobs"]), spec["jobs"][3]["pattern"]
    (512, 16, 'all_to_all')
    """
    if gpus <= 0 or gpus % 8 or gpus % job_gpus:
        raise FabricEngineError(f"gpus {gpus}: must be a multiple of 8 and of the job size {job_gpus}")
    jobs = [{"name": f"job{k:03d}", "tenant": f"tenant{k % 8}", "hosts": job_gpus,
             "pattern": LOADED_PATTERNS[k % len(LOADED_PATTERNS)],
             "placement": "packed" if (k // len(LOADED_PATTERNS)) % 2 == 0 else "scattered",
             "buffer_gb": 1 + k % 4, "compute_s": 0.3 + 0.1 * (k % 5)} for k in range(gpus // job_gpus)]
    return {"topology": {"generator": "rail_optimized", "nodes": gpus // 8, "gpus_per_node": 8, "nodes_per_su": 32,
                         "radix": 64, "levels": 3, "speed": "NDR"},
            "routing": "minhop", "jobs": jobs, "background": {"fraction": 0.1, "gbps": 20}, "tick_s": tick_s,
            "seed": 1}


def build_fabric(topology: dict) -> Fabric:
    """The fabric a topology spec describes.

    Either ``{"generator": name, **params}``, or ``{"fabric": <ibweb-fabric JSON>, ...}``
    for a fabric read from a file (the other keys, e.g. ``source`` and ``format``, say where from).
    """
    if not isinstance(topology, dict):
        raise FabricEngineError(f"topology: expected an object, not {type(topology).__name__}")
    if "fabric" in topology:
        from .formats.json_format import from_json

        return from_json(topology["fabric"], source=str(topology.get("source", "topology.fabric")))
    params = dict(topology)
    name = params.pop("generator", None)
    try:
        gen = GENERATORS[name]
    except (KeyError, TypeError):
        known = ", ".join(GENERATORS)
        raise FabricEngineError(f"topology.generator: unknown generator {str(name)[:40]!r}; known: {known}") from None
    check_generator_parameters(name, params, "topology")  # bounds before anything is built (issue 14)
    if params.get("lids", "subnet") != "subnet":
        raise FabricEngineError("topology.lids: a scenario runs on one subnet; only 'subnet' can be routed")
    try:
        return gen(**params)
    except TypeError as exc:
        raise FabricEngineError(f"topology: {exc}") from None


def _listed_hosts(fabric: Fabric, nodelist: str, count, taken: np.ndarray, where: str) -> np.ndarray:
    """Node indices of a job's ``nodelist`` (host names, in hostlist order): GPU hosts of ``fabric``, free."""
    from .twin.hostlist import expand_hostlist
    from .workload.placement import compute_hosts

    gpus = compute_hosts(fabric)
    names = expand_hostlist(nodelist, limit=len(gpus), source=f"{where}.nodelist")
    index = {str(n): i for i, n in enumerate(fabric.node_name[gpus].tolist())}
    missing = [n for n in names if n not in index]
    if missing:
        raise FabricEngineError(f"nodelist: {len(missing)} names are no GPU host of the fabric, e.g. {missing[0]!r}")
    hosts = gpus[np.fromiter((index[n] for n in names), dtype=np.int64, count=len(names))]
    if count is not None and int(count) != len(hosts):
        raise FabricEngineError(f"hosts {count} but the nodelist names {len(hosts)}")
    busy = np.isin(hosts, taken)
    if busy.any():
        raise FabricEngineError(f"nodelist: {fabric.node_name[hosts[busy][0]]!r} runs an earlier job")
    return hosts


def _jobs(fabric: Fabric, specs: list[dict]) -> list[Job]:
    taken = np.zeros(0, dtype=np.int64)
    jobs = []
    for i, spec in enumerate(specs):
        spec = dict(spec)
        where = f"jobs[{i}]"
        try:
            if "nodelist" in spec:
                hosts = _listed_hosts(fabric, spec.pop("nodelist"), spec.pop("hosts", None), taken, where)
                spec.pop("placement", None)
            else:
                hosts = PLACEMENTS[spec.pop("placement", "packed")](fabric, int(spec.pop("hosts")), taken)
            taken = np.concatenate([taken, hosts])
            buffer_bytes = float(spec.pop("buffer_gb", 8)) * 1e9
            if spec.get("checkpoint") is not None:
                spec["checkpoint"] = Checkpoint.from_dict(spec["checkpoint"])
            jobs.append(Job(hosts=hosts, buffer_bytes=buffer_bytes, **spec))
        except KeyError as exc:
            raise FabricEngineError(f"{where}: missing or unknown {exc}") from None
        except (TypeError, FabricEngineError) as exc:
            raise FabricEngineError(f"{where}: {exc}") from None
    return jobs


def build_emulator(spec: dict, *, sharp_tenants: set[str] | None = None,
                   progress: Callable[[float, str], None] | None = None) -> Emulator:
    """An :class:`Emulator` ready to ``step()`` for the scenario ``spec``.

    ``sharp_tenants``: tenants allowed to use SHARP (overrides ``spec["sharp"]["allowed_tenants"]``).
    ``progress(fraction, message)``: called as each step of the start begins (building the fabric,
    routing it, expanding the jobs' flows, solving every job alone), then with 1.0; a start at
    32,768 GPUs takes tens of seconds.
    """
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(fraction, message)

    spec = copy.deepcopy(spec)
    topo = spec.get("topology", {})
    report(0.0, f"building the fabric ({topo.get('generator', 'from a file')})")
    fabric = build_fabric(topo)
    health = None  # checked before the fabric is routed
    if spec.get("health") is not None:
        health = HealthModel(fabric, faults_from_spec(fabric, spec["health"]), seed=spec.get("seed", 0))
    engine = spec.get("routing", "minhop")
    options = engine_options(engine, spec.get("routing_options"))
    report(0.1, f"routing {fabric.num_hosts:,} hosts and {fabric.num_switches:,} switches with {engine}")
    routing = route(fabric, engine, **options)
    jobs = _jobs(fabric, spec.get("jobs", []))
    bg = spec.get("background")
    try:
        background = Background(**bg) if bg else None
    except TypeError as exc:
        raise FabricEngineError(f"background: {exc}") from None
    policy = None
    if spec.get("policy"):
        from .policy import Policy

        policy = Policy.from_dict(fabric, spec["policy"])
    paths = None
    if spec.get("adaptive"):
        paths = getattr(routing, "adaptive_paths", None)
        if paths is None:
            raise FabricEngineError(f"adaptive: routing engine {routing.engine!r} has no adaptive path model")
    try:
        sharp = manager_from_spec(routing, spec.get("sharp"), jobs, sharp_tenants)
        storage = model_from_spec(routing, spec.get("storage"), jobs)
    except TypeError as exc:
        raise FabricEngineError(f"sharp/storage: {exc}") from None
    emulator = Emulator(routing, jobs, background, tick_s=spec.get("tick_s", 1.0), seed=spec.get("seed", 0),
                        policy=policy, paths=paths, xmit_wait_tick=spec.get("xmit_wait_tick", 0),
                        ecn_threshold=spec.get("ecn_threshold", 0.9), sharp=sharp, storage=storage, health=health,
                        congestion=spec.get("congestion", "maxmin"),
                        congestion_control=(None if spec.get("congestion_control") is None else
                                            CongestionControl.from_dict(spec["congestion_control"])),
                        progress=None if progress is None else lambda f, m: report(0.6 + 0.4 * f, m))
    report(1.0, f"ready: {len(emulator._jf.flows):,} flows of {len(jobs)} jobs")
    return emulator
