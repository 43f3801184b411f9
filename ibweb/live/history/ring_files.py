"""The embedded default's history ring on disk, so that a restart keeps the recent history.

Without Redis the ring (:mod:`ibweb.live.history.ring`) lives in a local-memory cache that a restart
empties. :class:`RingFiles` mirrors it under ``IBWEB_HISTORY_DIR`` (default ``<IBWEB_VAR_DIR>/history``),
one directory per fabric::

    <fabric id>/index.json        the ring's index (as the cache holds it)
    <fabric id>/<seq>.f16         one tick: its chunks' bytes one after the other
    <fabric id>/topo-<version>    a topology's encoded link identities

The writer hands each tick over as it records it; ticks are written at most every
:data:`FLUSH_S` seconds, and those not written yet at the server's stop (SIGTERM included;
:func:`ibweb.live.history.ring.flush_all`): only a crash loses the last seconds (and a restarted
engine then numbers its ticks after the last one written). Every file is written through a temporary
file and an atomic rename, the index last, one write at a time. Files the index no longer names are
deleted, so the directory holds what the ring holds: bounded by its ``KEEP_TICKS`` and ``BUDGET_BYTES``.
:meth:`RingFiles.load` reads every fabric's ring back at start; a tick whose file is missing or
of the wrong size (a crash between writes) is left out of the index.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import shutil
import threading
import time
from pathlib import Path

__all__ = ["FLUSH_S", "RingFiles", "Loaded"]

log = logging.getLogger(__name__)

#: Seconds between writes of a fabric's new ticks.
FLUSH_S = 3.0

_SAFE = re.compile(r"[0-9A-Za-z._-]{1,64}")  # a topology version usable as a file name

#: ``(index, {seq: [chunk bytes]}, {version: topology blob})`` of one fabric.
Loaded = tuple[dict, dict[int, list[bytes]], dict[str, bytes]]


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


class RingFiles:
    """The rings of every fabric under ``root`` (created when first written)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._pending: dict[int, dict[int, bytes]] = {}  # fabric -> seq -> tick bytes not written yet
        self._flushed: dict[int, float] = {}
        self._lock = threading.Lock()  # guards the two dicts
        # One write at a time: two writes of a fabric (an exit's and a cancelled tick's) share its temporary files.
        self._writing = threading.Lock()

    def _dir(self, fabric_id: int) -> Path:
        return self.root / str(int(fabric_id))

    def add(self, fabric_id: int, seq: int, chunks: list[bytes]) -> None:
        """Keep tick ``seq`` (its chunks, in order) for the next :meth:`flush`."""
        data = b"".join(chunks)
        with self._lock:
            self._pending.setdefault(fabric_id, {})[int(seq)] = data

    def pending(self) -> list[int]:
        """The fabrics with ticks not written yet."""
        with self._lock:
            return [f for f, ticks in self._pending.items() if ticks]

    def due(self, fabric_id: int, now: float | None = None) -> bool:
        """Whether the fabric's pending ticks should be written now (:data:`FLUSH_S` since the last write)."""
        now = time.monotonic() if now is None else now
        return bool(self._pending.get(fabric_id)) and now - self._flushed.get(fabric_id, -1e18) >= FLUSH_S

    def flush(self, fabric_id: int, index: dict, topologies: dict[str, bytes | None]) -> None:
        """Write the pending ticks the ``index`` still holds, the topologies its runs use (``topologies``:
        version -> blob, None when not at hand: kept if on disk), then the index; delete what it no longer names."""
        with self._writing:
            self._write_ring(fabric_id, index, topologies)

    def _write_ring(self, fabric_id: int, index: dict, topologies: dict[str, bytes | None]) -> None:
        kept = {int(s) for s in index["seq"]}
        newest = max(kept, default=0)
        with self._lock:
            pending = self._pending.pop(fabric_id, {})
            later = {s: d for s, d in pending.items() if s > newest}  # recorded after ``index`` was read: next time
            if later:
                self._pending[fabric_id] = later
            self._flushed[fabric_id] = time.monotonic()
        folder = self._dir(fabric_id)
        folder.mkdir(parents=True, exist_ok=True)
        for seq, data in pending.items():  # loop over a few seconds of ticks
            if seq in kept:
                _write(folder / f"{seq}.f16", data)
        topologies = {v: b for v, b in topologies.items() if _SAFE.fullmatch(v)}
        for version, blob in topologies.items():
            path = folder / f"topo-{version}"
            if blob is not None and not path.exists():
                _write(path, blob)
        _write(folder / "index.json", json.dumps(index, separators=(",", ":")).encode())
        names = {f"{s}.f16" for s in kept} | {f"topo-{v}" for v in topologies} | {"index.json"}
        for path in folder.iterdir():  # the ring's files plus the few it just dropped
            if path.name not in names:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    def lacks(self, fabric_id: int, versions: list[str]) -> list[str]:
        """The topology versions among ``versions`` not on disk yet (their blobs are needed by :meth:`flush`)."""
        folder = self._dir(fabric_id)
        return [v for v in versions if not (folder / f"topo-{v}").exists()]

    def drop(self, fabric_id: int) -> None:
        """Forget a fabric's ring on disk and its pending ticks."""
        with self._writing:
            with self._lock:
                self._pending.pop(fabric_id, None)
                self._flushed.pop(fabric_id, None)
            shutil.rmtree(self._dir(fabric_id), ignore_errors=True)

    def load(self, chunk_bytes) -> dict[int, Loaded]:
        """Every fabric's ring on disk. ``chunk_bytes(n)``: the byte size of each chunk of a tick of ``n``
        directed links (a list). A fabric whose index cannot be read is skipped (logged)."""
        out: dict[int, Loaded] = {}
        if not self.root.is_dir():
            return out
        for folder in sorted(self.root.iterdir()):  # one per fabric
            if not folder.name.isdigit():
                continue
            try:
                out[int(folder.name)] = self._load_one(folder, chunk_bytes)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("history on disk: %s skipped: %s", folder / "index.json", exc)
        return out

    @staticmethod
    def _load_one(folder: Path, chunk_bytes) -> Loaded:
        index = json.loads((folder / "index.json").read_text())
        runs = index.get("runs") or [[index["seq"][0], None, index["n"]]] if index["seq"] else []
        first = [r[0] for r in runs]
        ticks: dict[int, list[bytes]] = {}
        keep = []
        for i, seq in enumerate(index["seq"]):  # loop over the ring's ticks (hundreds), once at start
            run = max((k for k, s in enumerate(first) if s <= seq), default=0)
            sizes = chunk_bytes(runs[run][2])
            path = folder / f"{seq}.f16"
            data = path.read_bytes() if path.exists() else b""
            if len(data) != sum(sizes):
                continue
            bounds = [0, *itertools.accumulate(sizes)]
            ticks[seq] = [data[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
            keep.append(i)
        index = {**index, "seq": [index["seq"][i] for i in keep], "t": [index["t"][i] for i in keep]}
        topos = {r[1]: (folder / f"topo-{r[1]}").read_bytes() for r in runs
                 if r[1] is not None and (folder / f"topo-{r[1]}").exists()}
        return index, ticks, topos
