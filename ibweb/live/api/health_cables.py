"""The inventory of a fabric's cable ends: ``GET /api/fabrics/fabrics/<slug>/health/cables/``.

Every port whose reading names a module (:mod:`ibweb.live.health.cables`): its node and port as the user may see
them (a host the user may not name reads ``host-<index>``, GUID ``hidden``), vendor, part number (``pn``),
serial (``sn``), revision, firmware (``fw``), module identifier and length. Paginated as the project's REST lists
(``?limit=&offset=``, ``count``/``next``/``previous``/``results``) and filtered by exact ``vendor``, ``pn`` and
``sn`` (values matched as given, like the other lists' filters). 404 before the fabric's first grading (or for a
fabric whose source reads no link health); 503 while the inventory belongs to a fabric its record has replaced.
"""

from __future__ import annotations

import math

import numpy as np
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView

from fabric_engine.topology import KIND_HOST
from ibweb.access import HIDDEN, host_label, redaction, view_of
from ibweb.live.api.base import FabricView, NotPublished
from ibweb.live.health.cables import TEXT, text
from ibweb.runtime import health as store
from ibweb.runtime import record

__all__ = ["FILTERS", "CableRows", "HealthCablesView", "cable_rows"]

#: Query parameters that narrow the list (exact match), by the inventory's field.
FILTERS = {"vendor": "the module's vendor", "pn": "the module's part number", "sn": "the module's serial"}


class CableRows:
    """The inventory rows one view sees, made into dicts only for the slice asked (a page, or all for a CSV)."""

    def __init__(self, inv: dict, rows: np.ndarray, fabric, hidden: np.ndarray) -> None:
        self.inv, self.rows, self.fabric, self.hidden = inv, rows, fabric, hidden

    def __len__(self) -> int:
        return int(self.rows.size)

    def __getitem__(self, part: slice) -> list[dict]:
        inv, f = self.inv, self.fabric
        out = []
        for i in self.rows[part].tolist():  # one page of rows
            n = int(inv["node"][i])
            hide = bool(self.hidden[n])
            length = float(inv["length_m"][i])
            out.append({"node": host_label(n) if hide else str(f.node_name[n]),
                        "guid": HIDDEN if hide else f"0x{int(f.guid[n]):016x}", "port": int(inv["port"][i]),
                        "kind": "host" if int(f.kind[n]) == KIND_HOST else "switch",
                        **{k: str(inv[k][i]) for k in TEXT},
                        "length_m": round(length, 2) if math.isfinite(length) else None})
        return out


def cable_rows(user, fabric, params) -> tuple[CableRows, dict]:
    """The inventory of ``fabric`` (a row ``user`` may see) as ``user`` sees it, filtered by the query ``params``
    (:data:`FILTERS`), and the inventory entry (its ``t``); 404 or 503 as the module says."""
    inv = store.cables_for(fabric)
    if inv is None:
        if store.read(fabric.pk) is None:
            raise NotFound(f"fabric {fabric.slug} has no cable inventory yet (its source reads no link health, or "
                           f"has not graded it yet)")
        raise NotPublished(f"fabric {fabric.slug}: its cable inventory is being read again; try again")
    h = record.head_of(fabric)
    f = record.fabric(fabric.pk, h) if h is not None else None
    if f is None:
        raise NotPublished(f"fabric {fabric.slug}: its record is being replaced; try again")
    inv = {**inv, **{k: text(inv, k) for k in TEXT}}
    keep = np.ones(inv["node"].size, bool)
    for name in FILTERS:
        value = params.get(name)
        if value is not None:
            keep &= inv[name] == value
    hidden = redaction(view_of(user), fabric, f).hidden_nodes(f)
    return CableRows(inv, np.flatnonzero(keep), f, hidden), inv


@extend_schema(responses=OpenApiTypes.OBJECT, parameters=[
    OpenApiParameter(name, str, description=text) for name, text in FILTERS.items()])
class HealthCablesView(FabricView, GenericAPIView):
    """Every cable end read: node, port, vendor, part number, serial, revision, firmware, identifier and length
    (paginated; filtered by exact ``vendor``, ``pn``, ``sn``)."""

    filter_backends: list = []

    def get(self, request, slug: str):
        fabric = self.fabric(request, slug)
        rows, inv = cable_rows(request.user, fabric, request.query_params)
        page = self.paginate_queryset(rows)
        response = self.get_paginated_response(page)
        response.data = {"fabric": fabric.slug, "read_at": inv.get("t"), **response.data}
        return response
