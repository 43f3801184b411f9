"""Nodes as a user may name them in a URL, and as a user is shown them.

A node is named by its name (a switch's or HCA's node description), a ``0x`` node or port GUID, the
``host-<i>`` label a hidden host is shown as, or a host's name alone where its HCA describes itself as
``"<host> HCA-1"`` or ``"<host> mlx5_0"`` (the descriptions OFED and rdma-core give) and the host has one HCA
on the fabric. A hidden host named any way but its label is no such node: its existence is not told.
"""

from __future__ import annotations

import numpy as np

from fabric_engine.formats import HCA_SUFFIX

from .redaction import host_label

__all__ = ["is_index", "node_number", "node_name", "find_node", "host_hcas"]


def is_index(raw: str) -> bool:
    """Whether ``raw`` spells a node index (ASCII digits)."""
    return raw.isascii() and raw.isdigit()


def node_number(raw: str) -> int:
    """The node index ``raw`` spells (:func:`is_index`); -1 when too long to be one."""
    return int(raw) if len(raw) < 19 else -1


def node_name(f, i: int, hidden: np.ndarray) -> str:
    """Name of node ``i`` as the user sees it (``hidden``: :meth:`ibweb.access.Redaction.hidden_nodes`)."""
    return host_label(i) if hidden[i] else str(f.node_name[i])


def host_hcas(f, host: str, hidden: np.ndarray) -> np.ndarray:
    """The HCAs the view may see whose description is ``host`` and a device (``HCA-1``, ``mlx5_0``): indices."""
    if not host or host != host.strip():
        return np.empty(0, np.int64)
    hosts = f.hosts[~hidden[f.hosts]]
    names = f.node_name[hosts].astype(str)
    near = hosts[np.char.startswith(names, host + " ") | np.char.startswith(names, host + "\t")]  # a host's HCAs
    return np.array([h for h in near if HCA_SUFFIX.sub("", str(f.node_name[h])) == host], dtype=np.int64)


def find_node(f, key: str, hidden: np.ndarray) -> int | None:
    """Node index of ``key`` (see the module); ``None`` when there is no such node, several HCAs of one host, or
    only a hidden one named by its real name, GUID or host name."""
    label = key.removeprefix("host-")
    if key.startswith("host-") and is_index(label):
        i = node_number(label)
        if 0 <= i < f.num_nodes and hidden[i]:
            return i
    try:
        i = f.node(int(key, 16) if key.lower().startswith("0x") else key)
    except (KeyError, ValueError, OverflowError):
        hcas = host_hcas(f, key, hidden)
        return int(hcas[0]) if hcas.size == 1 else None
    return None if hidden[i] else i
