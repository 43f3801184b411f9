"""The shared ground of the live API's views: :class:`FabricView` (one fabric the user may see, and what its
engine published), :class:`NotPublished`, a bounded query number."""

from __future__ import annotations

import numpy as np
from django.shortcuts import get_object_or_404
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.views import APIView

from fabric_engine.routing import Routing
from fabric_engine.topology import Fabric as EngineFabric
from ibweb.access import find_node, redaction, view_of, visible_fabrics
from ibweb.fabrics.models import Fabric
from ibweb.runtime import record

__all__ = ["NotPublished", "FabricView", "query_number", "query_flag", "rounded"]


class NotPublished(APIException):
    """The fabric's engine has not published its runtime record (yet): try again in a moment."""

    status_code = 503
    default_code = "not_published"


class FabricView(APIView):
    """A read-only view of one fabric the user may see."""

    def fabric(self, request, slug: str) -> Fabric:
        return get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)

    def head(self, fabric: Fabric) -> dict:
        """The newest head of ``fabric``'s runtime record; 503 while its engine has not published one."""
        h = record.head_of(fabric)
        if h is None:
            raise NotPublished(f"fabric {fabric.slug}: its engine has not published the fabric yet; try again "
                               f"in a few seconds")
        return h

    def engine_fabric(self, fabric: Fabric) -> EngineFabric:
        """The fabric ``fabric``'s engine runs on (emulated: its scenario's; telemetry-fed: the discovery)."""
        f = record.fabric(fabric.pk, self.head(fabric))
        if f is None:
            raise NotPublished(f"fabric {fabric.slug}: its record is being replaced; try again")
        return f

    def node(self, request, fabric: Fabric, node: str) -> tuple[EngineFabric, int, np.ndarray]:
        """The fabric ``fabric``'s engine runs on, the index of ``node`` in it (a name, a ``0x`` GUID, a host name
        or the ``host-<i>`` label of a host the user may not name) and the nodes hidden from the user; 404 for a
        node the user may not see, named as asked."""
        f = self.engine_fabric(fabric)
        hidden = redaction(view_of(request.user), fabric, f).hidden_nodes(f)
        i = find_node(f, node, hidden)
        if i is None:
            raise NotFound(f"no node {node!r} in fabric {fabric.slug}")
        return f, i, hidden

    def routing(self, fabric: Fabric) -> Routing:
        """The routing ``fabric``'s engine runs on, read from its runtime record."""
        routing = record.routing(fabric.pk, self.head(fabric))
        if routing is None:
            raise NotPublished(f"fabric {fabric.slug} has no routing yet: its engine has not routed it")
        return routing


def query_number(request, name: str, default: float, low: float, high: float) -> float:
    """The query parameter ``name`` as a number in ``low..high`` (``default`` when absent); 400 otherwise."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValidationError({name: f"expected a number, got {raw!r}"}) from None
    if not low <= value <= high:
        raise ValidationError({name: f"{value:g} is outside {low:g}..{high:g}"})
    return value


def query_flag(request, name: str) -> bool:
    """Whether the query parameter ``name`` is on (``1``, ``true``, ``yes`` or ``on``, any case)."""
    return request.query_params.get(name, "").lower() in ("1", "true", "yes", "on")


def rounded(a: np.ndarray, digits: int) -> list[float | None]:
    """``a`` rounded to ``digits``, gaps (NaN) as None: a series as JSON."""
    out = np.round(a.astype(np.float64), digits).astype(object)
    out[np.isnan(a.astype(np.float64))] = None
    return out.tolist()
