"""``/metrics``: every visible fabric's ports in the Prometheus text format; the trial sweep of a collector not
saved yet (``POST /api/telemetry/trial-sweep/``)."""

from __future__ import annotations

import time

import numpy as np
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.telemetry.prometheus import CONTENT_TYPE, metric_families, render_families
from ibweb.access import View, redaction, view_of, visible_fabrics
from ibweb.auth.permissions import ViewerRead
from ibweb.events.health import render_event_metrics
from ibweb.fabrics.choices import ROUTING_ENGINES
from ibweb.http.body_limits import JSONParser
from ibweb.runtime.metrics import down_for, metrics_for
from ibweb.websocket.feed_metrics import render_feed_metrics
from ibweb.websocket.flow import feed_socket_stats

from .forms import CollectorForm
from .health_metrics import HEALTH_HELP, health_families
from .trial import may_try, trial_sweep


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
    process's live-feed sockets (``ibweb_feed_*``, :mod:`ibweb.websocket.feed_metrics`) and each fabric's failed
    event writes (``ibweb_event_write*``, :mod:`ibweb.events.health`).
    """

    permission_classes = [ViewerRead]

    def get(self, request):
        view = view_of(request.user)
        fabrics = visible_fabrics(view)
        slug = request.query_params.get("fabric")
        if slug:
            fabrics = fabrics.filter(slug=slug)
        families = []
        now = time.time()
        for fabric in fabrics:  # one entry per fabric
            families.append(health_families(view, fabric))  # link health (issue 37)
            got = metrics_for(fabric)
            if got is None:
                continue
            f, labels, totals, t = got
            families.append(metric_families(labels, _shown_ports(view, fabric, f, totals), fabric.slug,
                                            extra={"infiniband_counters_age_seconds": round(now - t, 3)},
                                            down=_shown_down(view, fabric, f, down_for(fabric))))
        text = render_families(families, help_text=_HELP)  # each family once, whatever the number of fabrics
        if view.sees_all:  # event writes that failed (ibweb.events.health): operators only
            text += render_event_metrics(fabrics)
        if view.sees_all and not slug:  # the process's feed sockets: operators only, not per fabric
            text += render_feed_metrics(feed_socket_stats())
        return HttpResponse(text, content_type=CONTENT_TYPE)


_HELP = {"infiniband_counters_age_seconds": "Seconds since the fabric's counters were read (telemetry-fed) or "
                                           "integrated (emulated).", **HEALTH_HELP}


def _shown_down(view: View, fabric, f, down: list[dict]) -> list[dict]:
    """The ports of cables down whose both ends ``view`` may name: below ``ALL``, nodes of ``f`` not hidden."""
    shown = redaction(view, fabric, f)
    if shown.host_guids is None or not down:
        return down
    hidden = shown.hidden_nodes(f)
    visible = {f"0x{int(g):016x}" for g in np.asarray(f.guid)[~hidden]}  # a node gone from f is not shown
    return [p for p in down if p["guid"] in visible and p["remote_guid"] in visible]


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


class MayTrySweeps(BasePermission):
    """Who may configure a collector (:func:`ibweb.telemetry.trial.may_try`); methods the view lacks answer 405."""

    message = "a trial sweep runs commands on the ibweb server: operators who may configure collectors only"

    def has_permission(self, request, view) -> bool:
        return not hasattr(view, request.method.lower()) or may_try(request.user)


@extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
class TrialSweepView(APIView):
    """``POST /api/telemetry/trial-sweep/``: what a collector would find, before it is saved; nothing is stored.

    The body holds the new-fabric form's collector fields: ``{"source": "commands", "command_prefix": "ssh mgmt01"
    (or a list of words), "environment": "SIM_HOST=gpu0001\\n..." (or an object), "drop_dir": "", "lfts_path":
    "/var/cache/opensm/opensm-lfts.dump", "timeout_s": 10, "interval_s": 10}`` and optionally ``routing_engine``.
    Answers the report of :func:`ibweb.telemetry.trial.trial_sweep` (discovery counts, counters of at most 16
    switches, the LFT dump, errors and reader warnings with their lines), or 400 ``{"errors": {field: [...]}}``.
    It runs the commands on this server: the same users as the collector admin (``ALL`` level, permissions
    ``fabrics.add_fabric`` and ``telemetry.add_collectorconfig``).
    """

    permission_classes = [MayTrySweeps]
    parser_classes = [JSONParser]

    def post(self, request):
        if not isinstance(request.data, dict):
            return Response({"errors": {"non_field_errors": ["expected a JSON object"]}},
                            status=status.HTTP_400_BAD_REQUEST)
        form = CollectorForm(data=request.data)
        if not form.is_valid():
            return Response({"errors": {name: [e["message"] for e in errs]
                                        for name, errs in form.errors.get_json_data().items()}},
                            status=status.HTTP_400_BAD_REQUEST)
        engine = request.data.get("routing_engine")
        engine = engine if engine in dict(ROUTING_ENGINES) else "minhop"
        return Response(trial_sweep(form.save(commit=False), routing_engine=engine))
