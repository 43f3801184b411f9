"""The cabling plan page of a fabric: the report of differences, and the upload for operators."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from ibweb.access import Level, view_of
from ibweb.auth.permissions import view_required
from ibweb.fabrics.models import Fabric

from . import plans, report_cache
from .forms import PlanUploadForm
from .models import CablingPlan
from .visibility import visible_plan

UPLOAD_PERMISSION = "twin.change_cablingplan"
KIND_TEXT = {"missing": "missing", "miswired": "miswired", "extra": "not in the plan", "wrong_speed": "wrong speed",
             "wrong_width": "wrong width"}


def _discovered(fabric):
    """The fabric of row ``fabric`` as its engine published it (the runtime record), or None before its first
    discovery."""
    from ibweb.runtime import record

    h = record.head_of(fabric)
    return record.fabric(fabric.pk, h) if h is not None else None


def _found(issue: dict) -> str:
    found = issue.get("found")
    if isinstance(found, list):
        return "; ".join(found)
    if found:
        return str(found)
    return "not cabled" if issue["kind"] == "missing" else "–"


@require_http_methods(["GET", "POST"])
@view_required
def plan_detail(request, slug: str):
    """The plan of a fabric against its discovered cabling; operators upload a new plan here."""
    view = view_of(request.user)
    fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
    may_upload = view.level == Level.ALL and request.user.has_perm(UPLOAD_PERMISSION)
    form = PlanUploadForm()
    if request.method == "POST":
        if not may_upload:
            return render(request, "twin/plan.html", {"fabric": fabric, "fabric_nav": fabric, "nav": "plan",
                                                      "denied": True}, status=403)
        form = PlanUploadForm(request.POST, request.FILES)
        if form.is_valid():
            f = form.cleaned_data["file"]
            try:
                row = plans.upload(fabric, f.name, f.read(), request.user)
            except ValidationError as exc:
                form.add_error("file", exc.messages)
            else:
                report_cache.bump_config(fabric.pk)
                messages.success(request, f"Plan {row.filename} stored: {row.cables} cables.")
                return redirect("twin:plan", slug=fabric.slug)
    row = CablingPlan.objects.filter(fabric=fabric).first()
    report = None
    if row is not None:
        report = (report_cache.report(fabric.pk) or {}).get("plan") or row.report
        discovered = _discovered(fabric) if report is None else None
        if discovered is not None:
            report, _ = plans.check(row, discovered, save=False)
    shown = visible_plan(report, view)
    if shown is not None and "issues" in shown:
        shown = {**shown, "issues": [{**i, "found_text": _found(i), "kind_text": KIND_TEXT.get(i["kind"], i["kind"])}
                                     for i in shown["issues"]]}
    return render(request, "twin/plan.html", {
        "fabric": fabric, "fabric_nav": fabric, "nav": "plan", "plan": row, "report": shown,
        "full": shown is not None and "issues" in shown, "form": form if may_upload else None},
        status=400 if form.errors else 200)
