"""``/metrics``: every visible fabric's ports in the Prometheus text format, whole or in parts, and its scrape
targets (``/metrics/targets``); the trial sweep of a collector not saved yet (``POST /api/telemetry/trial-sweep/``).
"""

from __future__ import annotations

import time

import numpy as np
from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.telemetry.metric_targets import node_ranges, part_of
from fabric_engine.telemetry.prometheus import CONTENT_TYPE, metric_families, port_nodes, render_families
from ibweb.access import View, redaction, view_of, visible_fabrics
from ibweb.auth.permissions import ViewerRead
from ibweb.events.health import render_event_metrics
from ibweb.fabrics.choices import ROUTING_ENGINES
from ibweb.http.body_limits import JSONParser
from ibweb.runtime.metrics import counters_layout, down_for, metrics_for, read_totals
from ibweb.websocket.feed_metrics import render_feed_metrics
from ibweb.websocket.flow import feed_socket_stats

from .cc_metrics import CC_HELP, cc_families
from .device_metrics import DEVICE_HELP, vitals_families
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

    A large fabric is scraped in parts (``?fabric=<slug>&part=<k>``: the ports of a range of its nodes, at most
    ``IBWEB_METRICS_TARGET_PORTS`` and one switch's more, :mod:`fabric_engine.telemetry.metric_targets`; part 0
    also carries the fabric-wide series), listed by ``/metrics/targets`` for Prometheus' ``http_sd_configs``;
    ``?process=1`` is this web process's own series alone.

    What each level gets (:mod:`ibweb.access`): ``ALL`` every port; ``TENANTS`` the
    ports between switches and those of (and facing) its tenants' hosts; ``FABRIC``
    (anonymous where public read is on) the ports between switches only. A port of a
    host the view does not see is left out with the switch port facing it, so no
    name, GUID or counter of another tenant's host appears. Device vitals (switch fans, power supplies,
    temperatures: :mod:`.device_metrics`) follow the same levels by device. ``ALL`` also gets this web
    process's live-feed sockets (``ibweb_feed_*``, :mod:`ibweb.websocket.feed_metrics`) and each fabric's failed
    event writes (``ibweb_event_write*``, :mod:`ibweb.events.health`).
    """

    permission_classes = [ViewerRead]

    def get(self, request):
        view = view_of(request.user)
        if request.query_params.get("process") is not None:  # the process's feed sockets: operators only
            text = render_feed_metrics(feed_socket_stats()) if view.sees_all else ""
            return HttpResponse(text, content_type=CONTENT_TYPE)
        fabrics = visible_fabrics(view)
        slug = request.query_params.get("fabric")
        part = _part(request, slug)
        if slug:
            fabrics = fabrics.filter(slug=slug)
            if part is not None and not fabrics.exists():
                raise NotFound(f"no fabric {slug!r}")
        families = []
        now = time.time()
        for fabric in fabrics:  # one entry per fabric
            got, nodes = _counters(fabric, part)
            families.append(health_families(view, fabric, nodes))  # link health (issue 37)
            families.append(cc_families(view, fabric, nodes))  # FECN/BECN rates (issue 41)
            families.append(vitals_families(view, fabric, nodes))  # switch fans, PSUs, temperatures (issue 38)
            if got is None:
                continue
            f, labels, totals, t = got
            age = {"infiniband_counters_age_seconds": round(now - t, 3)} if not part else None
            families.append(metric_families(labels, totals, fabric.slug, extra=age, nodes=nodes,
                                            hidden=_hidden_ports(view, fabric, f),
                                            down=_shown_down(view, fabric, f, down_for(fabric))))
        text = render_families(families, help_text=_HELP)  # each family once, whatever the number of fabrics
        if view.sees_all and not part:  # event writes that failed (ibweb.events.health): operators only
            text += render_event_metrics(fabrics)
        if view.sees_all and not slug:  # the process's feed sockets: operators only, not per fabric
            text += render_feed_metrics(feed_socket_stats())
        return HttpResponse(text, content_type=CONTENT_TYPE)


def _part(request, slug: str | None) -> int | None:
    """The ``part`` asked for (None: the whole fabric); 400 when it is no part number or comes without a fabric."""
    raw = request.query_params.get("part")
    if raw is None:
        return None
    if not slug:
        raise ValidationError({"part": "a part is of one fabric: give ?fabric=<slug> too"})
    if not (raw.isascii() and raw.isdigit() and len(raw) < 7):
        raise ValidationError({"part": f"expected a part number (0, 1, ...), got {raw!r}"})
    return int(raw)


def _counters(fabric, part: int | None) -> tuple[tuple | None, tuple[int, int] | None]:
    """The fabric's counters (``(fabric, labels, totals, t)`` of :func:`~ibweb.runtime.metrics.metrics_for`,
    only the part's read) and the node range of ``part`` (None: the whole fabric); 404 for a part of a fabric
    without counters or without that part."""
    if part is None:
        return metrics_for(fabric), None
    layout = counters_layout(fabric)
    if layout is None:
        raise NotFound(f"fabric {fabric.slug}: no counters published yet, so no parts (scrape ?fabric= alone)")
    try:
        nodes = part_of(target_bounds(layout), part)
    except IndexError as exc:
        raise NotFound(f"fabric {fabric.slug}: {exc}") from None
    f, labels = layout
    return (f, labels, read_totals(fabric, labels, nodes), labels["t"]), nodes


def target_bounds(got) -> np.ndarray:
    """The node ranges a fabric's ``/metrics`` is cut into (``got``: its engine fabric and port labels first)."""
    f, labels = got[0], got[1]
    return node_ranges(port_nodes(labels), f.num_nodes, settings.IBWEB_METRICS_TARGET_PORTS)


