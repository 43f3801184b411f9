"""A fabric's port identities and their slots in the embedded store, for vectorized lookups."""

from __future__ import annotations

import numpy as np

__all__ = ["PortSlots"]


class PortSlots:
    """Port identities (:data:`~.series.PORT_ID`) and their slots, sorted: GUIDs ranked, then one int64 code per
    port (GUID rank x 65536 + port number). ``keys``, ``slots`` and ``codes`` in code order; ``count`` ports."""

    def __init__(self, keys: np.ndarray, slots: np.ndarray) -> None:
        self.guids = np.unique(keys["guid"])
        codes = self._codes(keys)
        order = np.argsort(codes, kind="stable")
        self.keys, self.slots, self.codes = keys[order], slots[order], codes[order]
        self.count = len(keys)
        self.last: tuple[bytes, np.ndarray] | None = None  # the previous sweep's ports and slots

    def _codes(self, keys: np.ndarray) -> np.ndarray:
        rank = np.searchsorted(self.guids, keys["guid"])
        known = rank < len(self.guids)
        known[known] = self.guids[rank[known]] == keys["guid"][known]
        return np.where(known, rank.astype(np.int64) * 65536 + keys["port"], -1)

    def find(self, query: np.ndarray) -> np.ndarray:
        """Slot of each :data:`~.series.PORT_ID` of ``query``, -1 where unknown (the previous answer kept while a
        sweep's ports stay the same)."""
        if not self.count:
            return np.full(len(query), -1, dtype=np.int64)
        fingerprint = query.tobytes()
        if self.last is not None and self.last[0] == fingerprint:
            return self.last[1].copy()
        codes = self._codes(query)
        pos = np.minimum(np.searchsorted(self.codes, codes), self.count - 1)
        slots = np.where((codes >= 0) & (self.codes[pos] == codes), self.slots[pos], -1).astype(np.int64)
        if (slots >= 0).all():
            self.last = (fingerprint, slots.copy())
        return slots
