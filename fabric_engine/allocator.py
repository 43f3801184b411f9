"""Keep freed memory in the process: the engine's numpy temporaries are reused, not faulted in again.

The vectorised engines allocate many short-lived arrays of a few hundred kB to a few MB (``switches x
destinations`` tables, candidate masks). glibc's malloc returns the top of its heap to the kernel once
more than ``M_TRIM_THRESHOLD`` of it is free, so the next array of that size is faulted in again, one
zeroed page at a time. Measured on a 1024-host 3-level fat tree (``tests/fabric_engine/test_allocator.py``
counts the faults; ``make bench`` times routing): ``minhop`` took 3,556 page faults and 8 ms of system
time per call of 26 ms, ``ftree`` 1,662 faults and 5 ms. With :func:`keep_freed_memory` (a trim
threshold of :data:`TRIM_BYTES`, a top pad of :data:`PAD_BYTES`) neither faults once warm.

Setting either turns off glibc's sliding mmap threshold (it otherwise rises to the size of the largest block freed,
up to 32 MiB on 64-bit), so every block over 128 kB would be mapped and faulted in afresh at each allocation: the
threshold is set to :data:`MMAP_BYTES`, the sliding threshold's own ceiling. Measured on the credit model's tick at
32,768 GPUs (``tests/bench/bench_credit_tick.py``, most of its arrays 17-21 MB): 41,000 page faults and 150 ms of
system time a tick with the trim threshold alone, 12,000 and 35 ms with the mmap threshold too (none since the
credit solve keeps its working memory between ticks, ``backpressure.Scratch``).

The cost is that up to :data:`TRIM_BYTES` of freed memory stays resident. Processes that run the engine
call it once at start (the CLI, and every Django process through ``ibweb.fabrics``); an operator's own
``MALLOC_TRIM_THRESHOLD_`` / ``MALLOC_TOP_PAD_`` / ``MALLOC_MMAP_THRESHOLD_`` (or ``GLIBC_TUNABLES``) settings are
left alone.

The other way, :func:`release_freed_memory`: an engine process that drops a whole fabric (a hand-over to
another process) gives what it freed back at once. Measured on two 16,384-host planes built and stepped in one
process, then dropped: 252 MiB resident, 231 MiB after dropping them, 151 MiB after ``malloc_trim(0)``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["TRIM_BYTES", "PAD_BYTES", "MMAP_BYTES", "keep_freed_memory", "release_freed_memory"]

#: Freed memory at the top of the heap kept for reuse, bytes.
TRIM_BYTES = 128 << 20
#: Extra memory asked of the kernel whenever the heap grows, bytes (address space; resident once used).
PAD_BYTES = 32 << 20
#: Blocks up to this size come from the heap (reused once freed); larger ones are mapped, bytes.
MMAP_BYTES = 32 << 20

_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
_OPERATOR_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_")


def keep_freed_memory(trim_bytes: int = TRIM_BYTES, pad_bytes: int = PAD_BYTES, mmap_bytes: int = MMAP_BYTES) -> bool:
    """Set glibc's trim threshold, top pad and mmap threshold for this process; False where that is not possible or
    not wanted.

    Not wanted: the operator set any of them through the environment. Not possible: no glibc (musl, macOS).
    """
    if any(name in os.environ for name in _OPERATOR_SETTINGS) or "malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return (bool(mallopt(_M_TRIM_THRESHOLD, int(trim_bytes))) and bool(mallopt(_M_TOP_PAD, int(pad_bytes)))
            and bool(mallopt(_M_MMAP_THRESHOLD, int(mmap_bytes))))


def release_freed_memory() -> bool:
    """Give the freed heap back to the kernel now (glibc's ``malloc_trim(0)``); False where that is not possible."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is None:
        return False
    trim.argtypes, trim.restype = (ctypes.c_size_t,), ctypes.c_int
    trim(0)
    return True


def _libc() -> ctypes.CDLL | None:
    """The C library, or None where it cannot be loaded."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None
