"""``/metrics``: every visible fabric's ports in the Prometheus text format."""

from __future__ import annotations

import time

import numpy as np
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from fabric_engine.telemetry.prometheus import CONTENT_TYPE, render_metrics
from ibweb.access import View, redaction, view_of, visible_fabrics
from ibweb.feed_metrics import render_feed_metrics
from ibweb.permissions import ViewerRead
from ibweb.runtime.metrics import metrics_for
from ibweb.wsflow import feed_socket_stats


@extend_schema(responses=OpenApiTypes.STR)
class MetricsView(APIView):
    """Per-port counters of emulated and telemetry-fed fabrics (``?fabric=<slug>`` for one).

    Emulated fabrics: counters integrated from the engine's per-link rates.
    Telemetry-fed fabrics: the raw counters of the newest sweep. The ports are those
    of the fabric's runtime record; a fabric whose engine has not produced counters
    for its newest record version yet is left out. Authentication as for the
    API (session or ``Authorization: Token ...``; a Prometheus scraper uses the token
    of a service account with the operator role).

    What each level gets (:mod:`ibweb.access`): ``ALL`` every port; ``TENANTS`` the
    ports between switches and those of (and facing) its tenants' hosts; ``FABRIC``
    (anonymous where public read is on) the ports between switches only. A port of a
    host the view does not see is left out with the switch port facing it, so no
    name, GUID or counter of another tenant's host appears. ``ALL`` also gets this web
    process's live-feed sockets (``ibweb_feed_*``, :mod:`ibweb.feed_metrics`).
    """

    permission_classes = [ViewerRead]

    def get(self, request):
        view = view_of(request.user)
        fabrics = visible_fabrics(view)
        slug = request.query_params.get("fabric")
        if slug:
            fabrics = fabrics.filter(slug=slug)
        parts = []
        now = time.time()
        for fabric in fabrics:  # one entry per fabric
            got = metrics_for(fabric)
            if got is None:
                continue
            f, labels, totals, t = got
            parts.append(render_metrics(labels, _shown_ports(view, fabric, f, totals), fabric.slug,
                                        extra={"infiniband_counters_age_seconds": round(now - t, 3)}))
        if view.sees_all and not slug:  # the process's feed sockets: operators only, not per fabric
            parts.append(render_feed_metrics(feed_socket_stats()))
        return HttpResponse("".join(parts), content_type=CONTENT_TYPE)


def _shown_ports(view: View, fabric, f, totals: np.ndarray) -> np.ndarray:
    """``totals`` with the rows of ports at or facing a hidden host of ``f`` set to NaN (not exported)."""
    shown = redaction(view, fabric, f)
    if shown.host_guids is None:
        return totals
    hidden = shown.hidden_nodes(f)
    a, b = np.asarray(f.a_node, np.int64), np.asarray(f.b_node, np.int64)
    cut = np.r_[hidden[a] | hidden[b], hidden[a] | hidden[b]]
    if not cut.any():
        return totals
    out = np.array(totals, dtype=np.float64, copy=True)
    out[cut] = np.nan
    return out
