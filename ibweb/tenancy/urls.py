from django.urls import path

from . import views

app_name = "tenancy"

urlpatterns = [
    path("", views.policy_index, name="policy-index"),
    path("fabrics/<slug:slug>/", views.policy_detail, name="policy-detail"),
    path("fabrics/<slug:slug>/members/", views.members_change, name="members-change"),
    path("fabrics/<slug:slug>/import/", views.partitions_import, name="partitions-import"),
    path("fabrics/<slug:slug>/opensm/<str:filename>", views.opensm_download, name="opensm-download"),
]
