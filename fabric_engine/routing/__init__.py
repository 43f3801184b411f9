"""Routing engines and the :class:`Routing` they produce."""

from __future__ import annotations

from ..errors import RoutingError
from ..topology import Fabric
from .minhop import minhop
from .tables import MAX_HOPS, NO_PATH, Routing

__all__ = ["route", "Routing", "ENGINES", "NO_PATH", "MAX_HOPS"]

ENGINES = {"minhop": minhop}


def route(fabric: Fabric, engine: str = "minhop", **options) -> Routing:
    """Compute the forwarding tables of ``fabric`` with the named engine.

    >>> from fabric_engine.topology.generate import fat_tree
    >>> route(fat_tree(hosts=8, radix=4), "minhop").lft.shape
    (6, 15)
    """
    try:
        build = ENGINES[engine]
    except KeyError:
        raise RoutingError(f"unknown routing engine {engine!r}; known: {', '.join(sorted(ENGINES))}") from None
    return build(fabric, **options)