@extend_schema(responses=OpenApiTypes.OBJECT)
class MetricsTargetsView(APIView):
    """``/metrics/targets``: the scrape targets of ``/metrics``, in the form Prometheus' ``http_sd_configs`` reads.

    One target per part of every fabric the caller may see (``?fabric=<slug>&part=<k>``; a fabric whose counters
    are not published yet, or small enough for one part, one ``?fabric=<slug>`` target), and, for operators, this
    process's own series (``?process=1``). Each target's ``instance`` label names its part, so their ``up``
    series differ; the address is the one the caller reached.
    """

    permission_classes = [ViewerRead]

    def get(self, request):
        view = view_of(request.user)
        address = request.get_host()
        groups = []
        for fabric in visible_fabrics(view).order_by("slug"):
            got = counters_layout(fabric)
            parts = len(target_bounds(got)) - 1 if got is not None else 1
            for k in range(parts):  # one target group per part
                params = {"__param_fabric": fabric.slug, **({"__param_part": str(k)} if parts > 1 else {})}
                query = "&".join(f"{name.removeprefix('__param_')}={value}" for name, value in params.items())
                groups.append({"targets": [address], "labels": {
                    "__metrics_path__": "/metrics", **params, "instance": f"{address}/metrics?{query}"}})
        if view.sees_all:
            groups.append({"targets": [address], "labels": {"__metrics_path__": "/metrics", "__param_process": "1",
                                                             "instance": f"{address}/metrics?process=1"}})
        return Response(groups)


_HELP = {"infiniband_counters_age_seconds": "Seconds since the fabric's counters were read (telemetry-fed) or "
                                           "integrated (emulated).", **HEALTH_HELP, **DEVICE_HELP,
         **CC_HELP}


def _shown_down(view: View, fabric, f, down: list[dict]) -> list[dict]:
    """The ports of cables down whose both ends ``view`` may name: below ``ALL``, nodes of ``f`` not hidden."""
    shown = redaction(view, fabric, f)
    if shown.host_guids is None or not down:
        return down
    hidden = shown.hidden_nodes(f)
    visible = {f"0x{int(g):016x}" for g in np.asarray(f.guid)[~hidden]}  # a node gone from f is not shown
    return [p for p in down if p["guid"] in visible and p["remote_guid"] in visible]


def _hidden_ports(view: View, fabric, f) -> np.ndarray | None:
    """Per directed link of ``f``, whether its out port is at or facing a host ``view`` may not see (not
    exported); None: every port shown."""
    shown = redaction(view, fabric, f)
    if shown.host_guids is None:
        return None
    hidden = shown.hidden_nodes(f)
    a, b = np.asarray(f.a_node, np.int64), np.asarray(f.b_node, np.int64)
    cut = hidden[a] | hidden[b]
    return np.r_[cut, cut] if cut.any() else None


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
