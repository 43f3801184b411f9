"""Pages of the fabrics app."""

from django.contrib.auth.decorators import permission_required
from django.shortcuts import redirect, render

from .forms import FabricCreateForm


@permission_required("fabrics.add_fabric")
def fabric_add(request):
    """Create a fabric from a generator or an uploaded file; the running engine picks it up."""
    form = FabricCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        fabric = form.save()
        return redirect("dashboard:fabric-detail", slug=fabric.slug)
    return render(request, "fabrics/fabric_form.html", {"form": form})
