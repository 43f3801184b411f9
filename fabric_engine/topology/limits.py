"""What one InfiniBand subnet can hold: the bounds every reader and generator checks first.

Every size that comes from input (a file, a spec, a push) is checked against these
bounds *before* anything of that size is allocated, so a hostile or broken input
costs memory in proportion to its own length, never to a number written in it.

=====================  ============  =============================================================
bound                  value         why
=====================  ============  =============================================================
``MAX_UNICAST_LID``    49,151        unicast LIDs 0x0001-0xBFFF (IBA Vol. 1, 4.1.3); one per switch
                                     and one per host port at LMC 0, so also the most nodes
``MAX_NODE_PORTS``     254           port numbers are 8 bits: 0 is a switch's management port, 255 is
                                     reserved (PerfMgt's "all ports"; the LFT's "no path")
``MAX_FABRIC_PORTS``   1,048,576     ports of all nodes of a subnet: the largest radix-64 subnet
                                     (45,248 hosts, 3,878 switches) has 293,440; 128-port switches
                                     (NDR200 split) at the LID limit stay under 560,000
``MAX_DESIGN_NODES``   262,144       nodes of an offline design without LIDs (``lids="none"``)
``MAX_DESIGN_PORTS``   4,194,304     ports of such a design (a 65,536-host tree has 393,216)
``MAX_NAME_CHARS``     256           node names: a NodeDescription is 64 bytes, ibsim ids 64
=====================  ============  =============================================================

:data:`GENERATOR_PARAMETERS` gives the valid range of every generator parameter and
why, as data a form or an API can show; :func:`check_generator_parameters` checks a
generator's parameters against it, naming the field.

>>> GENERATOR_PARAMETERS["fat_tree"]["radix"].max
254
>>> check_generator_parameters("fat_tree", {"hosts": 512, "radix": 800})
Traceback (most recent call last):
...
fabric_engine.errors.TopologyError: topology.radix: 800 is above 254 (port numbers are 8 bits: ports 1..254 ...
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ..errors import TopologyError
from .speeds import SPEEDS, WIDTHS

__all__ = [
    "MAX_UNICAST_LID", "MAX_NODE_PORTS", "MAX_FABRIC_PORTS", "MAX_DESIGN_NODES", "MAX_DESIGN_PORTS",
    "MAX_NAME_CHARS", "MAX_HOST_PORTS", "Limit", "GENERATOR_PARAMETERS", "check_generator_parameters",
    "generator_limits",
]

#: Highest unicast LID of a subnet (IBA Vol. 1, 4.1.3: 0x0001-0xBFFF unicast).
MAX_UNICAST_LID = 0xBFFF
#: Most ports of one node (switch or HCA): port numbers 1..254.
MAX_NODE_PORTS = 254
#: Most ports (all nodes together) of one subnet's fabric.
MAX_FABRIC_PORTS = 1 << 20
#: Most nodes of an offline design (``lids="none"``), which needs no LIDs.
MAX_DESIGN_NODES = 1 << 18
#: Most ports of an offline design.
MAX_DESIGN_PORTS = 1 << 22
#: Longest node name or description accepted.
MAX_NAME_CHARS = 256
#: Most ports of a generated host (the generators space host GUIDs 16 apart).
MAX_HOST_PORTS = 15

_LIDS = f"one subnet has {MAX_UNICAST_LID:,} unicast LIDs, one per host port and switch"
_PORTS = "port numbers are 8 bits: ports 1..254 (0 is the switch management port, 255 is reserved)"


@dataclass(frozen=True)
class Limit:
    """The valid values of one parameter.

    ``min``/``max`` bound numbers (``None``: unbounded on that side), ``choices`` lists
    the valid values of an enumerated one; ``why`` says where the bound comes from.
    ``optional`` parameters may be ``None`` (the generator then picks a value).
    ``design_max`` replaces ``max`` for an offline design (``lids="none"``), which
    needs no LIDs and may be larger than a subnet.
    """

    kind: str
    why: str
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None
    optional: bool = False
    design_max: float | None = None

    def check(self, field: str, value, design: bool = False) -> None:
        """Raise :class:`TopologyError` naming ``field`` when ``value`` is not valid (``design``: ``lids="none"``)."""
        if value is None and self.optional:
            return
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise TopologyError(f"{field}: expected an integer, got {value!r}")
        elif self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise TopologyError(f"{field}: expected a finite number, got {value!r}")
        elif not isinstance(value, str):
            raise TopologyError(f"{field}: expected a string, got {value!r}")
        if self.choices is not None:
            if value not in self.choices:
                raise TopologyError(f"{field}: {value!r} is not one of {', '.join(map(str, self.choices))} "
                                    f"({self.why})")
        elif self.kind == "str":
            if self.max is not None and len(value) > self.max:
                raise TopologyError(f"{field}: longer than {int(self.max)} characters ({self.why})")
        elif self.min is not None and value < self.min:
            raise TopologyError(f"{field}: {value!r} is below {self.min:g} ({self.why})")
        else:
            top = self.design_max if design and self.design_max is not None else self.max
            if top is not None and value > top:
                raise TopologyError(f"{field}: {value!r} is above {top:g} ({self.why})")

    def as_dict(self) -> dict:
        """JSON-ready form (``choices`` as a list; absent bounds as ``None``)."""
        d = asdict(self)
        if d["choices"] is not None:
            d["choices"] = list(d["choices"])
        return d


def _count(why: str, lo: int = 0, hi: int = MAX_UNICAST_LID, optional: bool = False) -> Limit:
    return Limit("int", why, lo, hi, optional=optional, design_max=MAX_DESIGN_NODES if hi == MAX_UNICAST_LID else None)


_RADIX = Limit("int", _PORTS, 2, MAX_NODE_PORTS)
_COMMON = {
    "radix": _RADIX,
    "speed": Limit("str", "lane speed of every cable", choices=SPEEDS),
    "width": Limit("int", "lanes of every cable", choices=WIDTHS),
    "name": Limit("str", "the fabric's name", max=100, optional=True),
    "storage_servers": _count(f"each storage port takes a LID; {_LIDS}"),
    "storage_ports": Limit("int", f"HCA ports per storage server; generated hosts have at most {MAX_HOST_PORTS}",
                           1, MAX_HOST_PORTS),
    "mgmt_nodes": _count(f"each takes a LID; {_LIDS}"),
    "lids": Limit("str", "'subnet' builds a routable fabric; 'none' an offline design larger than a subnet",
                  choices=("subnet", "none")),
}
_PREFIX = Limit("str", "node names are at most 64 characters (ibsim node ids, NodeDescription)", max=32)
_PLACEMENT = Limit("str", "service ports on their own leaves, or spread over the GPU leaves",
                   choices=("dedicated", "spread"))

#: Valid range of every parameter of every generator, and why (JSON-ready via :func:`generator_limits`).
#: The ranges are each parameter's own; that hosts and switches together fit the LIDs of a subnet
#: is checked by the generator, before it allocates anything.
GENERATOR_PARAMETERS: dict[str, dict[str, Limit]] = {
    "fat_tree": {
        "hosts": _count(f"each host takes a LID; {_LIDS}", 1),
        **_COMMON,
        "levels": Limit("int", "2 (leaf, spine) or 3 (leaf, spine, core)", choices=(2, 3)),
        "oversubscription": Limit("float", "host-facing to spine-facing leaf ports; a leaf keeps one up-port",
                                  1, MAX_NODE_PORTS - 1),
        "cores": _count("core switches (3 levels), a multiple of the spines per pod; each takes a LID", 1,
                        optional=True),
        "spines": Limit("int", "spines (2 levels), a divisor of the leaf up-ports", 1, MAX_NODE_PORTS, optional=True),
        "host_prefix": _PREFIX,
        "storage_placement": _PLACEMENT,
    },
    "rail_optimized": {
        "nodes": _count(f"GPU nodes; each of their HCAs takes a LID; {_LIDS}", 1),
        "gpus_per_node": Limit("int", "one HCA and one rail leaf per GPU (HGX/DGX nodes have 4 or 8)", 1, 32),
        "nodes_per_su": Limit("int", "nodes of a scalable unit, one leaf down-port each; a leaf keeps one up-port",
                              1, MAX_NODE_PORTS - 1),
        **_COMMON,
        "levels": Limit("int", "2 (leaf, spine) or 3 (leaf, spine, core)", choices=(2, 3)),
        "spines": Limit("int", "spines (2 levels), a divisor of the leaf up-ports", 1, MAX_NODE_PORTS, optional=True),
        "cores": _count("core switches (3 levels); each takes a LID", 1, optional=True),
        "node_prefix": _PREFIX,
        "storage_placement": _PLACEMENT,
    },
    "dragonfly_plus": {
        "groups": _count("groups; every spine has a global link to each other group", 1, MAX_NODE_PORTS),
        "leaves_per_group": Limit("int", "each leaf has a cable to every spine of its group", 1, MAX_NODE_PORTS),
        "spines_per_group": Limit("int", "each spine has a cable to every leaf of its group", 1, MAX_NODE_PORTS),
        "hosts_per_leaf": Limit("int", "leaf ports left after the spine links", 0, MAX_NODE_PORTS - 1,
                                optional=True),
        "global_links": Limit("int", "global links per spine, a multiple of groups - 1", 0, MAX_NODE_PORTS,
                              optional=True),
        **_COMMON,
        "host_prefix": _PREFIX,
    },
}


def check_generator_parameters(generator: str, params: dict, prefix: str = "topology") -> None:
    """Check ``params`` of ``generator`` against :data:`GENERATOR_PARAMETERS`; fields named ``prefix.param``.

    Raises :class:`TopologyError` for an unknown generator, an unknown parameter or a value out of range.
    """
    try:
        limits = GENERATOR_PARAMETERS[generator]
    except KeyError:
        raise TopologyError(f"{prefix}.generator: unknown generator {generator!r}; known: "
                            f"{', '.join(GENERATOR_PARAMETERS)}") from None
    design = params.get("lids") == "none"
    for key, value in params.items():
        limit = limits.get(key)
        if limit is None:
            raise TopologyError(f"{prefix}.{key}: not a parameter of {generator}; known: {', '.join(limits)}")
        limit.check(f"{prefix}.{key}", value, design)


def generator_limits() -> dict[str, dict[str, dict]]:
    """:data:`GENERATOR_PARAMETERS` as JSON-ready dicts (``{generator: {param: {kind, min, max, ...}}}``)."""
    return {g: {p: lim.as_dict() for p, lim in params.items()} for g, params in GENERATOR_PARAMETERS.items()}
