"""The routed path between two hosts of a fabric, hop by hop, as ibtracert shows it:
``GET /api/fabrics/fabrics/<slug>/path/?src=<host>&dst=<host>``.

The routing is the one the fabric's engine runs on, read from its runtime record (:mod:`ibweb.runtime.record`),
whatever the kind of fabric (a telemetry-fed one routes with OpenSM's LFT dump or a routing computed on the
discovery). Nothing is built here; before the engine published, it answers 503.
"""

from __future__ import annotations

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from fabric_engine.errors import RoutingError
from fabric_engine.topology import KIND_HOST
from ibweb.access import find_node, host_hcas, is_index, node_name, node_number, redaction, view_of
from ibweb.live.api.base import FabricView

__all__ = ["PathView"]


@extend_schema(responses=OpenApiTypes.OBJECT)
class PathView(FabricView):
    """The routed path from host ``src`` to host ``dst`` (names or node indices), hop by hop."""

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        routing = self.routing(fabric)
        f = routing.fabric
        hidden = redaction(view_of(request.user), fabric, f).hidden_nodes(f)
        ends = []
        for name in ("src", "dst"):
            raw = request.query_params.get(name, "")
            if not raw:
                raise ValidationError({name: "required: a host name or node index"})
            i = node_number(raw) if is_index(raw) else _host_by_name(f, raw, name, fabric.slug, hidden)
            if not (0 <= i < f.num_nodes and f.kind[i] == KIND_HOST):
                raise ValidationError({name: f"{raw!r} is not a host of fabric {fabric.slug}"})
            ends.append(i)
        try:
            hops = routing.trace(ends[0], ends[1])
        except RoutingError as exc:
            detail = f"no route from {node_name(f, ends[0], hidden)} to {node_name(f, ends[1], hidden)}" \
                if hidden.any() else str(exc)
            return Response({"detail": detail, "src": ends[0], "dst": ends[1], "hops": [], "links": []}, status=409)
        hops = [{**h, "name": node_name(f, h["node"], hidden)} for h in hops]
        return Response({"fabric": fabric.slug, "src": ends[0], "dst": ends[1], "hops": hops,
                         "links": [h["link"] for h in hops if h["link"] is not None], "routing": routing.engine})


def _host_by_name(f, raw: str, field: str, slug: str, hidden: np.ndarray) -> int:
    """Node index of ``raw``; a discovered host is also found without its ``HCA-1``/``mlx5_0`` suffix.

    A ``hidden`` host is found only by its ``host-<i>`` label.
    """
    i = find_node(f, raw, hidden)
    if i is not None:
        return i
    hit = host_hcas(f, raw, hidden)
    if len(hit) > 1:
        names = ", ".join(str(f.node_name[h]) for h in hit[:4])
        raise ValidationError({field: f"{raw!r} has several HCAs in fabric {slug}: say which ({names})"})
    raise ValidationError({field: f"no node {raw!r} in fabric {slug}"})
