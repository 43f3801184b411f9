"""The twin API (``/api/twin/``): jobs of a fabric (read, and pushed with a token), expected against observed,
the cabling plan (upload and report), and the twin's events. Every read goes through :func:`ibweb.access.view_of`.

Routes::

    fabrics/<slug>/jobs/       GET  the running jobs with their bandwidth, figures and links (the user's tenants)
                               POST a scheduler integration pushes jobs (Authorization: Bearer <job token>)
    fabrics/<slug>/expected/   GET  ranked deviations of expected against observed, active alerts
    fabrics/<slug>/plan/       GET  the plan report;  POST upload a plan (file or text; needs twin.change_cablingplan)
    sources/                   GET  job sources (operators)

Persistent deviations and differences from the plan are alerts of the fabric's frames, so the
event store keeps them (``/api/events/...``) with every other alert.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, permissions, status, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from fabric_engine.errors import FabricEngineError
from ibweb.access import view_of, visible_fabrics
from ibweb.auth.bearer import BearerAuthentication, BearerRoute, TokenThrottle
from ibweb.fabrics.models import Fabric
from ibweb.http.body_limits import FormParser, JSONParser, MultiPartParser

from .. import jobs as jobsvc
from .. import plans, report_cache
from ..choices import JobOrigin
from ..models import CablingPlan, JobSource, JobToken, ScheduledJob
from ..visibility import shown_hosts, tenant_names, visible_items, visible_jobs, visible_plan
from .serializers import JobPushSerializer, JobSourceSerializer, PlanUploadSerializer, ScheduledJobSerializer

__all__ = ["FabricJobsView", "ExpectedView", "PlanView", "JobSourceViewSet"]


def _fabric(request, slug: str) -> tuple[Fabric, object]:
    """The fabric and the user's view; 404 when the user may see nothing (never tells a fabric exists)."""
    view = view_of(request.user)
    if not view.may_view:
        raise NotFound("no such fabric")
    return get_object_or_404(visible_fabrics(view), slug=slug), view


def _mine(fabric: Fabric, view, names) -> tuple[list[dict], set[str], set[str] | None]:
    """The user's visible running jobs of the newest report, their IDs, and the GUIDs of the hosts they may see."""
    rep = report_cache.report(fabric.pk) or {}
    jobs = visible_jobs(rep.get("jobs", []), names)
    ids = {j["id"] for j in jobs}
    return jobs, ids, shown_hosts(view, fabric, ids)


class JobTokenAuthentication(BearerAuthentication):
    """``Authorization: Bearer <token>`` with a :class:`JobToken`; ``request.auth`` is the token."""

    token_model = JobToken
    unknown = "unknown job token"


class JobPushThrottle(TokenThrottle):
    """Pushes per job token (the ``push`` rate of ``REST_FRAMEWORK``); 429 with Retry-After beyond."""

    token_model = JobToken
    ident_scope = "jobs"


class _PushOrRead(permissions.BasePermission):
    """Reads: any user the access view lets see something (filtered in the view). Writes: a job token."""

    def has_permission(self, request, view) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return isinstance(request.auth, JobToken)


#: Why a scheduled job is not running when the twin's report names no problem with it.
NOT_YET_PLACED = "not in the twin's newest report yet (the job list changed since its last tick)"


