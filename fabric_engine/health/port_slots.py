"""Per-port columns of the health trackers: input columns checked by name, and port identities (GUID, port
number) kept as dense slot numbers, found with ``searchsorted`` (never a Python loop over ports)."""

from __future__ import annotations

import numpy as np

__all__ = ["column", "PortSlots"]


def column(name: str, value, n: int | None, kind: str) -> np.ndarray:
    """``value`` as a 1-D array of length ``n`` (of kind ``i``nteger, ``b``oolean/int state or ``f``loat)."""
    arr = np.asarray(value)
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
        want = f"({n},)" if n is not None else "one dimension"
        raise ValueError(f"{name}: shape {arr.shape}, expected {want}")
    if kind == "i" and arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: dtype {arr.dtype}, expected integers")
    if kind == "f" and arr.dtype.kind not in "iuf":
        raise ValueError(f"{name}: dtype {arr.dtype}, expected numbers")
    if kind == "b" and arr.dtype.kind not in "biu":
        raise ValueError(f"{name}: dtype {arr.dtype}, expected booleans or -1/0/1")
    return arr


class PortSlots:
    """Port identities (GUID, port number) to dense slot numbers; lookups vectorized with ``searchsorted``."""

    def __init__(self, remember: bool = True) -> None:
        #: keep the last lookup of many ports (a copy of them, ~10 bytes a port) for the same ports looked up again:
        #: worth it where every grading looks the same ports up (conditions), not where few are after the first
        self.remember = remember
        self.guid = np.zeros(0, np.uint64)
        self.port = np.zeros(0, np.int64)
        self._guids = np.zeros(0, np.uint64)  # sorted unique GUIDs
        self._keys = np.zeros(0, np.int64)  # sorted (GUID rank * 256 + port) of the slots
        self._order = np.zeros(0, np.int64)  # slot of each sorted key
        self._last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._found: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # the last find's

    def __len__(self) -> int:
        return int(self.guid.size)

    def _rank(self, guid: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._guids, guid).astype(np.int64)

    def _reindex(self) -> None:
        keys = self._rank(self.guid) * 256 + self.port
        self._order = np.argsort(keys, kind="stable")
        self._keys = keys[self._order]

    def find(self, guid: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Slot of each (guid, port), -1 for an identity never observed."""
        if not self._keys.size:
            return np.full(np.asarray(guid).size, -1, np.int64)
        guid, port = np.asarray(guid), np.asarray(port)
        if self._found_again(guid, port):  # the same ports as the last find, no identity added since (a grading's)
            return self._found[3].astype(np.int64)
        rank = np.minimum(self._rank(guid), self._guids.size - 1)
        keys = rank * 256 + port.astype(np.int64)
        pos = np.minimum(np.searchsorted(self._keys, keys), self._keys.size - 1)
        out = np.where((self._guids[rank] == guid) & (self._keys[pos] == keys), self._order[pos], -1)
        if out.size >= 4096 and guid.dtype == np.uint64 and port.min() >= 0 and port.max() <= 255:
            self._found = (guid.copy(), port.astype(np.uint8), self._keys, out.astype(np.int32))  # worth keeping
        return out

    def _found_again(self, guid: np.ndarray, port: np.ndarray) -> bool:
        last = self._found
        return (last is not None and last[2] is self._keys and guid.dtype == np.uint64 and guid.shape == last[0].shape
                and port.shape == last[1].shape and np.array_equal(guid, last[0]) and np.array_equal(port, last[1]))

    def lookup(self, guid: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Slot of each (guid, port), new identities given new slots; a repeated identity is a ValueError.

        Only the GUIDs not seen before are sorted in (none, mostly): a lookup costs two ``searchsorted`` of its
        rows. The last lookup of many rows (a grading's, a sweep's) is kept, so the same ports in the same order
        again cost one comparison; lookups of a few rows (the downs of a sweep) do not replace it."""
        last = self._last
        if last is not None and last[0].shape == np.shape(guid) and np.array_equal(guid, last[0]) and np.array_equal(
                port, last[1]):
            return last[2]  # the same ports in the same order as the last sweep: the usual case
        guid, port = np.asarray(guid), np.asarray(port)
        if self._guids.size:
            rank = np.minimum(self._rank(guid), self._guids.size - 1)
            known = self._guids[rank] == guid
        else:
            rank, known = np.zeros(guid.size, np.int64), np.zeros(guid.size, bool)
        if not known.all():  # GUIDs never seen: sorted in, the slots' keys made again
            self._guids = np.union1d(self._guids, np.unique(guid[~known]).astype(np.uint64))
            self._reindex()
            rank = self._rank(guid)
        keys = rank * 256 + port
        pos = np.minimum(np.searchsorted(self._keys, keys), max(self._keys.size - 1, 0))
        found = (self._keys[pos] == keys) if self._keys.size else np.zeros(keys.size, bool)
        slots = np.where(found, self._order[pos] if self._keys.size else 0, -1)
        if not found.all():
            fresh, first, inverse = np.unique(keys[~found], return_index=True, return_inverse=True)
            base = len(self)
            slots[~found] = base + inverse
            idx = np.flatnonzero(~found)[first]
            self.guid = np.concatenate([self.guid, guid[idx].astype(np.uint64)])
            self.port = np.concatenate([self.port, port[idx].astype(np.int64)])
            self._reindex()
        if np.bincount(slots, minlength=1).max() > 1:
            raise ValueError("guid/port: a port identity appears twice in one observation")
        if self.remember and (slots.size >= 4096 or last is None):
            small = port.size and port.min() >= 0 and port.max() <= 255  # kept as bytes: a copy per port
            self._last = (guid.copy(), port.astype(np.uint8) if small else port.copy(), slots)
        return slots
