"""Pages that load the frontend bundle; the data comes from the feed and the API."""

from django.shortcuts import get_object_or_404, render

from ibweb.fabrics.models import Fabric
from ibweb.permissions import view_required


@view_required
def fabric_list(request):
    """All fabrics the visitor may see."""
    fabrics = Fabric.objects.restrict(request.user)
    return render(request, "dashboard/fabric_list.html", {"fabrics": fabrics})


@view_required
def fabric_detail(request, slug: str):
    """The live dashboard of one fabric."""
    fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
    return render(request, "dashboard/fabric_detail.html", {"fabric": fabric})
