"""Per-job collective figures in the terms of nccl-tests: algorithm bandwidth and bus bandwidth.

nccl-tests (``doc/PERFORMANCE.md``, "Performance reported by NCCL tests") reports two
bandwidths in GB/s (10^9 bytes per second) for an operation on ``S`` bytes taking ``t``:

* ``algbw = S / t``;
* ``busbw = algbw * factor``, the factor making the figure comparable with the
  hardware's peak whatever the number of ranks ``n``: all-reduce ``2(n-1)/n``;
  reduce-scatter, all-gather and all-to-all ``(n-1)/n``; broadcast, reduce and
  send/receive ``1``; all-reduce with in-network reduction ``(n-1)/(n+1)``
  (``src/all_reduce.cu`` applies it when ``NCCL_ALGO`` is ``NVLS`` or ``NVLSTREE``;
  here it is used for SHARP all-reduce, the network's in-network reduction).

For an emulated job ``S`` and ``t`` are known (its buffer and the duration of its
collective). For a job seen only through counters they are not, but what each rank
puts on the wire per byte of ``S`` is: ``2(n-1)/n`` for an all-reduce that uses
point-to-point transfers, ``(n-1)/n`` for all-gather, reduce-scatter and all-to-all,
``1`` with in-network reduction (each rank sends its buffer once to the switches).
So a rank sending at ``R`` bytes/s runs ``algbw = R / wire``. Counters average over
the whole interval, compute phases included, so the observed figures are the
interval's average (a lower bound of the figures while communicating).

>>> round(bus_factor("all_reduce", 8), 4), round(bus_factor("all_gather", 8), 4)
(1.75, 0.875)
>>> figures_from_time("all_reduce", 8, nbytes=8e9, seconds=1.0)
{'collective': 'all_reduce', 'ranks': 8, 'algbw_GBps': 8.0, 'busbw_GBps': 14.0}
"""

from __future__ import annotations

__all__ = ["COLLECTIVES", "COLLECTIVE_OF_PATTERN", "bus_factor", "wire_factor", "figures_from_time",
           "figures_from_rate"]

#: Collectives nccl-tests measures, by the names used here.
COLLECTIVES = ("all_reduce", "all_reduce_in_network", "reduce_scatter", "all_gather", "all_to_all", "broadcast",
               "reduce", "sendrecv")
#: The collective each workload pattern stands for.
COLLECTIVE_OF_PATTERN = {
    "ring_allreduce": "all_reduce", "tree_allreduce": "all_reduce", "hierarchical_allreduce": "all_reduce",
    "sharp_allreduce": "all_reduce_in_network", "all_to_all": "all_to_all", "pipeline": "sendrecv",
    "uniform_random": "sendrecv",
}


def _check(collective: str, n: int) -> None:
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; known: {', '.join(COLLECTIVES)}")
    if n < 1:
        raise ValueError(f"{n} ranks: need at least one")


def bus_factor(collective: str, n: int) -> float:
    """nccl-tests' ``busbw / algbw`` for ``collective`` on ``n`` ranks (``doc/PERFORMANCE.md``, "Summary")."""
    _check(collective, n)
    if collective == "all_reduce":
        return 2.0 * (n - 1) / n
    if collective == "all_reduce_in_network":
        return (n - 1) / (n + 1)
    if collective in ("reduce_scatter", "all_gather", "all_to_all"):
        return (n - 1) / n
    return 1.0


def wire_factor(collective: str, n: int) -> float:
    """Bytes each rank sends to the network per byte of ``S`` (see the module docstring)."""
    _check(collective, n)
    if collective == "all_reduce":
        return 2.0 * (n - 1) / n
    if collective in ("reduce_scatter", "all_gather", "all_to_all"):
        return (n - 1) / n
    return 1.0


def _round(x: float) -> float:
    return round(float(x), 4)


def figures_from_time(collective: str, n: int, *, nbytes: float, seconds: float) -> dict:
    """``algbw`` and ``busbw`` (GB/s) of one collective of ``nbytes`` that took ``seconds`` (an emulated job)."""
    alg = nbytes / seconds / 1e9 if seconds > 0 else 0.0
    return {"collective": collective, "ranks": n, "algbw_GBps": _round(alg),
            "busbw_GBps": _round(alg * bus_factor(collective, n))}


def figures_from_rate(collective: str, n: int, *, rank_gbps: float) -> dict:
    """``algbw`` and ``busbw`` (GB/s) from what one rank sends, ``rank_gbps`` in Gb/s (a job seen by its counters)."""
    alg = rank_gbps / 8.0 / wire_factor(collective, n) if n > 1 else 0.0
    return {"collective": collective, "ranks": n, "algbw_GBps": _round(alg),
            "busbw_GBps": _round(alg * bus_factor(collective, n))}
