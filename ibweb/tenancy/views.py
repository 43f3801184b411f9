"""The "Tenants and policy" pages: read-only for viewers; import and downloads for those allowed."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from fabric_engine.errors import FormatError
from fabric_engine.formats.opensm_qos import parse_sl2vl, parse_vlarb
from ibweb.fabrics.models import Fabric
from ibweb.permissions import view_required

from .access import visible_tenant_ids
from .exporters import FILES, default_partition_spec, export_response
from .forms import ImportForm
from .importers import import_partitions_conf
from .inventory import member_nodes
from .models import Partition, QosPolicy, Tenant

IMPORT_PERMS = ("tenancy.add_partition", "tenancy.change_partition", "tenancy.add_partitionmember",
                "tenancy.delete_partitionmember")


@require_GET
@view_required
def policy_index(request):
    """Fabrics whose tenants and policy the visitor may see."""
    return render(request, "tenancy/index.html", {"fabrics": Fabric.objects.restrict(request.user)})


def _qos_context(fabric) -> dict | None:
    q = QosPolicy.objects.filter(fabric=fabric).first()
    if q is None:
        return None
    return {"policy": q, "sl2vl": list(enumerate(parse_sl2vl(q.sl2vl))), "high": parse_vlarb(q.vlarb_high),
            "low": parse_vlarb(q.vlarb_low)}


@require_GET
@view_required
def policy_detail(request, slug: str):
    """Each tenant's partitions, where their members sit on the topology, and the fabric's QoS."""
    fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
    restricted = visible_tenant_ids(request.user) is not None
    parts = (Partition.objects.restrict(request.user).filter(fabric=fabric)
             .select_related("tenant", "service_class", "tenant__service_class").prefetch_related("members"))
    rows = []
    for p in parts:
        guids = [m.guid for m in p.members.all()]
        where = {d["guid"]: d for d in member_nodes(fabric, guids)} if guids else {}
        rows.append({"partition": p, "effective": p.effective_class(), "keywords": p.keyword_members(),
                     "members": [{"guid": m.guid, "membership": m.membership, **where.get(m.guid, {})}
                                 for m in p.members.all()]})
    tenants = Tenant.objects.restrict(request.user).select_related("service_class")
    by_tenant = [{"tenant": t, "partitions": [r for r in rows if r["partition"].tenant_id == t.pk]} for t in tenants]
    untenanted = [r for r in rows if r["partition"].tenant_id is None]
    context = {
        "fabric": fabric, "tenants": by_tenant, "untenanted": untenanted, "restricted": restricted,
        "default": None if restricted else default_partition_spec(fabric), "qos": _qos_context(fabric),
        "files": [] if restricted else FILES,
        "can_import": not restricted and request.user.has_perms(IMPORT_PERMS), "import_form": ImportForm(),
    }
    return render(request, "tenancy/policy.html", context)


@require_GET
@view_required
def opensm_download(request, slug: str, filename: str):
    """One exported OpenSM file as an attachment."""
    fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
    if filename not in FILES:
        raise Http404(f"unknown file {filename}")
    if visible_tenant_ids(request.user) is not None:
        raise PermissionDenied("the OpenSM files show every tenant")
    return export_response(fabric, filename)


@require_http_methods(["POST"])
def partitions_import(request, slug: str):
    """Import a pasted or uploaded ``partitions.conf``; all or nothing."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
    if not request.user.has_perms(IMPORT_PERMS) or visible_tenant_ids(request.user) is not None:
        raise PermissionDenied("importing partitions needs the policy admin role")
    form = ImportForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            result = import_partitions_conf(fabric, form.cleaned_data["text"], request.user,
                                            replace_members=not form.cleaned_data.get("merge"))
        except FormatError as exc:
            messages.error(request, f"Nothing imported: {exc}")
        else:
            messages.success(request, f"Imported: {len(result.created)} created, {len(result.updated)} updated, "
                                      f"{result.members} members.")
            for note in result.notes:
                messages.info(request, note)
    else:
        messages.error(request, "Nothing imported: " + "; ".join(e for errs in form.errors.values() for e in errs))
    return redirect("tenancy:policy-detail", slug=fabric.slug)
