"""Pages of the fabrics app, and the API the new-fabric page uses (generators, preview).

The new-fabric page makes an emulated fabric (a generator's design or an uploaded file) or a
telemetry-fed one (a collector, optionally a job source and a cabling plan; its test sweep is
``POST /api/telemetry/trial-sweep/``, :mod:`ibweb.telemetry.trial`).
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.errors import FabricEngineError
from fabric_engine.scenario import build_fabric
from fabric_engine.topology.limits import check_generator_parameters
from ibweb.access import view_of
from ibweb.body_limits import FormParser, JSONParser, MultiPartParser
from ibweb.telemetry.trial import MAX_TRIAL_SWITCHES, may_try
from ibweb.twin.engine import bump_config

from .choices import ROUTING_ENGINES
from .forms import COMMANDS_WARNING, DEFAULT_BACKGROUND, WATCH, CollectorForm, FabricCreateForm, TwinForm, field_name
from .generators import GENERATOR_INFO, GROUPS, schema, topology_of
from .preview import line_of, summary, topology_errors
from .routing_estimate import load_model
from .uploads import NOT_A_PATH, fabric_from_upload

#: What the twin's parts need beyond configuring a collector (the admin and the plan page ask the same).
TWIN_PERMISSIONS = {"job_source": "twin.add_jobsource", "plan_file": "twin.change_cablingplan"}
NOT_ALLOWED = "watching a real fabric runs commands on the ibweb server: operators who may configure collectors only"


@permission_required("fabrics.add_fabric")
def fabric_add(request: HttpRequest) -> HttpResponse:
    """Create a fabric from a generator's parameters, an uploaded file, or a real fabric's collector; the running
    engine picks it up. A push token made for the new fabric is shown once, on the page that answers."""
    posted = request.method == "POST"
    initial = {"source": request.GET["source"]} if request.GET.get("source") == WATCH else None
    form = FabricCreateForm(request.POST or None, request.FILES or None, initial=initial)
    collector = CollectorForm(request.POST or None, prefix="collector")
    twin = TwinForm(request.POST or None, request.FILES or None, prefix="twin")
    wants_json = "application/json" in request.headers.get("Accept", "")  # the page's upload with a progress bar
    watching = posted and request.POST.get("source") == WATCH
    valid = posted and form.is_valid()
    if watching:
        valid = _watch_allowed(request, form, twin) & collector.is_valid() & twin.is_valid() & valid
    if valid:
        if watching:
            return _create_watched(request, form, collector, twin, wants_json)
        fabric = form.save()
        if wants_json:
            return JsonResponse({"slug": fabric.slug, "url": reverse("dashboard:fabric-detail", args=[fabric.slug])},
                                status=201)
        return redirect("dashboard:fabric-detail", slug=fabric.slug)
    if posted and wants_json:
        errors = {name: [e["message"] for e in errs] for name, errs in form.errors.get_json_data().items()}
        if watching:
            errors.update({f"{f.prefix}-{name}": [e["message"] for e in errs]
                           for f in (collector, twin) for name, errs in f.errors.get_json_data().items()})
        line = line_of(errors.get("topology_file", [""])[0])
        return JsonResponse({"errors": errors, "line": line}, status=400)
    generators = [{"name": g, "label": label, "description": text,
                   "groups": [{"name": key, "label": title, "fields": [form[field_name(g, p.name)]
                                                                       for p in form.params[g] if p.group == key]}
                              for key, title in GROUPS.items()]}
                  for g, (label, text) in GENERATOR_INFO.items()]
    context = {"form": form, "generators": generators, "schema": schema(), "nav": "add", "model": load_model(),
               "background": DEFAULT_BACKGROUND, "collector": collector, "twin": twin,
               "may_watch": may_try(request.user), "commands_warning": COMMANDS_WARNING,
               "trial_switches": MAX_TRIAL_SWITCHES}
    return render(request, "fabrics/fabric_form.html", context)


def _watch_allowed(request: HttpRequest, form: FabricCreateForm, twin: TwinForm) -> bool:
    """Whether the user may configure what the posted real fabric asks for; errors at the fields otherwise."""
    if not may_try(request.user):
        form.add_error("source", NOT_ALLOWED)
        return False
    denied = [name for name, perm in TWIN_PERMISSIONS.items()
              if (request.POST.get(f"twin-{name}") or request.FILES.get(f"twin-{name}"))
              and not request.user.has_perm(perm)]
    for name in denied:
        twin.add_error(name, f"needs the {TWIN_PERMISSIONS[name]} permission")
    return not denied


def _create_watched(request: HttpRequest, form: FabricCreateForm, collector: CollectorForm, twin: TwinForm,
                    wants_json: bool) -> HttpResponse:
    """Save the telemetry-fed fabric, its collector and twin parts in one transaction; show new tokens once."""
    with transaction.atomic():
        fabric = form.save()
        config, push_key = collector.save_for(fabric)
        job_key = twin.save_for(fabric, request.user)
    if twin.plan is not None:
        bump_config(fabric.pk)
    url = reverse("dashboard:fabric-detail", args=[fabric.slug])
    if not push_key and not job_key:
        if wants_json:
            return JsonResponse({"slug": fabric.slug, "url": url}, status=201)
        return redirect(url)
    origin = request.build_absolute_uri("/").rstrip("/")
    push = {"key": push_key, "url": origin + reverse("telemetry-api:push-samples", args=[fabric.slug])} \
        if push_key else None
    jobs = {"key": job_key, "url": origin + reverse("twin-api:jobs", args=[fabric.slug])} if job_key else None
    if wants_json:
        return JsonResponse({"slug": fabric.slug, "url": url, "push_token": push, "job_token": jobs}, status=201)
    response = render(request, "fabrics/fabric_created.html", {"fabric": fabric, "url": url, "push": push,
                                                               "jobs": jobs, "config": config, "nav": "add"},
                      status=201)
    response["Cache-Control"] = "no-store"
    return response


class CanAddFabrics(BasePermission):
    """Reads need a view; previews (a fabric is built) need the permission to add fabrics."""

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return view_of(request.user).may_view
        return bool(request.user and request.user.is_authenticated and request.user.has_perm("fabrics.add_fabric"))


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
