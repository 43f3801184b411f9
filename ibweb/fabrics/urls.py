from django.urls import path

from . import views

app_name = "fabrics"

urlpatterns = [
    path("fabrics/add/", views.fabric_add, name="fabric-add"),
    # the new-fabric page's API (under /api/fabrics/, beside the fabrics API)
    path("api/fabrics/generators/", views.GeneratorsView.as_view(), name="fabric-generators"),
    path("api/fabrics/preview/", views.FabricPreviewView.as_view(), name="fabric-preview"),
]
