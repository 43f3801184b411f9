"""Directed links by what they connect, not by their index: the identity that follows a cable across topologies.

A directed-link index (``0..2L-1`` of :class:`fabric_engine.topology.Fabric`) changes meaning with every
cabling change. A directed link's **identity** does not: ``(tx_guid, tx_port, rx_guid, rx_port)``, the node
GUID and port number of its transmitting end and of its receiving end (:data:`IDENTITY`). In one topology a
transmitting port ``(tx_guid, tx_port)`` has at most one directed link, so the port alone also finds it
(:meth:`LinkIdentities.find_ports`); a port whose peer changed (re-cabled) keeps its port key and gets
another identity.

Examples
--------
>>> from fabric_engine.topology.generate import fat_tree
>>> f = fat_tree(hosts=8, radix=4)
>>> ids = LinkIdentities.of(f)
>>> int(ids.find(ids.keys[[3, 20]])[0]), int(ids.find(ids.keys[[3, 20]])[1])
(3, 20)
>>> int(LinkIdentities.of(f.without_links([0])).find(ids.keys[[0]])[0])
-1
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fabric_engine.topology import KIND_HOST, Fabric
from fabric_engine.topology.guid_index import GuidIndex

__all__ = ["IDENTITY", "PORT", "identities", "locate", "LinkIdentities", "port_key", "guid_text"]

#: A directed link's identity: transmitting node GUID and port, receiving node GUID and port.
IDENTITY = np.dtype([("tx_guid", "<u8"), ("tx_port", "<u2"), ("rx_guid", "<u8"), ("rx_port", "<u2")])
#: A transmitting port: node GUID and port number.
PORT = np.dtype([("tx_guid", "<u8"), ("tx_port", "<u2")])


def identities(f: Fabric) -> np.ndarray:
    """Identity of every directed link of ``f``, :data:`IDENTITY` ``[2L]`` in directed-link order."""
    out = np.empty(2 * f.num_links, dtype=IDENTITY)
    out["tx_guid"], out["tx_port"] = f.guid[f.dl_src], f.dl_src_port
    out["rx_guid"], out["rx_port"] = f.guid[f.dl_dst], f.dl_dst_port
    return out


def _ports(keys: np.ndarray) -> np.ndarray:
    out = np.empty(len(keys), dtype=PORT)
    out["tx_guid"], out["tx_port"] = keys["tx_guid"], keys["tx_port"]
    return out


def locate(table: np.ndarray, query: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Position in ``table`` of each key of ``query`` (-1 where absent), int64 ``[K]``.

    ``table`` and ``query`` are both :data:`IDENTITY` or both :data:`PORT` arrays; ``order`` is
    ``table``'s lexicographic sort order (computed when not given).
    """
    if order is None:
        order = np.lexsort([table[name] for name in reversed(table.dtype.names)])
    query = np.asarray(query, dtype=table.dtype)
    if not len(table):
        return np.full(len(query), -1, dtype=np.int64)
    ordered = table[order]
    pos = np.minimum(np.searchsorted(ordered, query), len(ordered) - 1)
    return np.where(ordered[pos] == query, order[pos], -1).astype(np.int64)


def port_key(guid: int, port: int) -> np.ndarray:
    """The :data:`PORT` key ``[1]`` of port ``port`` of the node with GUID ``guid``."""
    return np.array([(guid, port)], dtype=PORT)


def guid_text(guid: int) -> str:
    """A GUID as the API writes it: ``0x`` and 16 hex digits."""
    return f"0x{int(guid):016x}"


@dataclass(frozen=True, eq=False)
class LinkIdentities:
    """The directed links of one topology by identity, and its nodes (for names and redaction).

    ``keys`` :data:`IDENTITY` ``[2L]`` in directed-link order; ``node_guid`` uint64, ``node_host`` bool,
    ``node_name`` object (str), each ``[N]`` in node order.
    """

    keys: np.ndarray
    node_guid: np.ndarray
    node_host: np.ndarray
    node_name: np.ndarray

    @classmethod
    def of(cls, f: Fabric) -> LinkIdentities:
        return cls(identities(f), np.asarray(f.guid, np.uint64), f.kind == KIND_HOST, np.asarray(f.node_name))

    @property
    def num_links(self) -> int:
        """Directed links, ``2L``."""
        return len(self.keys)

    @cached_property
    def _order(self) -> np.ndarray:
        return np.lexsort((self.keys["rx_port"], self.keys["rx_guid"], self.keys["tx_port"], self.keys["tx_guid"]))

    @cached_property
    def _port_table(self) -> np.ndarray:
        return _ports(self.keys)

    @cached_property
    def _node_index(self) -> GuidIndex:
        return GuidIndex(self.node_guid, np.arange(len(self.node_guid), dtype=np.int64))

    def find(self, query: np.ndarray) -> np.ndarray:
        """Directed-link index of each identity in ``query`` (:data:`IDENTITY` ``[K]``), -1 where absent."""
        return locate(self.keys, query, self._order)

    def find_ports(self, query: np.ndarray) -> np.ndarray:
        """Directed link leaving each port of ``query`` (:data:`PORT`, or :data:`IDENTITY` whose receiving end is
        ignored), -1 where the port is not cabled (or not of this topology)."""
        query = np.asarray(query)
        return locate(self._port_table, _ports(query) if query.dtype == IDENTITY else query, self._order)

    def reverse(self, d: np.ndarray) -> np.ndarray:
        """The opposite direction of directed links ``d`` (-1 stays -1), int64."""
        d = np.asarray(d, dtype=np.int64)
        half = self.num_links // 2
        return np.where(d < 0, -1, (d + half) % max(self.num_links, 1))

    def node_index(self, guids: np.ndarray) -> np.ndarray:
        """Node index of each GUID (uint64 ``[K]``), -1 where this topology has no such node."""
        return self._node_index.nodes(guids)[0]

    def encode(self) -> bytes:
        """zlib of an npz of the arrays (names joined by newlines), what the history cache stores."""
        buf = io.BytesIO()
        names = "\n".join(str(n) for n in self.node_name).encode()
        np.savez(buf, keys=self.keys, node_guid=self.node_guid, node_host=self.node_host,
                 names=np.frombuffer(names, dtype=np.uint8))
        return zlib.compress(buf.getvalue(), 1)

    @classmethod
    def decode(cls, blob: bytes) -> LinkIdentities:
        with np.load(io.BytesIO(zlib.decompress(blob)), allow_pickle=False) as z:
            guids = z["node_guid"]
            names = np.array(z["names"].tobytes().decode().split("\n") if len(guids) else [], dtype=object)
            return cls(z["keys"].astype(IDENTITY), guids, z["node_host"].astype(bool), names)