class FabricJobsView(BearerRoute, APIView):
    """The jobs of a telemetry-fed fabric: GET for users (their tenants' jobs), POST for a scheduler with a token."""

    bearer_authentication = JobTokenAuthentication
    permission_classes = [_PushOrRead]
    throttle_classes = [JobPushThrottle]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        fabric, view = _fabric(request, slug)
        names = tenant_names(view)
        rep = report_cache.report(fabric.pk) or {}
        jobs, ids, _ = _mine(fabric, view, names)
        links = report_cache.job_links(fabric.pk)
        rows = ScheduledJob.objects.filter(fabric=fabric)
        if names is not None:
            rows = rows.filter(tenant__in=names)
        out = [{**j, "links": links.get(j["id"], {}).get("links", []), "nodes": links.get(j["id"], {}).get("nodes", [])}
               for j in jobs]
        waiting = [ScheduledJobSerializer(r).data for r in rows if r.job_id not in ids]
        problems = [p for p in rep.get("problems", []) if names is None or p["job"] in ids or
                    p["job"] in {r["job_id"] for r in waiting}]
        why = {p["job"]: p["message"] for p in problems}
        for row in waiting:  # every job not counted as running says why
            row["reason"] = why.get(row["job_id"], NOT_YET_PLACED)
        return Response({"fabric": fabric.slug, "t": rep.get("t"), "jobs": out, "not_running": waiting,
                         "problems": problems, "total_running": len(rep.get("jobs", []))})

    @extend_schema(request=JobPushSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        token: JobToken = request.auth
        source = get_object_or_404(JobSource.objects.select_related("fabric"), fabric__slug=slug)
        if token.source_id != source.pk:
            raise exceptions.PermissionDenied("this token belongs to another fabric")
        limit = jobsvc.host_limit(source.fabric_id, source.fabric)
        body = JobPushSerializer(data=request.data, context={"host_limit": limit})
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            stored, removed = jobsvc.store_jobs(source.fabric, data["jobs"], JobOrigin.PUSH,
                                                replace=data["replace"], source=source)
        except FabricEngineError as exc:
            return Response({"jobs": [str(exc)]}, status=status.HTTP_409_CONFLICT)
        removed += jobsvc.end_jobs(source.fabric, data["ended"], JobOrigin.PUSH)
        JobToken.objects.filter(pk=token.pk).update(last_used=timezone.now())
        return Response({"fabric": slug, "stored": stored, "removed": removed}, status=status.HTTP_201_CREATED)


class ExpectedView(APIView):
    """Expected against observed: ranked deviations and active alerts of the newest tick (the user's share)."""

    permission_classes = [permissions.AllowAny]  # read-only; _fabric() asks view_of and answers 404 for NONE

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        fabric, view = _fabric(request, slug)
        names = tenant_names(view)
        rep = report_cache.report(fabric.pk)
        if rep is None:
            return Response({"fabric": fabric.slug, "t": None, "deviations": [], "alerts": [], "hidden": 0,
                             "detail": "no twin report yet: the fabric's engine has not compared a tick"})
        _, ids, guids = _mine(fabric, view, names)
        devs = visible_items(rep["deviations"], names, ids, guids)
        alerts = visible_items(rep["alerts"], names, ids, guids)
        return Response({"fabric": fabric.slug, "t": rep["t"], "deviations": devs, "alerts": alerts,
                         "hidden": len(rep["deviations"]) - len(devs), "links": rep.get("links")})


class PlanView(APIView):
    """The cabling plan: GET the report (operators see every difference, others the counts); POST a new plan."""

    parser_classes = [MultiPartParser, FormParser, JSONParser]

    def get_permissions(self):
        return [permissions.AllowAny()] if self.request.method in permissions.SAFE_METHODS else \
            [permissions.IsAuthenticated()]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, slug: str):
        fabric, view = _fabric(request, slug)
        row = CablingPlan.objects.filter(fabric=fabric).first()
        if row is None:
            return Response({"fabric": fabric.slug, "plan": None, "report": None})
        live = report_cache.report(fabric.pk) or {}
        report = live.get("plan") or row.report
        return Response({"fabric": fabric.slug, "plan": {"filename": row.filename, "cables": row.cables,
                                                         "uploaded": row.uploaded},
                         "report": visible_plan(report, view)})

    @extend_schema(request=PlanUploadSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        fabric, view = _fabric(request, slug)
        if not view.sees_all or not request.user.has_perm("twin.change_cablingplan"):
            raise exceptions.PermissionDenied("uploading a plan needs the permission to change cabling plans")
        body = PlanUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        f = body.validated_data.get("file")
        if f is not None:
            if f.size > plans.MAX_PLAN_BYTES:
                raise exceptions.ValidationError({"file": f"{f.size} bytes, more than the limit of "
                                                          f"{plans.MAX_PLAN_BYTES}"})
            field, name, data = "file", f.name, f.read()
        else:  # the plan's text, never the name of a file to read (issue 26)
            field, name, data = "text", body.validated_data.get("filename") or "plan.csv", body.validated_data["text"]
        try:
            row = plans.upload(fabric, name, data, request.user)
        except DjangoValidationError as exc:
            raise exceptions.ValidationError({field: exc.messages}) from None
        report_cache.bump_config(fabric.pk)
        return Response({"fabric": fabric.slug, "plan": {"filename": row.filename, "cables": row.cables,
                                                         "uploaded": row.uploaded}},
                        status=status.HTTP_201_CREATED)


class JobSourceViewSet(viewsets.ReadOnlyModelViewSet):
    """Job sources of the fabrics (operators: they show commands and patterns)."""

    serializer_class = JobSourceSerializer

    def get_queryset(self):
        if not view_of(self.request.user).sees_all:
            return JobSource.objects.none()
        return JobSource.objects.select_related("fabric")
