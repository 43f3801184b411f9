"""Host names (as the scheduler knows them) to HCAs of the fabric, rail by rail, through node descriptions.

A GPU server has one HCA per rail, each its own channel adapter in the subnet, and
each describes itself with a NodeDescription such as ``"dgx001 HCA-1"`` (older OFED),
``"dgx001 mlx5_0"`` (rdma-core) or whatever the site set (``"dgx001-hca1"``). A
:class:`HostMap` is the operator's rule that splits a description into the host name
and the rail:

* a template with ``{host}`` and optionally ``{rail}``: ``"{host} HCA-{rail}"``,
  ``"{host}-hca{rail}"``; ``{host}`` matches the shortest name that fits, ``{rail}`` digits;
* or a regular expression prefixed ``re:`` with the named groups ``host`` and
  optionally ``rail``: ``re:^(?P<host>dgx\\d+)-ib(?P<rail>\\d)$``.

Several rules may be given; the first that matches a description wins. A node whose
name is itself a host name (fabrics read from ``ibnetdiscover``, which strips the
``HCA-n`` suffix, or generated ones) is that host's only rail. Rails are numbered as
the descriptions number them; two HCAs of one host claiming the same rail is an error.

>>> from fabric_engine.topology.generate import fat_tree
>>> f = fat_tree(hosts=4, radix=4)
>>> index = HostMap().index(f)
>>> rails, missing = index.resolve(["gpu0002", "gpu0004", "nothere"])
>>> [(r, f.node_name[n].tolist()) for r, n in rails.items()], missing
([(1, ['gpu0002', 'gpu0004'])], ['nothere'])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import FabricEngineError
from ..topology import KIND_HOST, Fabric

__all__ = ["HostMap", "HostIndex", "DEFAULT_PATTERNS", "MAX_PATTERN_CHARS"]

#: Descriptions infiniband-diags and OFED give host HCAs by default.
DEFAULT_PATTERNS: tuple[str, ...] = ("{host} HCA-{rail}", "{host} mlx5_{rail}")
#: Longest rule accepted.
MAX_PATTERN_CHARS = 200


def _compile(pattern: str) -> re.Pattern:
    if not isinstance(pattern, str) or not pattern.strip():
        raise FabricEngineError("host pattern: empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise FabricEngineError(f"host pattern: {len(pattern)} characters, more than {MAX_PATTERN_CHARS}")
    if pattern.startswith("re:"):
        try:
            rx = re.compile(pattern[3:])
        except re.error as exc:
            raise FabricEngineError(f"host pattern {pattern!r}: {exc}") from None
        if "host" not in rx.groupindex:
            raise FabricEngineError(f"host pattern {pattern!r}: needs a group named 'host'")
        return rx
    if pattern.count("{host}") != 1 or pattern.count("{rail}") > 1:
        raise FabricEngineError(f"host pattern {pattern!r}: needs '{{host}}' once and '{{rail}}' at most once")
    rest = pattern.replace("{host}", "").replace("{rail}", "")
    if "{" in rest or "}" in rest:
        raise FabricEngineError(f"host pattern {pattern!r}: only {{host}} and {{rail}} may be named")
    body = re.escape(pattern).replace(r"\{host\}", r"(?P<host>.+?)").replace(r"\{rail\}", r"(?P<rail>\d{1,4})")
    return re.compile(f"^{body}$")


@dataclass(frozen=True)
class HostIndex:
    """Host name -> ``{rail: node index}`` for one fabric (built by :meth:`HostMap.index`)."""

    fabric: Fabric
    hosts: dict[str, dict[int, int]]

    def resolve(self, names: Sequence[str]) -> tuple[dict[int, np.ndarray], list[str]]:
        """Node indices of ``names`` per rail, in the order given, and the names not found.

        Returns ``({rail: int64 node indices}, missing)``; rails ascending; a host without
        an HCA on some rail is left out of that rail.
        """
        per_rail: dict[int, list[int]] = {}
        missing = []
        for name in names:  # one entry per host of a job (a job lists each host once)
            rails = self.hosts.get(name)
            if rails is None:
                missing.append(name)
                continue
            for rail, node in rails.items():
                per_rail.setdefault(rail, []).append(node)
        return {r: np.asarray(per_rail[r], dtype=np.int64) for r in sorted(per_rail)}, missing

    def host_of(self) -> dict[int, tuple[str, int]]:
        """Node index -> ``(host name, rail)`` for every HCA this index knows."""
        return {node: (host, rail) for host, rails in self.hosts.items() for rail, node in rails.items()}


class HostMap:
    """Rules that read a host name and a rail out of an HCA's node description (see the module docstring).

    Parameters
    ----------
    patterns : sequence of str
        Templates or ``re:`` expressions, tried in order (default :data:`DEFAULT_PATTERNS`).
    """

    def __init__(self, patterns: Sequence[str] | str = DEFAULT_PATTERNS) -> None:
        self.patterns = (patterns,) if isinstance(patterns, str) else tuple(patterns)
        self._rules = [_compile(p) for p in self.patterns]

    def split(self, description: str) -> tuple[str, int] | None:
        """``(host, rail)`` of one node description, or None when no rule matches."""
        for rx in self._rules:
            m = rx.match(description)
            if m:
                rail = m.groupdict().get("rail")
                host = m.group("host")
                if host:
                    return host, int(rail) if rail is not None else 1
        return None

    def index(self, fabric: Fabric) -> HostIndex:
        """The :class:`HostIndex` of ``fabric``'s channel adapters (once per discovery, not per tick)."""
        hosts: dict[str, dict[int, int]] = {}
        names = fabric.node_name
        for node in fabric.hosts.tolist():  # one pass over the fabric's HCAs
            desc = str(names[node])
            parsed = self.split(desc) or (desc, 1)
            host, rail = parsed
            rails = hosts.setdefault(host, {})
            if rail in rails:
                raise FabricEngineError(f"host {host!r}: {names[rails[rail]]!r} and {desc!r} both claim rail {rail}; "
                                        "adjust the host pattern")
            rails[rail] = node
        for node in fabric.hosts.tolist():  # a name that is itself a host name also stands for that host
            desc = str(names[node])
            if desc not in hosts and fabric.kind[node] == KIND_HOST:
                hosts[desc] = {1: node}
        return HostIndex(fabric, hosts)
