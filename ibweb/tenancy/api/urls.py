from django.urls import path
from rest_framework.routers import DefaultRouter

from . import views

app_name = "tenancy-api"

router = DefaultRouter()
router.register("tenants", views.TenantViewSet, basename="tenant")
router.register("service-classes", views.ServiceClassViewSet, basename="serviceclass")
router.register("partitions", views.PartitionViewSet, basename="partition")
router.register("members", views.MemberViewSet, basename="member")
router.register("qos-policies", views.QosPolicyViewSet, basename="qospolicy")
router.register("cc-policies", views.CongestionControlPolicyViewSet, basename="congestioncontrolpolicy")
router.register("audit-entries", views.AuditEntryViewSet, basename="auditentry")

pkeys = views.PKeyViewSet
urlpatterns = [
    path("fabrics/<slug:fabric>/pkeys/", pkeys.as_view({"get": "list", "post": "create"}), name="pkey-list"),
    path("fabrics/<slug:fabric>/pkeys/add/", pkeys.as_view({"post": "add"}), name="pkey-add"),
    path("fabrics/<slug:fabric>/pkeys/<str:pkey>/", pkeys.as_view({"get": "retrieve", "delete": "destroy"}),
         name="pkey-detail"),
    path("fabrics/<slug:fabric>/pkeys/<str:pkey>/guids/", pkeys.as_view({"post": "add_guids", "put": "set_guids"}),
         name="pkey-guids"),
    path("fabrics/<slug:fabric>/pkeys/<str:pkey>/guids/remove/", pkeys.as_view({"post": "remove_guids"}),
         name="pkey-guids-remove"),
    path("fabrics/<slug:fabric>/pkeys/<str:pkey>/qos/", pkeys.as_view({"put": "set_qos", "patch": "set_qos"}),
         name="pkey-qos"),
    path("fabrics/<slug:fabric>/opensm/<str:filename>", views.OpenSMFileView.as_view(), name="opensm-file"),
    *router.urls,
]
