"""Pages of the fabrics app, and the API the new-fabric page uses (generators, preview).

The new-fabric page makes an emulated fabric (a generator's design or an uploaded file) or a
telemetry-fed one: a collector, optionally a job source and a cabling plan, the parts the telemetry and twin apps
declare (:class:`~.forms.WatchPart`); its test sweep is the telemetry app's ``POST /api/telemetry/trial-sweep/``.
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.forms import Form
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.errors import FabricEngineError
from fabric_engine.scenario import build_fabric
from fabric_engine.topology.limits import check_generator_parameters
from ibweb.access import view_of
from ibweb.http.body_limits import FormParser, JSONParser, MultiPartParser

from .choices import ROUTING_ENGINES
from .forms import DEFAULT_BACKGROUND, WATCH, FabricCreateForm, WatchPart, field_name, watch_parts
from .generators import GENERATOR_INFO, GROUPS, schema, topology_of
from .preview import line_of, summary, topology_errors
from .routing_estimate import load_model
from .uploads import NOT_A_PATH, fabric_from_upload


@permission_required("fabrics.add_fabric")
def fabric_add(request: HttpRequest) -> HttpResponse:
    """Create a fabric from a generator's parameters, an uploaded file, or a real fabric's parts (its collector, job
    source and plan: :func:`~.forms.watch_parts`); the running engine picks it up. A token made for the new fabric
    is shown once, on the page that answers."""
    posted = request.method == "POST"
    initial = {"source": request.GET["source"]} if request.GET.get("source") == WATCH else None
    form = FabricCreateForm(request.POST or None, request.FILES or None, initial=initial)
    parts = {part: part.form(request) for part in watch_parts()}
    wants_json = "application/json" in request.headers.get("Accept", "")  # the page's upload with a progress bar
    watching = posted and request.POST.get("source") == WATCH
    valid = posted and form.is_valid()
    if watching:
        allowed = all(part.allowed(request, form, f) for part, f in parts.items())
        checked = [f.is_valid() for f in parts.values()]  # every part's errors shown at once
        valid = allowed & all(checked) & valid
    if valid:
        if watching:
            return _create_watched(request, form, parts, wants_json)
        fabric = form.save()
        if wants_json:
            return JsonResponse({"slug": fabric.slug, "url": reverse("dashboard:fabric-detail", args=[fabric.slug])},
                                status=201)
        return redirect("dashboard:fabric-detail", slug=fabric.slug)
    if posted and wants_json:
        errors = {name: [e["message"] for e in errs] for name, errs in form.errors.get_json_data().items()}
        if watching:
            errors.update({f"{f.prefix}-{name}": [e["message"] for e in errs]
                           for f in parts.values() for name, errs in f.errors.get_json_data().items()})
        line = line_of(errors.get("topology_file", [""])[0])
        return JsonResponse({"errors": errors, "line": line}, status=400)
    generators = [{"name": g, "label": label, "description": text,
                   "groups": [{"name": key, "label": title, "fields": [form[field_name(g, p.name)]
                                                                       for p in form.params[g] if p.group == key]}
                              for key, title in GROUPS.items()]}
                  for g, (label, text) in GENERATOR_INFO.items()]
    context = {"form": form, "generators": generators, "schema": schema(), "nav": "add", "model": load_model(),
               "background": DEFAULT_BACKGROUND}
    for part, f in parts.items():
        context.update({part.name: f, **part.context(request)})
    return render(request, "fabrics/fabric_form.html", context)


def _create_watched(request: HttpRequest, form: FabricCreateForm, parts: dict[WatchPart, Form],
                    wants_json: bool) -> HttpResponse:
    """Save the telemetry-fed fabric and its parts in one transaction; show new tokens once."""
    shown: dict = {}
    with transaction.atomic():
        fabric = form.save()
        for part, f in parts.items():
            shown.update(part.save_for(request, fabric, f))
    for part, f in parts.items():
        part.committed(fabric, f)
    url = reverse("dashboard:fabric-detail", args=[fabric.slug])
    tokens = {answer: shown.get(name) for part in parts for name, answer in part.tokens.items()}
    if not any(tokens.values()):
        if wants_json:
            return JsonResponse({"slug": fabric.slug, "url": url}, status=201)
        return redirect(url)
    if wants_json:
        return JsonResponse({"slug": fabric.slug, "url": url, **tokens}, status=201)
    response = render(request, "fabrics/fabric_created.html", {**shown, "fabric": fabric, "url": url, "nav": "add"},
                      status=201)
    response["Cache-Control"] = "no-store"
    return response


class CanAddFabrics(BasePermission):
    """Reads need a view; previews (a fabric is built) need the permission to add fabrics."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return view_of(request.user).may_view
        return bool(request.user and request.user.is_authenticated and request.user.has_perm("fabrics.add_fabric"))


@extend_schema(responses=OpenApiTypes.OBJECT)
class GeneratorsView(APIView):
    """``GET /api/fabrics/generators/``: every generator's parameters with types, defaults, valid ranges and why."""

    permission_classes = [CanAddFabrics]

    def get(self, request):
        return Response({"generators": schema(), "routing_engines": [e for e, _ in ROUTING_ENGINES]})


class _PreviewBody(serializers.Serializer):
    generator = serializers.ChoiceField(choices=list(GENERATOR_INFO), required=False)
    params = serializers.DictField(required=False, default=dict)
    routing_engine = serializers.ChoiceField(choices=[e for e, _ in ROUTING_ENGINES], default="minhop")
    topology_file = serializers.FileField(required=False, error_messages={"invalid": NOT_A_PATH})


@extend_schema(request=_PreviewBody, responses=OpenApiTypes.OBJECT)
class FabricPreviewView(APIView):
    """``POST /api/fabrics/preview/``: what a fabric would be, without creating it.

    Body: ``{"generator": "fat_tree", "params": {"hosts": 2048, ...}, "routing_engine": "minhop"}`` (JSON),
    or a multipart ``topology_file`` (and ``routing_engine``). Answers ``{"valid": true}`` with the
    :func:`ibweb.fabrics.preview.summary` of the fabric and the ``topology`` spec that creates it, or
    ``{"valid": false, "errors": ...}`` naming the parameter (``{"params": {"radix": [...]}}``) or the file
    and line (``{"topology_file": [...], "line": 12}``): an invalid design is a preview too. A malformed
    request (an unknown generator or routing engine) is a 400.
    """

    permission_classes = [CanAddFabrics]
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    def post(self, request):
        body = _PreviewBody(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        engine = data["routing_engine"]
        upload = data.get("topology_file")
        if upload is not None:
            try:
                fabric, spec = fabric_from_upload(upload)
            except DjangoValidationError as exc:
                message = exc.message_dict["topology_file"][0]
                return Response({"valid": False, "errors": {"topology_file": [message], "line": line_of(message)}})
            spec = {k: v for k, v in spec.items() if k != "fabric"}
        else:
            generator = data.get("generator") or "fat_tree"
            params = data["params"]
            try:
                check_generator_parameters(generator, params)
                spec = topology_of(generator, params)
                fabric = build_fabric(spec)
            except FabricEngineError as exc:
                errors = topology_errors(str(exc))
                return Response({"valid": False, "errors": {
                    "params": {k: [v] for k, v in errors.items() if k != "topology"},
                    **({"topology": [errors["topology"]]} if "topology" in errors else {})}})
            except TypeError as exc:  # a parameter of the wrong type that the bounds let through
                return Response({"valid": False, "errors": {"topology": [str(exc)]}})
        return Response({"valid": True, **summary(fabric, engine), "topology": spec})
