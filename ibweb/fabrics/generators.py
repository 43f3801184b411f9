"""The generators' parameters as a form shows them: label, type, default, valid range and help.

Ranges and the reason for each come from :data:`fabric_engine.topology.limits.GENERATOR_PARAMETERS`
(one source of truth with the engine's checks); defaults from the generator functions'
signatures; labels, groups and help sentences are this module's. ``lids`` and ``name`` are
not offered: a fabric is a routable subnet, named by the fabric form.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass

from fabric_engine.topology.generate import GENERATORS
from fabric_engine.topology.limits import GENERATOR_PARAMETERS

__all__ = ["Param", "GENERATOR_INFO", "parameters", "schema", "topology_of", "HIDDEN"]

#: Parameters the page does not offer.
HIDDEN = ("lids", "name")

#: Label and one-line description of each generator.
GENERATOR_INFO = {
    "fat_tree": ("Fat tree", "2- or 3-level folded Clos of single-port GPU hosts: leaves, spines and, for 3 levels, "
                             "cores in pods of radix/2 leaves."),
    "rail_optimized": ("Rail-optimized (SuperPOD-style)", "Scalable units of GPU nodes with one HCA per GPU; rail r of "
                                                          "every node of an SU goes to that SU's leaf r."),
    "dragonfly_plus": ("Dragonfly+", "Groups whose leaves and spines form a complete bipartite graph; spine j of each "
                                     "group joins spine j of every other group by global links."),
}

#: Label, group and help of each parameter (the valid range and its reason are added from the limits).
_TEXT = {
    "hosts": ("GPU hosts", "design", "Single-port hosts; the last leaf may be partly filled."),
    "nodes": ("GPU nodes", "design", "Nodes of gpus_per_node HCAs each."),
    "gpus_per_node": ("GPUs per node", "design", "One HCA and one rail leaf per GPU."),
    "nodes_per_su": ("Nodes per scalable unit", "design", "One leaf down-port per node; the rest of the radix goes "
                                                          "up to the spines."),
    "groups": ("Groups", "design", ""),
    "leaves_per_group": ("Leaves per group", "design", ""),
    "spines_per_group": ("Spines per group", "design", ""),
    "hosts_per_leaf": ("Hosts per leaf", "design", "Empty: every leaf port not used by a spine link."),
    "global_links": ("Global links per spine", "design", "Empty: one cable to each other group."),
    "radix": ("Switch radix", "design", "Ports per switch (64 for NDR Quantum-2, 128 with split ports)."),
    "levels": ("Levels", "design", "2: leaf and spine; 3: leaf, spine and core."),
    "oversubscription": ("Leaf oversubscription", "design", "Host-facing to spine-facing ports at the leaf: 1 is "
                                                            "non-blocking."),
    "spines": ("Spines", "design", "2 levels only. Empty: one spine per leaf up-port."),
    "cores": ("Core switches", "design", "3 levels only. Empty: the fewest for full bisection."),
    "speed": ("Link speed", "links", "Lane speed of every cable (NDR: 100 Gb/s per lane)."),
    "width": ("Link width", "links", "Lanes per cable (4x is the usual)."),
    "storage_servers": ("Storage servers", "service", "Hosts of role storage, named stor001..."),
    "storage_ports": ("Ports per storage server", "service", ""),
    "storage_placement": ("Storage placement", "service", "dedicated: on their own service leaves; spread: on the "
                                                          "free ports of the GPU leaves."),
    "mgmt_nodes": ("Management nodes", "service", "Single-port hosts of role mgmt."),
    "host_prefix": ("Host name prefix", "names", ""),
    "node_prefix": ("Node name prefix", "names", ""),
}
#: The form's fieldsets, in order.
GROUPS = {"design": "Design", "links": "Links", "service": "Storage and management", "names": "Names"}
#: Defaults the page starts from where the generator has none (a fat tree's hosts).
_START = {("fat_tree", "hosts"): 512}


@dataclass(frozen=True)
class Param:
    """One generator parameter as the form shows it."""

    name: str
    label: str
    kind: str  # "int", "float", "str"
    default: object
    min: float | None
    max: float | None
    choices: tuple | None
    optional: bool
    required: bool
    help: str
    why: str
    group: str

    def as_dict(self) -> dict:
        d = asdict(self)
        d["choices"] = list(self.choices) if self.choices is not None else None
        return d


def parameters(generator: str) -> list[Param]:
    """The offered parameters of ``generator``, in the generator's signature order."""
    limits = GENERATOR_PARAMETERS[generator]
    out = []
    for name, p in inspect.signature(GENERATORS[generator]).parameters.items():
        if name in HIDDEN or name not in limits:
            continue
        lim = limits[name]
        required = p.default is inspect.Parameter.empty
        default = _START.get((generator, name)) if required else p.default
        label, group, text = _TEXT.get(name, (name.replace("_", " ").capitalize(), "design", ""))
        out.append(Param(name, label, lim.kind, default, lim.min, lim.max, lim.choices, lim.optional, required,
                         text, lim.why, group))
    return out


def schema() -> dict:
    """Every generator with its parameters, JSON-ready: ``{name: {label, description, groups, params: [...]}}``."""
    return {g: {"label": GENERATOR_INFO[g][0], "description": GENERATOR_INFO[g][1], "groups": GROUPS,
                "params": [p.as_dict() for p in parameters(g)]} for g in GENERATORS}


def topology_of(generator: str, values: dict) -> dict:
    """The ``topology`` spec of a generator and its parameter values (empty optional ones left out)."""
    return {"generator": generator, **{k: v for k, v in values.items() if v is not None and v != ""}}
