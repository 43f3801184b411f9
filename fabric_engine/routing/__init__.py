"""Routing engines and the :class:`Routing` they produce.

Every engine is ``build(fabric, **options) -> Routing``; :data:`ENGINES` lists them with
a human name and a one-line description (the web app offers them as choices)::

    [(name, e.label) for name, e in ENGINES.items()]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..errors import RoutingError
from ..topology import Fabric
from .dfsssp import dfsssp
from .ftree import ftree
from .minhop import minhop
from .tables import MAX_HOPS, NO_PATH, Routing
from .updn import updn

__all__ = ["route", "Routing", "ENGINES", "Engine", "NO_PATH", "MAX_HOPS", "engine_choices", "load_lfts"]


class Engine(NamedTuple):
    """A routing engine: its human name, what it does, and the function that builds the LFTs."""

    label: str
    description: str
    build: Callable[..., Routing]


ENGINES: dict[str, Engine] = {
    "minhop": Engine("Min-hop", "OpenSM minhop: shortest paths, destinations spread over equal ports", minhop),
    "updn": Engine("Up*/Down*", "OpenSM updn: shortest up-then-down paths from root switches, deadlock-free", updn),
    "ftree": Engine("Fat tree", "OpenSM ftree: D-mod-k fat-tree routing, even port loads, degraded trees kept "
                    "balanced", ftree),
    "dfsssp": Engine("DFSSSP", "Deadlock-free SSSP: balanced shortest paths on any topology, virtual lanes "
                     "break credit loops", dfsssp),
}


def engine_choices() -> list[tuple[str, str]]:
    """``[(name, human name), ...]`` for forms and API choices."""
    return [(name, e.label) for name, e in ENGINES.items()]


def load_lfts(fabric: Fabric, path, complete: bool = True) -> Routing:
    """The :class:`Routing` in an ``opensm-lfts.dump`` or ``ibroute`` output file (gzip or not), mapped onto ``fabric``.

    ``path`` names the file (a ``Path`` from a trusted caller: the CLI, a collector's configured path); the
    text of an upload goes to :func:`fabric_engine.formats.opensm_lfts.read` instead. With ``complete`` (the
    default) every switch of ``fabric`` must have a table in the file.
    """
    from ..formats import opensm_lfts
    from ..formats._input import read_text

    return opensm_lfts.read(read_text(path), fabric, str(path), complete=complete)


def route(fabric: Fabric, engine: str = "minhop", **options) -> Routing:
    """Compute the forwarding tables of ``fabric`` with the named engine.

    >>> from fabric_engine.topology.generate import fat_tree
    >>> route(fat_tree(hosts=8, radix=4), "minhop").lft.shape
    (6, 15)
    """
    try:
        build = ENGINES[engine].build
    except KeyError:
        raise RoutingError(f"unknown routing engine {engine!r}; known: {', '.join(sorted(ENGINES))}") from None
    return build(fabric, **options)
