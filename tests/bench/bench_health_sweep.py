"""Link health per sweep at 32,768 GPUs, as the engine runs it (issue 37): the whole grading pass, the stores'
sizes and the engine's health memory.

The fabric is the 32,768-GPU rail-optimized fabric of the scale benches (:func:`fabric_engine.scenario.
loaded_rail_spec`'s topology: 98,304 cables, 196,608 cable ends). Two sources feed
:class:`ibweb.live.engine.health_publisher.HealthPublisher` as its runner would, one sweep every
:data:`SWEEP_S` seconds of readings' time (``IBWEB_HEALTH_INTERVAL_S``'s default: every sweep is graded):

* ``emulated``: :class:`fabric_engine.health.emulated.HealthModel` with the 256 faults of the Health page bench
  (:func:`tests.bench.bench_health_page.faults`: a quarter each of rising raw BER, hot modules, flapping cables
  and cable swaps), its readings sharing unchanged columns;
* ``telemetry``: every port read as the readers leave it (every field allocated, 4 lanes of raw BER, module
  readings with their thresholds, inventory), 1 % of ports at a warning or error BER (a new 1 % each sweep),
  0.05 % of ports going down per sweep and half of those down coming back, LinkDownedCounter rises; each sweep
  goes through the fabric's health readings store (:func:`ibweb.runtime.health_readings.put`, then the source's
  :class:`~ibweb.runtime.health_readings.Readings` re-read), so the publisher gets new arrays every sweep, and
  the publisher sees the sweep's port state too (as a telemetry source's tick gives it).

Timed per sweep (median and worst of ``--sweeps``, wall and CPU time: on a machine shared with other work the CPU
time is the steadier figure, both printed against the target as ``TARGET`` lines; never under tracemalloc, which
has a run of its own): ``HealthPublisher._step`` (downs observed, BER and modules graded, conditions and
long downs judged, the report, the ``/metrics`` series, the BER trend and the cable inventory built and written
to the cache), against the target of 100 ms, with its parts (each exclusive of the parts it calls); for
``telemetry`` also the readings store's write and re-read (informational: the collector's and the source's share
of a sweep). Sizes: every cache entry of the fabric's health (:mod:`ibweb.runtime.health`: report, per-port
series, trend, cables; :mod:`ibweb.runtime.health_readings`: the readings) as the cache stores them, pickled (on
Redis also Redis's ``MEMORY USAGE``). Memory: what the publisher keeps between sweeps (emulated: tracemalloc
over the sweeps, readings apart; telemetry-fed: its downs, conditions, swaps and alerts, counted) and the
readings of one sweep in the engine (their arrays' bytes, columns shared counted once: compact, as the source keeps
them, against the same readings as the store reads them back, every lane of every field allocated).

Targets: grading pass <= 100 ms per sweep (issue 37, median wall time); each cache entry of more than 1 MB
<= 64 MB; the publisher's memory and one sweep's readings <= 64 MB each. 64 MB is 341 bytes per port, about 42
float64 values: every value the readers give for a 4-lane port (3 BER, 4 lanes of raw BER, temperature,
voltage, 3 x 4 lanes of bias and power, the counters), and one thirty-second of the 2 GB the engine of this
fabric may use (bench_scale); a value written to and read from Redis each sweep stays well under Redis's
512 MB bulk limit.

Cache: Redis at ``BENCH_HEALTH_REDIS_URL`` (default ``redis://127.0.0.1:6379/14``, keys under the namespace
``ibweb-bench-health``, deleted after) when it answers, else the local-memory cache of the embedded setup.
Run: ``.venv/bin/python tests/bench/bench_health_sweep.py [--sweeps 20] [--telemetry-sweeps 10]`` (the first sweep
of a publisher builds every condition's alert: printed apart, and in the median as any other).
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
REDIS_URL = os.environ.get("BENCH_HEALTH_REDIS_URL", "redis://127.0.0.1:6379/14")


def _redis_answers(url: str) -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:  # no client, no server: the local-memory cache then
        return False


ON_REDIS = _redis_answers(REDIS_URL)
if ON_REDIS:
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ["IBWEB_REDIS_NAMESPACE"] = "ibweb-bench-health"
else:
    os.environ.pop("REDIS_URL", None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ibweb.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.core.cache import cache  # noqa: E402

import ibweb.live.engine.health_publisher as hp  # noqa: E402
from fabric_engine.health.conditions import HealthConditions  # noqa: E402
from fabric_engine.health.emulated import HealthModel  # noqa: E402
from fabric_engine.health.emulated_faults import faults_from_spec  # noqa: E402
from fabric_engine.health.records import FIELDS, HealthRecords, empty  # noqa: E402
from fabric_engine.scenario import build_fabric, loaded_rail_spec  # noqa: E402
from ibweb.runtime import health as runtime_store  # noqa: E402
from ibweb.runtime import health_readings  # noqa: E402
from ibweb.runtime.cache import shared_cache  # noqa: E402
from ibweb.runtime.health_ports import match_ports  # noqa: E402
from tests.bench.bench_health_page import faults  # noqa: E402
from tests.bench.targets import deployed_allocator, machine, target  # noqa: E402

GPUS = 32768
SWEEP_S = 10.0
FABRIC_ID = 990_037  # no row: the stores are keyed by this number only
T0 = 1.8e9
GRADING_MS = 100.0
ENTRY_MB = 64.0
MEMORY_MB = 64.0
MB = 2**20


# ------------------------------------------------------------------ telemetry readings
def telemetry_base(model: HealthModel, rng: np.random.Generator) -> HealthRecords:
    """Every port as the readers leave it: all fields allocated, 4 lanes read, modules with thresholds."""
    first = model.readings(0.0, T0)
    n = len(first)
    rec = empty(n, "bench")
    rec.guid[:], rec.name[:], rec.port[:] = first.guid, first.name, first.port
    for field in FIELDS:
        if field != "t" and first[field].strides and first[field].strides[0] != 0:  # given by the model
            rec[field][...] = first[field]
    rec["window_s"][:] = first["window_s"]
    lanes = rng.uniform(0.5, 2.0, (n, 4))
    rec["raw_ber_lane"][:, :4] = first["raw_ber"][:, None] * lanes
    rec["raw_errors_lane"][:, :4] = np.round(rec["raw_ber_lane"][:, :4] * 1e12)
    rec["sym_ber"][:] = 0.0  # mlxlink's "15E-255": no symbol error
    rec["hist"][:, :4] = rng.integers(0, 1000, (n, 4))
    rec["voltage"][:] = rng.normal(3.3, 0.03, n)
    for field in ("rx_power", "tx_power"):
        rec[field][:, :4] = rng.normal(0.0, 0.5, (n, 4))  # 4.8 sigma inside the warning range
        rec[f"{field}_th"][:] = [-10.4, -7.4, 2.4, 5.4]
    rec["bias"][:, :4] = rng.normal(7.0, 0.5, (n, 4))
    rec["bias_th"][:] = [2, 3, 13, 15]
    rec["temp_th"][:] = [-5, 0, 70, 80]
    rec["voltage_th"][:] = [2.97, 3.13, 3.47, 3.63]
    rec["fw"][:] = "47.120.0"
    rec["rev"][:] = "A3"
    rec["link_down"][:] = rng.integers(0, 3, n)
    rec.source[:] = "mlxlink"
    return rec


def telemetry_sweep(base: HealthRecords, k: int, rng: np.random.Generator) -> HealthRecords:
    """Sweep ``k``'s readings: a new 1 % of ports at a high BER, downs and returns, counter rises (``base`` keeps the
    up state and counters from sweep to sweep)."""
    n = len(base)
    rec = empty(n, "bench")
    rec.guid[:], rec.name[:], rec.port[:], rec.source[:] = base.guid, base.name, base.port, base.source
    for field in FIELDS:
        rec[field][...] = base[field]
    bad = np.arange(k * n // 100, (k + 1) * n // 100) % n
    rec["raw_ber"][bad] = 10.0 ** rng.uniform(-6, -3, bad.size)
    rec["raw_ber_lane"][bad, :4] = rec["raw_ber"][bad, None]
    rec["eff_ber"][bad] = rec["raw_ber"][bad] * 1e-3
    rec["sym_ber"][bad] = rec["eff_ber"][bad] * 1e-2
    up = base["up"]
    back = (up == 0) & (rng.random(n) < 0.5)
    down = (up == 1) & (rng.random(n) < 0.0005)
    flap = (up == 1) & ~down & (rng.random(n) < 0.0005)
    up[down], up[back] = 0, 1
    base["link_down"][:] = np.minimum(base["link_down"] + down + flap, 255)
    rec["up"][:], rec["link_down"][:] = up, base["link_down"]
    rec["temp"][:] = base["temp"] + rng.normal(0, 0.2, n)
    rec["t"][:] = T0 + SWEEP_S * k
    return rec


# ------------------------------------------------------------------ measuring
class Parts:
    """Time spent in the publisher's parts (each exclusive of the parts it calls), wrapped where ``_step`` and
    its callees look them up; parts a version of the publisher does not have are left out. Wall and CPU time
    (this thread's) apart: on a shared machine the CPU time is the steadier."""

    WRAPPED = ((hp.HealthKeeper, "observe", "downs observe"), (hp.HealthKeeper, "observe_sweep", "downs observe"),
               (hp, "grade_ports", "grade"),
               (hp, "port_health", "conditions"), (HealthConditions, "update", "conditions"),
               (HealthConditions, "downs_long", "conditions"), (hp, "build_report", "report"),
               (hp, "port_series", "series"), (hp, "keep_trend_and_cables", "trend+cables"),
               *((runtime_store, name, "store") for name in dir(runtime_store) if name.startswith("write")))
    KEYS = ("downs observe", "grade", "conditions", "report", "series", "trend+cables", "store")

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.spent_cpu: dict[str, float] = defaultdict(float)
        self._inner: list[list[float]] = []
        for owner, name, part in self.WRAPPED:
            if hasattr(owner, name):
                setattr(owner, name, self._timed(getattr(owner, name), part))

    def _timed(self, f, part: str):
        def timed(*args, **kwargs):
            self._inner.append([0.0, 0.0])
            start, start_cpu = time.perf_counter(), time.thread_time()
            try:
                return f(*args, **kwargs)
            finally:
                spent, spent_cpu = time.perf_counter() - start, time.thread_time() - start_cpu
                inner = self._inner.pop()
                self.spent[part] += spent - inner[0]
                self.spent_cpu[part] += spent_cpu - inner[1]
                if self._inner:
                    self._inner[-1][0] += spent
                    self._inner[-1][1] += spent_cpu
        return timed

    def take(self) -> tuple[dict[str, float], dict[str, float]]:
        out = (dict(self.spent), dict(self.spent_cpu))
        self.spent, self.spent_cpu = defaultdict(float), defaultdict(float)
        return out


def publisher() -> hp.HealthPublisher:
    return hp.HealthPublisher(FABRIC_ID, lambda: None, interval_s=SWEEP_S)


def step(pub: hp.HealthPublisher, fabric, rec: HealthRecords, swept: bool) -> None:
    """One tick of ``pub`` with the readings ``rec`` as its ``publish`` makes it (``swept``: a telemetry source's
    tick, with its sweep's time and no cable down); either form of ``_step``."""
    t = float(rec["t"][0])
    if "tick" not in inspect.signature(pub._step).parameters:
        pub._step(None, fabric, rec)
        return
    tick = SimpleNamespace(fabric=fabric, state=SimpleNamespace(t=t, alerts=[]), down=[], totals={})
    pub._step(None, tick, rec, t if swept else None)


def run(fabric, sweeps, parts: Parts, swept: bool = False) -> dict:
    """Feed ``sweeps`` (an iterable of readings) to a publisher; per sweep its ``_step`` and parts, in ms."""
    pub = publisher()
    steps, cpu, split, split_cpu = [], [], [], []
    for rec in sweeps:
        parts.take()
        start, start_cpu = time.perf_counter(), time.thread_time()
        step(pub, fabric, rec, swept)
        steps.append(1000 * (time.perf_counter() - start))
        cpu.append(1000 * (time.thread_time() - start_cpu))
        wall_parts, cpu_parts = parts.take()
        split.append({k: 1000 * v for k, v in wall_parts.items()})
        split_cpu.append({k: 1000 * v for k, v in cpu_parts.items()})
    return {"steps": steps, "cpu": cpu, "split": split, "split_cpu": split_cpu, "publisher": pub}


def records_bytes(rec: HealthRecords) -> int:
    """Bytes of the arrays of ``rec`` (each buffer once, broadcast views not counted, strings by their size)."""
    seen, total = set(), 0
    for a in [rec.guid, rec.name, rec.port, rec.source, *rec.data.values()]:
        base = a if a.base is None else a.base
        if id(base) in seen or (a.ndim and a.strides[0] == 0):
            continue
        seen.add(id(base))
        total += a.nbytes
        if a.dtype.kind == "O":
            total += sum(sys.getsizeof(s) for s in {id(s): s for s in a.reshape(-1).tolist()}.values())
    return total


def _stores() -> list:
    return [shared_cache()] + ([cache] if cache is not shared_cache() else [])


def _bench_keys(c) -> list[str]:
    """The keys (as stored) of the bench fabric's entries in the cache ``c``."""
    if ON_REDIS:
        client = c._cache.get_client(None, write=False)
        return sorted(k.decode() for k in client.scan_iter(match=f"*ibweb:*:{FABRIC_ID}*"))
    return sorted(k for k in c._cache if f":{FABRIC_ID}" in k)


def entry_sizes() -> dict[str, tuple[int, int | None]]:
    """Every cache entry of the bench fabric: its stored (pickled) bytes and, on Redis, its MEMORY USAGE."""
    out = {}
    for c in _stores():
        for key in _bench_keys(c):
            name = key.split("ibweb:", 1)[-1]
            if ON_REDIS:
                client = c._cache.get_client(None, write=False)
                out[name] = (int(client.strlen(key)), int(client.memory_usage(key) or 0))
            else:
                out[name] = (len(c._cache[key]), None)
    return out


def forget() -> None:
    for c in _stores():
        if ON_REDIS:
            client = c._cache.get_client(None, write=True)
            for key in _bench_keys(c):
                client.delete(key)
        else:
            for key in _bench_keys(c):
                c._cache.pop(key, None)
    try:
        from ibweb.live.health import keep
    except ImportError:  # a publisher without the BER trend and cable inventory
        return
    keep.forget(FABRIC_ID)


def held_mb(f) -> tuple[float, float, object]:
    """Memory ``f()`` leaves allocated and its peak (tracemalloc, MB), and its result."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = f()
        now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (now - before) / MB, (peak - before) / MB, result


def ms(values: list[float], cpu: list[float] | None = None) -> str:
    """Median and worst of ``values``; with ``cpu``, its median and both medians' ratios to the grading target."""
    med = statistics.median(values)
    if not cpu:
        return f"median {med:.1f} ms, worst {max(values):.1f} ms"
    c = statistics.median(cpu)
    return (f"median {med:.1f} ms, worst {max(values):.1f} ms, CPU median {c:.1f} ms (ratio to the target "
            f"{med / GRADING_MS:.2f}, CPU {c / GRADING_MS:.2f})")


def split_line(split: list[dict], total: list[float], what: str = "ms") -> str:
    keys = [k for k in Parts.KEYS if any(k in s for s in split)]
    med = {k: statistics.median(s.get(k, 0.0) for s in split) for k in keys}
    other = statistics.median(t - sum(s.values()) for s, t in zip(split, total, strict=True))
    return ", ".join(f"{k} {v:.1f}" for k, v in med.items()) + f", other {other:.1f} ({what}, medians)"


def splits(r: dict) -> str:
    """The parts of a run's grading passes, wall time then CPU time."""
    return (f"{split_line(r['split'], r['steps'], 'ms wall')}; {split_line(r['split_cpu'], r['cpu'], 'ms CPU')}")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--sweeps", type=int, default=20)
    p.add_argument("--telemetry-sweeps", type=int, default=10)
    a = p.parse_args()
    print(machine())
    print(deployed_allocator())
    print(f"cache: {'Redis at ' + REDIS_URL if ON_REDIS else 'local memory (no Redis answered at ' + REDIS_URL + ')'}")
    fabric = build_fabric(loaded_rail_spec(GPUS)["topology"])
    spec = faults(fabric)
    model_mb, _, model = held_mb(lambda: HealthModel(fabric, faults_from_spec(fabric, spec), seed=1))
    n = model.n
    print(f"{GPUS:,} GPUs: {fabric.num_links:,} cables, {n:,} cable ends; {len(spec)} faults; "
          f"emulated readings model {model_mb:.1f} MB")
    parts = Parts()
    forget()
    ok = True
    try:
        # ------------------------------------------------------------ emulated
        readings = [model.readings(SWEEP_S * k, T0 + SWEEP_S * k) for k in range(a.sweeps)]
        start = time.perf_counter()
        model.readings(SWEEP_S * a.sweeps, T0)
        source_ms = 1000 * (time.perf_counter() - start)
        emu = run(fabric, readings, parts)
        pub = emu["publisher"]
        report = runtime_store.read(FABRIC_ID)
        s = report["summary"]
        print(f"emulated, {a.sweeps} sweeps {SWEEP_S:g} s apart: grading pass {ms(emu['steps'], emu['cpu'])} "
              f"(the source's readings {source_ms:.1f} ms a sweep); {splits(emu)}; "
              f"grades {s['grades']}, {len(report['worst'])} worst ports, {len(report['swaps'])} swaps, "
              f"{len(pub.alerts)} alerts, {len(pub.keeper.downs.episodes()['slot'])} down episodes")
        ok &= target(f"health grading pass per sweep, {n:,} ports, emulated (median, wall)",
                     statistics.median(emu["steps"]), GRADING_MS, "ms")
        ok &= target(f"health grading pass per sweep, {n:,} ports, emulated (median, CPU)",
                     statistics.median(emu["cpu"]), GRADING_MS, "ms")
        forget()
        held, peak, _ = held_mb(lambda: run(fabric, readings, parts))
        cached = "" if ON_REDIS else ", the local-memory cache's entries included"
        print(f"emulated: publisher keeps {held:.1f} MB after {a.sweeps} sweeps (peak {peak:.1f} MB while grading; "
              f"tracemalloc{cached}); one sweep's readings {records_bytes(readings[-1]) / MB:.1f} MB (unchanged "
              f"columns shared with the model)")
        ok &= target(f"engine health memory at {n:,} ports, emulated (publisher's between sweeps)", held,
                     MEMORY_MB, "MB")
        ok &= sizes_ok("emulated", entry_sizes(), n)
        forget()
        # ------------------------------------------------------------ telemetry
        rng = np.random.default_rng(37)
        base = telemetry_base(model, rng)
        put_ms, read_ms = [], []

        def sweeps(source: health_readings.Readings, count: int, first: int = 1):
            for k in range(first, first + count):
                rec = telemetry_sweep(base, k, rng)
                start = time.perf_counter()
                health_readings.put(FABRIC_ID, rec)
                put_ms.append(1000 * (time.perf_counter() - start))
                start = time.perf_counter()
                source.refresh(FABRIC_ID, fabric)
                got = source.records(T0 + SWEEP_S * k)
                read_ms.append(1000 * (time.perf_counter() - start))
                del rec
                yield got

        source = health_readings.Readings()
        tel = run(fabric, sweeps(source, a.telemetry_sweeps), parts, swept=True)  # timed without tracemalloc
        pub = tel["publisher"]
        report = runtime_store.read(FABRIC_ID)
        s = report["summary"]
        rec_mb = records_bytes(source.records(T0)) / MB
        dense_mb = records_bytes(match_ports(fabric, health_readings.read(FABRIC_ID))[0]) / MB
        print(f"telemetry, {a.telemetry_sweeps} sweeps: grading pass {ms(tel['steps'], tel['cpu'])} (the first "
              f"{tel['steps'][0]:.0f} ms, CPU {tel['cpu'][0]:.0f} ms); "
              f"{splits(tel)}; grades {s['grades']}, {len(pub.alerts):,} alerts "
              f"({len(pub.keeper.conditions.conditions()):,} open conditions), "
              f"{len(pub.keeper.downs.episodes()['slot']):,} down episodes")
        print(f"telemetry: readings store write (health_readings.put) {ms(put_ms)}, source re-read "
              f"(Readings.refresh) {ms(read_ms)}: informational, the collector's and the source's share")
        print(f"telemetry: one sweep's readings in the engine {rec_mb:.1f} MB compact (records.compact, columns "
              f"shared with the sweep before), {dense_mb:.1f} MB as the store reads them back (every lane of "
              f"every field allocated)")
        ok &= target(f"health grading pass per sweep, {n:,} ports, telemetry-fed (median, wall)",
                     statistics.median(tel["steps"]), GRADING_MS, "ms")
        ok &= target(f"health grading pass per sweep, {n:,} ports, telemetry-fed (median, CPU)",
                     statistics.median(tel["cpu"]), GRADING_MS, "ms")
        ok &= sizes_ok("telemetry-fed", entry_sizes(), n)
        state_mb = keeper_mb(pub)
        print(f"telemetry-fed: publisher state (downs, conditions, swaps, alerts; arrays and strings) "
              f"{state_mb:.1f} MB ({state_mb * MB / n:.0f} bytes per port)")
        ok &= target(f"engine health memory at {n:,} ports, telemetry-fed (publisher's between sweeps)", state_mb,
                     MEMORY_MB, "MB")
        ok &= target(f"engine health memory at {n:,} ports, telemetry-fed (one sweep's readings)", rec_mb,
                     MEMORY_MB, "MB")
        del tel, pub, source
        forget()
        held_sweeps = min(3, a.telemetry_sweeps)
        held, peak, _ = held_mb(lambda: run(fabric, sweeps(health_readings.Readings(), held_sweeps), parts,
                                            swept=True))
        print(f"telemetry: publisher and source keep {held:.0f} MB after {held_sweeps} sweeps (peak {peak:.0f} MB), "
              f"the readings included (tracemalloc, a run of its own after the timed one)")
    finally:
        forget()
    return 0 if ok else 1


def sizes_ok(case: str, sizes: dict[str, tuple[int, int | None]], n: int) -> bool:
    """Print every cache entry of the bench fabric; a target line for each of more than 1 MB."""
    ok = True
    for key, (stored, used) in sorted(sizes.items()):
        redis_part = f", Redis MEMORY USAGE {used / MB:.2f} MB" if used is not None else ""
        print(f"{case}: store entry {key}: {stored / MB:.2f} MB pickled ({stored / n:.1f} bytes per port, ratio to "
              f"the target {stored / MB / ENTRY_MB:.2f}){redis_part}")
        if stored > MB:
            what = key.replace(f":{FABRIC_ID}", ":<fabric>")
            ok &= target(f"health store entry {what} at {n:,} ports, {case}", stored / MB, ENTRY_MB, "MB")
    return ok


def keeper_mb(pub: hp.HealthPublisher) -> float:
    """Bytes of the arrays a publisher keeps between sweeps (its downs tracker's and conditions' state)."""
    seen, total = set(), 0

    def add(x) -> None:
        nonlocal total
        if isinstance(x, np.ndarray):
            base = x if x.base is None else x.base
            if id(base) not in seen:
                seen.add(id(base))
                total += base.nbytes if isinstance(base, np.ndarray) else x.nbytes
        elif isinstance(x, dict):
            for v in x.values():
                add(v)
        elif isinstance(x, list | tuple):
            total += sys.getsizeof(x)
            for v in x:
                add(v)
        elif hasattr(x, "__dict__"):
            for v in vars(x).values():
                add(v)
        elif isinstance(x, str):
            total += sys.getsizeof(x)

    keeper = pub.keeper
    add(keeper.downs)
    for name, value in vars(keeper.conditions).items():
        if name != "names":  # the fabric's node names: the fabric's, not the publisher's
            add(value)
    add(keeper.swaps)
    add(pub.alerts)
    return total / MB


if __name__ == "__main__":
    sys.exit(main())
