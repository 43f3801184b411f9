"""Live data of a fabric under ``/api/fabrics/fabrics/<slug>/``: history, rollups, paths, jobs, routing report."""

from django.urls import path

from ibweb.live.api.engine_views import SharpView, StorageView
from ibweb.live.api.health_cables import HealthCablesView
from ibweb.live.api.health_views import HealthPortView, HealthView
from ibweb.live.api.history_views import LinkHistoryView, PortHistoryView
from ibweb.live.api.job_tsdb_views import JobTsdbView
from ibweb.live.api.jobs_views import JobsView
from ibweb.live.api.path_views import PathView
from ibweb.live.api.rollup_views import LinkRollupsView, PortRollupsView
from ibweb.live.api.routing_views import RoutingReportView
from ibweb.live.api.tsdb_ports import PortsTsdbView
from ibweb.live.api.tsdb_views import NodeTsdbView, PortTsdbView, TsdbTopView
from ibweb.live.api.validation_views import DeviceView, ValidationCsvView, ValidationView

app_name = "live-api"

urlpatterns = [
    path("fabrics/<slug:slug>/links/<int:link>/history/", LinkHistoryView.as_view(), name="link-history"),
    path("fabrics/<slug:slug>/links/<int:link>/rollups/", LinkRollupsView.as_view(), name="link-rollups"),
    path("fabrics/<slug:slug>/links/-1/rollups/", LinkRollupsView.as_view(), {"link": -1}, name="fabric-rollups"),
    path("fabrics/<slug:slug>/ports/<str:node>/<int:port>/history/", PortHistoryView.as_view(), name="port-history"),
    path("fabrics/<slug:slug>/ports/<str:node>/<int:port>/rollups/", PortRollupsView.as_view(), name="port-rollups"),
    path("fabrics/<slug:slug>/ports/<str:node>/<int:port>/tsdb/", PortTsdbView.as_view(), name="port-tsdb"),
    path("fabrics/<slug:slug>/tsdb/top/", TsdbTopView.as_view(), name="fabric-tsdb-top"),
    path("fabrics/<slug:slug>/tsdb/ports/", PortsTsdbView.as_view(), name="fabric-tsdb-ports"),
    path("fabrics/<slug:slug>/nodes/<str:node>/tsdb/", NodeTsdbView.as_view(), name="node-tsdb"),
    path("fabrics/<slug:slug>/jobs/<str:job>/tsdb/", JobTsdbView.as_view(), name="job-tsdb"),
    path("fabrics/<slug:slug>/path/", PathView.as_view(), name="fabric-path"),
    path("fabrics/<slug:slug>/jobs/", JobsView.as_view(), name="fabric-jobs"),
    path("fabrics/<slug:slug>/routing/", RoutingReportView.as_view(), name="fabric-routing"),
    path("fabrics/<slug:slug>/sharp/", SharpView.as_view(), name="fabric-sharp"),
    path("fabrics/<slug:slug>/storage/", StorageView.as_view(), name="fabric-storage"),
    path("fabrics/<slug:slug>/health/", HealthView.as_view(), name="fabric-health"),
    path("fabrics/<slug:slug>/health/cables/", HealthCablesView.as_view(), name="fabric-health-cables"),
    path("fabrics/<slug:slug>/health/ports/<str:node>/<int:port>/", HealthPortView.as_view(),
         name="fabric-health-port"),
    path("fabrics/<slug:slug>/validation/", ValidationView.as_view(), name="fabric-validation"),
    path("fabrics/<slug:slug>/validation/findings.csv", ValidationCsvView.as_view(), name="fabric-validation-csv"),
    path("fabrics/<slug:slug>/devices/<str:node>/", DeviceView.as_view(), name="fabric-device"),
]
