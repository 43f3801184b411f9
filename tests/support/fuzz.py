"""Hypothesis strategies and a harness for fuzzing the readers (issue 14).

:func:`mutated` turns a real file into a broken one the way corruption, truncation,
hand edits and hostile writers do: spans cut, lines duplicated or swapped, bytes
replaced, long runs inserted, and numbers replaced by the values that matter at the
edges of a subnet (0, 254, 255, 0xBFFF, 0xC000, 2**31, 2**64, 10**8, ...).
:func:`check` runs a reader on one input under tracemalloc and asserts that only the
engine's own errors come out and that the memory it allocated stays under a bound.

The number of examples is modest by default so ``make test`` stays fast; set
``IBWEB_FUZZ=deep`` for a long run (``IBWEB_FUZZ=deep pytest tests/fabric_engine/test_fuzz_parsers.py``).
Runs are derandomized, so a failure repeats.
"""

from __future__ import annotations

import os
import re
import tracemalloc
from collections.abc import Callable

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from fabric_engine.errors import FabricEngineError

__all__ = ["FUZZ", "EDGE_NUMBERS", "SAMPLE_RECORDS", "mutated", "check"]

settings.register_profile("fuzz", max_examples=120, derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("fuzz-deep", max_examples=5000, derandomize=False, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: The settings of every fuzz test.
FUZZ = settings.get_profile("fuzz-deep" if os.environ.get("IBWEB_FUZZ") == "deep" else "fuzz")

#: Numbers at the edges of what a subnet, a port number or an integer type holds.
EDGE_NUMBERS = (0, 1, 2, 36, 64, 254, 255, 256, 4096, 49151, 49152, 65535, 65536, 2**31 - 1, 2**31, 2**32,
                2**63, 2**64, 2**64 + 1, 10**8, 10**30)
_RUN_CHARS = ' ."(:/0a[]#=-\t'
_NUMBER = re.compile(r"\d+")


_RECORD_VALUES = st.sampled_from(EDGE_NUMBERS) | st.integers() | st.floats() | st.text(max_size=25) | st.none() | \
    st.booleans()
#: Lists of pushed sample records: the push API's shape, with any value anywhere.
SAMPLE_RECORDS = st.lists(st.fixed_dictionaries(
    {"lid": _RECORD_VALUES, "port": _RECORD_VALUES, "t": _RECORD_VALUES},
    optional={"extended": _RECORD_VALUES, "counters": st.dictionaries(
        st.sampled_from(("PortXmitData", "PortRcvData", "SymbolErrorCounter", "PortMultiCastXmitPkts", "Bogus")) |
        st.text(max_size=10), _RECORD_VALUES, max_size=4) | _RECORD_VALUES}), max_size=6) | \
    st.lists(_RECORD_VALUES, max_size=3)


@st.composite
def mutated(draw, corpus: dict[str, str], max_ops: int = 4) -> str:
    """A real text of ``corpus`` with 1..``max_ops`` random mutations."""
    text = corpus[draw(st.sampled_from(sorted(corpus)))]
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(("cut", "insert", "run", "number", "duplicate", "swap", "truncate", "replace")))
        n = len(text)
        at = draw(st.integers(0, max(n - 1, 0)))
        if op == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 200)):]
        elif op == "insert":
            text = text[:at] + draw(st.text(max_size=40)) + text[at:]
        elif op == "run":
            text = text[:at] + draw(st.sampled_from(_RUN_CHARS)) * draw(st.sampled_from((64, 5000, 100_000))) + \
                text[at:]
        elif op == "number":
            spans = [m.span() for m in _NUMBER.finditer(text)]
            if spans:
                a, b = spans[draw(st.integers(0, len(spans) - 1))]
                value = draw(st.sampled_from(EDGE_NUMBERS) | st.integers(-10, 2**70) | st.just("9" * 5000))
                text = text[:a] + str(value) + text[b:]
        elif op in ("duplicate", "swap"):
            lines = text.splitlines(keepends=True)
            if lines:
                i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                if op == "duplicate":
                    lines.insert(j, lines[i])
                else:
                    lines[i], lines[j] = lines[j], lines[i]
                text = "".join(lines)
        elif op == "truncate":
            text = text[:at]
        else:
            text = text[:at] + draw(st.characters()) + text[at + 1:]
    return text


def check(read: Callable[[], object], limit_bytes: int) -> object:
    """Run ``read()``; only :class:`FabricEngineError` may come out, and it may allocate at most ``limit_bytes``.

    Returns what ``read`` returned, or the error it raised.
    """
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            out = read()
        except FabricEngineError as exc:
            out = exc
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        if started:
            tracemalloc.stop()
    assert peak <= limit_bytes, f"allocated {peak:,} bytes, more than {limit_bytes:,}"
    return out
