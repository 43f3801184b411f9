"""The "Tenants and policy" pages: a summary of the tenants first, then each partition's members with search,
changes previewed before they are applied (and undone from the audit log), QoS, import and export.

Everything shown goes through :mod:`ibweb.access`: a tenant's user sees their own tenants, partitions and
members; the fabric-wide level sees no tenant; changes, the audit log, imports and exports are for the
``ALL`` level with the policy admin's permissions.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import urlencode

import numpy as np
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from fabric_engine.errors import FormatError
from fabric_engine.formats.opensm_qos import parse_sl2vl, parse_vlarb
from ibweb.access import view_of, visible_fabrics, visible_partitions, visible_tenants
from ibweb.auth.permissions import all_tenants_required, view_required

from . import audit, services
from .effect import change_effect
from .engine_policy import policy_data
from .exporters import FILES, default_partition_spec, export_response
from .forms import ImportForm, MemberChangeForm
from .importers import import_partitions_conf
from .models import AuditEntry, Partition, QosPolicy
from .page_data import engine_fabric, job_catalog, leaves_with_hosts, live_jobs, member_rows

IMPORT_PERMS = ("tenancy.add_partition", "tenancy.change_partition", "tenancy.add_partitionmember",
                "tenancy.delete_partitionmember")
MEMBER_PERMS = ("tenancy.add_partitionmember", "tenancy.change_partitionmember", "tenancy.delete_partitionmember")
PAGE_SIZE = 50


@require_GET
@view_required
def policy_index(request):
    """Fabrics whose tenants and policy the visitor may see."""
    return render(request, "tenancy/index.html", {"fabrics": visible_fabrics(view_of(request.user)),
                                                  "nav": "tenancy"})


def _qos_context(fabric) -> dict | None:
    q = QosPolicy.objects.filter(fabric=fabric).first()
    if q is None:
        return None
    return {"policy": q, "sl2vl": list(enumerate(parse_sl2vl(q.sl2vl))), "high": parse_vlarb(q.vlarb_high),
            "low": parse_vlarb(q.vlarb_low)}


def _sharp_allowed(fabric) -> set[str] | None:
    sharp = (fabric.spec or {}).get("sharp")
    if not isinstance(sharp, dict):
        return None
    return set(sharp.get("allowed_tenants") or [])


def _summary(fabric, view, partitions, qos, f) -> tuple[list[dict], list[dict]]:
    """Rows of the summary: per visible tenant its partitions, members, QoS, SHARP and live jobs."""
    sl2vl = dict(qos["sl2vl"]) if qos and qos["policy"].enabled else None
    rows_of = {}
    for p in partitions:
        cls = p.effective_class()
        sl = p.sl if p.sl is not None else (cls.sl if cls else None)
        members = member_rows(f, list(p.members.values_list("guid", "membership")))
        rows_of[p.pk] = {"partition": p, "cls": cls, "sl": sl, "vl": sl2vl.get(sl) if sl2vl and sl is not None
                         else None, "ports": p.n_members, "hosts": len({m["node"] for m in members if m["node"]}),
                         "keywords": p.keyword_members()}
    catalog = job_catalog(fabric)
    live = live_jobs(fabric)
    sharp = _sharp_allowed(fabric)
    tenants = []
    for t in visible_tenants(view).select_related("service_class").annotate(n_users=Count("users")).order_by("name"):
        names = {t.slug, t.name}
        jobs = [j for j in catalog if j["tenant"] in names]
        running = [live[j["id"]] for j in jobs if live.get(j["id"], {}).get("active")]
        tenants.append({"tenant": t, "partitions": [r for r in rows_of.values() if r["partition"].tenant_id == t.pk],
                        "jobs": len(jobs), "running": len(running),
                        "gbps": sum(j.get("achieved_gbps") or 0.0 for j in running),
                        "demand_gbps": sum(j.get("demand_gbps") or 0.0 for j in running),
                        "sharp": None if sharp is None else bool(names & sharp)})
    untenanted = [r for r in rows_of.values() if r["partition"].tenant_id is None]
    return tenants, untenanted


def _members_page(request, partition, f, q: str):
    members = member_rows(f, list(partition.members.order_by("guid").values_list("guid", "membership")))
    if q:
        needle = q.lower()
        members = [m for m in members if needle in m["node"].lower() or needle in m["guid"]
                   or needle in m["leaf"].lower()]
    return Paginator(members, PAGE_SIZE).get_page(request.GET.get("page"))


def _page_context(request, fabric, view, form=None, effect=None, import_preview=None) -> dict:
    restricted = not view.sees_all
    partitions = list(visible_partitions(view).filter(fabric=fabric).annotate(n_members=Count("members"))
                      .select_related("tenant", "service_class", "tenant__service_class"))
    qos = _qos_context(fabric)
    f = engine_fabric(fabric)
    tenants, untenanted = _summary(fabric, view, partitions, qos, f)
    by_hex = {p.pkey_hex: p for p in partitions}
    chosen = by_hex.get(request.GET.get("partition", "")) or (partitions[0] if partitions else None)
    if form is not None and getattr(form, "partition", None) is not None:
        chosen = form.partition
    q = request.GET.get("q", "").strip()[:100]
    can_change = not restricted and request.user.has_perms(MEMBER_PERMS)
    jobs = job_catalog(fabric) if can_change else []
    if can_change and form is None:
        form = _member_form(None, fabric, partitions, f, jobs, initial={"partition": chosen.pkey_hex if chosen else ""})
    history = []
    if not restricted:
        history = (AuditEntry.objects.filter(fabric=fabric, object_type="tenancy.Partition")
                   .order_by("-time", "-id")[:10])
    return {
        "fabric": fabric, "fabric_nav": fabric, "nav": "policy", "tenants": tenants, "untenanted": untenanted,
        "partitions": partitions, "chosen": chosen, "q": q,
        "members": _members_page(request, chosen, f, q) if chosen else None,
        "member_query": urlencode({"partition": chosen.pkey_hex, "q": q}) if chosen else "",
        "restricted": restricted, "default": None if restricted else default_partition_spec(fabric), "qos": qos,
        "files": [] if restricted else FILES, "can_change": can_change, "form": form, "effect": effect,
        "history": history, "can_import": not restricted and request.user.has_perms(IMPORT_PERMS),
        "import_form": ImportForm(), "import_preview": import_preview, "show_users": view.sees_all,
    }


def _member_form(data, fabric, partitions, f, jobs, initial=None) -> MemberChangeForm:
    return MemberChangeForm(data, initial=initial, partitions=partitions, fabric=fabric, engine_fabric=f,
                            leaves=leaves_with_hosts(f), jobs=jobs)


@require_GET
@view_required
def policy_detail(request, slug: str):
    """The summary of the fabric's tenants, a partition's members (searchable), QoS, import and export."""
    view = view_of(request.user)
    fabric = get_object_or_404(visible_fabrics(view), slug=slug)
    return render(request, "tenancy/policy.html", _page_context(request, fabric, view))


def _token(partition, before: dict, after: dict) -> str:
    """What a preview promised: the partition and its member set before and after (apply checks it)."""
    text = json.dumps([partition.pk, sorted(before.items()), sorted(after.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _after_data(fabric, partition, after: dict) -> dict:
    data = policy_data(fabric)
    for p in data["partitions"]:
        if p.get("pkey") == partition.pkey:
            p["members"] = [[g, m] for g, m in after.items()]
    return data


@require_http_methods(["POST"])
@all_tenants_required
def members_change(request, slug: str):
    """Preview a member change (who loses whom, which jobs are cut), or apply the change that was previewed."""
    view = view_of(request.user)
    fabric = get_object_or_404(visible_fabrics(view), slug=slug)
    if not request.user.has_perms(MEMBER_PERMS):
        raise PermissionDenied("changing members needs the policy admin role")
    f = engine_fabric(fabric, build=True)  # a write: its GUIDs are checked on it
    partitions = list(visible_partitions(view).filter(fabric=fabric))
    jobs = job_catalog(fabric)
    form = _member_form(request.POST, fabric, partitions, f, jobs)
    effect = None
    if form.is_valid():
        partition, before, after = form.partition, form.before, form.after
        token = _token(partition, before, after)
        if request.POST.get("step") == "apply" and form.cleaned_data.get("confirm") == token:
            _apply(request, partition, before, after, form)
            return redirect(f"/tenancy/fabrics/{fabric.slug}/?{urlencode({'partition': partition.pkey_hex})}#members")
        if request.POST.get("step") == "apply":
            messages.warning(request, "The partition changed since the preview: here is the preview again.")
        changed = _nodes_of(f, form.targets)
        effect = change_effect(f, policy_data(fabric), _after_data(fabric, partition, after), changed, jobs, limit=8,
                               examples=4)
        form.data = form.data.copy()
        form.data["confirm"] = token
        effect.token = token
        effect.ignored = getattr(form, "ignored", 0)
        effect.targets = len(form.targets)
        effect.partition = partition
        effect.action = "restore" if form.cleaned_data.get("restore") else form.cleaned_data["action"]
    request.GET = request.GET.copy()
    if getattr(form, "partition", None) is not None:
        request.GET["partition"] = form.partition.pkey_hex
    return render(request, "tenancy/policy.html", _page_context(request, fabric, view, form=form, effect=effect))


def _nodes_of(f, guids: list[str]) -> np.ndarray:
    if f is None or not guids:
        return np.zeros(0, dtype=np.int64)
    nodes, hit = f.guid_index.nodes(np.array([int(g, 16) for g in guids], dtype=np.uint64))
    return nodes[hit]


def _apply(request, partition, before: dict, after: dict, form) -> None:
    user = request.user
    if form.cleaned_data.get("restore"):
        services.replace_members(partition, sorted(after.items()), user, via="page")
        messages.success(request, f"{partition}: members restored ({len(after)} now).")
        return
    if form.cleaned_data["action"] == "remove":
        services.remove_members(partition, form.targets, user, via="page")
        messages.success(request, f"{partition}: {len(form.targets)} members removed.")
    else:
        services.add_members(partition, [(g, after[g]) for g in form.targets], user, via="page")
        messages.success(request, f"{partition}: {len(form.targets)} members added or changed.")


@require_GET
@all_tenants_required
def opensm_download(request, slug: str, filename: str):
    """One exported OpenSM file as an attachment."""
    fabric = get_object_or_404(visible_fabrics(view_of(request.user)), slug=slug)
    if filename not in FILES:
        raise Http404(f"unknown file {filename}")
    return export_response(fabric, filename)


class _DryRun(Exception):
    pass


def import_diff(fabric, text: str, replace_members: bool) -> dict:
    """What importing ``text`` would change, computed by importing it in a transaction that is rolled back."""
    def state() -> dict:
        return {p.pkey: {"name": p.name, "snapshot": audit.snapshot(p)}
                for p in Partition.objects.filter(fabric=fabric).prefetch_related("members")}

    before = state()
    result = None
    try:
        with transaction.atomic():
            result = import_partitions_conf(fabric, text, None, replace_members=replace_members)
            after = state()
            raise _DryRun
    except _DryRun:
        pass
    rows = []
    for pkey, now in sorted(after.items()):
        old = before.get(pkey)
        m0 = old["snapshot"]["members"] if old else {}
        m1 = now["snapshot"]["members"]
        fields = sorted(k for k in now["snapshot"] if k not in ("members", "id") and old
                        and old["snapshot"].get(k) != now["snapshot"].get(k))
        rows.append({"pkey": f"0x{pkey:04x}", "name": now["name"], "created": old is None, "fields": fields,
                     "added": sorted(set(m1) - set(m0)), "removed": sorted(set(m0) - set(m1)),
                     "changed": sorted(g for g in set(m0) & set(m1) if m0[g] != m1[g])})
    return {"rows": [r for r in rows if r["created"] or r["fields"] or r["added"] or r["removed"] or r["changed"]],
            "unchanged": sum(1 for r in rows if not (r["created"] or r["fields"] or r["added"] or r["removed"]
                                                     or r["changed"])),
            "notes": result.notes if result else []}


@require_http_methods(["POST"])
@all_tenants_required
def partitions_import(request, slug: str):
    """Preview (``step=preview``: the diff) or import a pasted or uploaded ``partitions.conf``; all or nothing."""
    view = view_of(request.user)
    fabric = get_object_or_404(visible_fabrics(view), slug=slug)
    if not request.user.has_perms(IMPORT_PERMS):
        raise PermissionDenied("importing partitions needs the policy admin role")
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "Nothing imported: " + "; ".join(e for errs in form.errors.values() for e in errs))
        return redirect("tenancy:policy-detail", slug=fabric.slug)
    text, merge = form.cleaned_data["text"], bool(form.cleaned_data.get("merge"))
    if request.POST.get("step") == "preview":
        try:
            diff = import_diff(fabric, text, replace_members=not merge)
        except FormatError as exc:
            messages.error(request, f"Nothing to import: {exc}")
            return redirect("tenancy:policy-detail", slug=fabric.slug)
        context = _page_context(request, fabric, view, import_preview={"diff": diff, "text": text, "merge": merge})
        return render(request, "tenancy/policy.html", context)
    try:
        result = import_partitions_conf(fabric, text, request.user, replace_members=not merge)
    except FormatError as exc:
        messages.error(request, f"Nothing imported: {exc}")
    else:
        messages.success(request, f"Imported: {len(result.created)} created, {len(result.updated)} updated, "
                                  f"{result.members} members.")
        for note in result.notes:
            messages.info(request, note)
    return redirect("tenancy:policy-detail", slug=fabric.slug)
