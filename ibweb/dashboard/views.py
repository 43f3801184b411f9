"""Pages that load the frontend bundle; the data comes from the feed and the API."""

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import get_object_or_404, render

from ibweb.fabrics.models import Fabric
from ibweb.permissions import can_view


def _require_view(view):
    def wrapped(request, *args, **kwargs):
        if not can_view(request.user):
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


@_require_view
def fabric_list(request):
    """All fabrics the visitor may see."""
    fabrics = Fabric.objects.restrict(request.user)
    return render(request, "dashboard/fabric_list.html", {"fabrics": fabrics})


@_require_view
def fabric_detail(request, slug: str):
    """The live dashboard of one fabric."""
    fabric = get_object_or_404(Fabric.objects.restrict(request.user), slug=slug)
    return render(request, "dashboard/fabric_detail.html", {"fabric": fabric})
