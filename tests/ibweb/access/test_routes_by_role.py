"""Every route x every role (issue 14): the expected status, and no identifier of a tenant the role may not see.

The routes come from Django's URL resolver (DRF routers and the admin included); a
route without an entry in :data:`ROUTES` (or, for the admin, a model without one in
:data:`ADMIN_MODELS`) fails :func:`test_every_route_has_an_entry`, so every new
endpoint must say what each role gets. Each route is requested with ``GET`` and with
an empty ``POST``; a role below ``ALL`` must also change nothing with ``PUT``, ``PATCH``
or ``DELETE``. A service account (issue 42) calls with its API token; what it gets is derived
(:func:`service_expected`). Bodies are searched for every identifier of the tenants the role may
not see (:func:`tests.support.access_fixtures.identifiers`) and for the collector secrets,
which nobody may read back.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from rest_framework.views import APIView

from ibweb.fabrics.models import Analysis
from ibweb.live.engine.runner import FabricRunner
from ibweb.telemetry.models import Sweep
from ibweb.tenancy.models import AuditEntry, CongestionControlPolicy, Partition, QosPolicy, ServiceClass, Tenant
from tests.support.access_fixtures import SECRETS, build, identifiers, leaks, public_read, role_permissions, run_engine

pytestmark = pytest.mark.django_db(transaction=True)

ROLES = ("anonymous-public", "anonymous-private", "viewer", "acme-user", "operator", "policy-admin", "superuser")
#: The roles of the ``ALL`` level: they see every tenant (only the secrets are checked for them).
SEE_ALL = {"operator", "policy-admin", "superuser"}
#: A script's account (``manage.py create_user NAME --role service-account --token``), calling with its token.
SERVICE = "service-account"


def by_role(*codes: int) -> dict[str, int]:
    """Statuses in :data:`ROLES` order."""
    assert len(codes) == len(ROLES)
    return dict(zip(ROLES, codes, strict=True))


def same(code: int) -> dict[str, int]:
    return by_role(*[code] * len(ROLES))


# What most routes answer, per role: anonymous with public read on, anonymous with it off, a viewer of no
# tenant, acme's user, operator, policy admin, superuser.
PAGE = by_role(200, 302, 200, 200, 200, 200, 200)
SIGNED_IN = by_role(302, 302, 200, 200, 200, 200, 200)
API = by_role(200, 403, 200, 200, 200, 200, 200)
ALL_ONLY_API = by_role(403, 403, 403, 403, 200, 200, 200)
ALL_ONLY_PAGE = by_role(302, 302, 403, 403, 200, 200, 200)
OTHER_TENANTS_ROW = by_role(404, 403, 404, 404, 200, 200, 200)
NOT_ALLOWED = same(405)
CREATE_TENANCY = by_role(403, 403, 403, 403, 403, 400, 400)  # empty body: 400 where the role may create
EVENTS_READ_ONLY = by_role(403, 403, 405, 405, 405, 405, 405)  # writes need a signed-in user first
EVENTS_WRITE_ONLY = by_role(405, 403, 405, 405, 405, 405, 405)
NOTIFY_CREATE = by_role(403, 403, 403, 403, 400, 403, 400)  # operators (empty body: 400); policy admins read


@dataclass(frozen=True)
class Probe:
    """How to call a route (``url`` formatted with the fixture's values) and what each role gets.

    ``static``: the body is the same for every role it is served to and names no data (the OpenAPI schema, whose
    examples may use any word); it is compared across roles instead of searched.
    """

    url: str
    get: dict[str, int]
    post: dict[str, int]
    static: bool = False


ROUTES: dict[str, Probe] = {
    # pages
    "": Probe("/", PAGE, PAGE),
    "fabrics/<slug:slug>/": Probe("/fabrics/shared/", PAGE, PAGE),
    "fabrics/<slug:slug>/health/": Probe("/fabrics/shared/health/", PAGE, PAGE),
    "fabrics/<slug:slug>/history/": Probe("/fabrics/shared/history/", PAGE, PAGE),  # per-port history (issue 40)
    # the cable inventory as CSV (issue 37): hosts the role may not name as host-<index>
    "fabrics/<slug:slug>/health/cables.csv": Probe("/fabrics/shared/health/cables.csv", PAGE, PAGE),
    "fabrics/add/": Probe("/fabrics/add/", by_role(302, 302, 302, 302, 302, 302, 200),
                          by_role(302, 302, 302, 302, 302, 302, 200)),
    "favicon.ico": Probe("/favicon.ico", same(301), same(301)),
    "api/fabrics/overview/": Probe("/api/fabrics/overview/", API, by_role(405, 403, 405, 405, 405, 405, 405)),
    # clusters (issue 25): visible with one of their fabrics; jobs cut per plane, host names for ALL only
    "clusters/<slug:slug>/": Probe("/clusters/shared-cluster/", PAGE, PAGE),
    "clusters/<slug:slug>/health/": Probe("/clusters/shared-cluster/health/", PAGE, PAGE),  # its planes' worst ports
    "api/clusters/": Probe("/api/clusters/", API, by_role(405, 403, 405, 405, 405, 405, 405)),
    "api/clusters/<slug:slug>/": Probe("/api/clusters/shared-cluster/", API, by_role(405, 403, 405, 405, 405, 405,
                                                                                    405)),
    "tenancy/": Probe("/tenancy/", PAGE, NOT_ALLOWED),
    "tenancy/fabrics/<slug:slug>/": Probe("/tenancy/fabrics/shared/", PAGE, NOT_ALLOWED),
    "tenancy/fabrics/<slug:slug>/import/": Probe("/tenancy/fabrics/shared/import/", NOT_ALLOWED,
                                                 by_role(302, 302, 403, 403, 403, 302, 302)),
    # member changes: previewed (an empty body is a form with errors, 200) for the policy admin's permissions only
    "tenancy/fabrics/<slug:slug>/members/": Probe("/tenancy/fabrics/shared/members/", NOT_ALLOWED,
                                                  by_role(302, 302, 403, 403, 403, 200, 200)),
    "tenancy/fabrics/<slug:slug>/opensm/<str:filename>": Probe("/tenancy/fabrics/shared/opensm/partitions.conf",
                                                               ALL_ONLY_PAGE, NOT_ALLOWED),
    "healthz": Probe("/healthz", same(200), same(200)),
    "metrics": Probe("/metrics", API, NOT_ALLOWED),
    "metrics/targets": Probe("/metrics/targets", API, NOT_ALLOWED),
    # accounts
    "accounts/login/": Probe("/accounts/login/", same(200), same(200)),
    "accounts/logout/": Probe("/accounts/logout/", NOT_ALLOWED, same(302)),
    "accounts/password_change/": Probe("/accounts/password_change/", SIGNED_IN, SIGNED_IN),
    "accounts/password_change/done/": Probe("/accounts/password_change/done/", SIGNED_IN,
                                            by_role(302, 302, 405, 405, 405, 405, 405)),
    "accounts/password_reset/": Probe("/accounts/password_reset/", same(200), same(200)),
    "accounts/password_reset/done/": Probe("/accounts/password_reset/done/", same(200), NOT_ALLOWED),
    "accounts/reset/<uidb64>/<token>/": Probe("/accounts/reset/MQ/set-password/", same(200), same(200)),
    "accounts/reset/done/": Probe("/accounts/reset/done/", same(200), NOT_ALLOWED),
    "api/schema/": Probe("/api/schema/", API, NOT_ALLOWED, static=True),  # the API's access (issue 26)
    # fabrics API
    "api/fabrics/": Probe("/api/fabrics/", API, NOT_ALLOWED),
    "api/fabrics/^fabrics/$": Probe("/api/fabrics/fabrics/", API, by_role(403, 403, 403, 403, 403, 403, 400)),
    "api/fabrics/^fabrics/(?P<slug>[^/.]+)/$": Probe("/api/fabrics/fabrics/shared/", API, NOT_ALLOWED),
    # analyses are started by operators and superusers (an empty body: 400)
    "api/fabrics/^fabrics/(?P<slug>[^/.]+)/analyses/$": Probe("/api/fabrics/fabrics/shared/analyses/", API,
                                                              by_role(403, 403, 403, 403, 400, 403, 400)),
    "api/fabrics/^fabrics/(?P<slug>[^/.]+)/analyses/(?P<pk>[^/.]+)/$":
        Probe("/api/fabrics/fabrics/shared/analyses/{analysis}/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/links/<int:link>/history/":
        Probe("/api/fabrics/fabrics/shared/links/{globex_link}/history/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/links/<int:link>/rollups/":
        Probe("/api/fabrics/fabrics/shared/links/{globex_link}/rollups/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/links/-1/rollups/": Probe("/api/fabrics/fabrics/shared/links/-1/rollups/", API,
                                                              NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/ports/<str:node>/<int:port>/history/":
        Probe("/api/fabrics/fabrics/shared/ports/{globex_leaf}/1/history/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/ports/<str:node>/<int:port>/rollups/":
        Probe("/api/fabrics/fabrics/shared/ports/{globex_leaf}/1/rollups/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/path/":
        Probe("/api/fabrics/fabrics/shared/path/?src={globex_host}&dst={acme_host}", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/jobs/": Probe("/api/fabrics/fabrics/shared/jobs/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/sharp/": Probe("/api/fabrics/fabrics/shared/sharp/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/storage/": Probe("/api/fabrics/fabrics/shared/storage/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/routing/": Probe("/api/fabrics/fabrics/shared/routing/", API, NOT_ALLOWED),
    # link health (issue 37): fabric-wide, hosts the role may not name as host-<index> (globex's module runs hot)
    "api/fabrics/fabrics/<slug:slug>/health/": Probe("/api/fabrics/fabrics/shared/health/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/health/cables/": Probe("/api/fabrics/fabrics/shared/health/cables/", API,
                                                            NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/health/ports/<str:node>/<int:port>/":
        Probe("/api/fabrics/fabrics/shared/health/ports/{globex_leaf}/1/", API, NOT_ALLOWED),
    # fabric validation and switch device panels (issue 38): fabric-wide, hosts the role may not name as host-<index>,
    # the P_Keys of partitions it does not see as hidden; a cluster's planes side by side
    "api/fabrics/fabrics/<slug:slug>/validation/": Probe("/api/fabrics/fabrics/shared/validation/", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/validation/findings.csv":
        Probe("/api/fabrics/fabrics/shared/validation/findings.csv", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/devices/<str:node>/":
        Probe("/api/fabrics/fabrics/shared/devices/{globex_leaf}/", API, NOT_ALLOWED),
    "api/clusters/<slug:slug>/validation/": Probe("/api/clusters/shared-cluster/validation/", API,
                                                  by_role(405, 403, 405, 405, 405, 405, 405)),
    # per-port history over any window (issue 40): hidden hosts' ports are 404 and left out of the top-N
    "api/fabrics/fabrics/<slug:slug>/ports/<str:node>/<int:port>/tsdb/":
        Probe("/api/fabrics/fabrics/shared/ports/{globex_leaf}/1/tsdb/?series=utilization", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/tsdb/top/":
        Probe("/api/fabrics/fabrics/shared/tsdb/top/?series=utilization", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/tsdb/ports/":
        Probe("/api/fabrics/fabrics/shared/tsdb/ports/?series=utilization&port={globex_leaf}:1&port=host-{globex_host}:1",
              API, NOT_ALLOWED),
    # a switch's ports side by side (peers the role may not see as host-<index>); a job's links over its run: another
    # tenant's job is no such job (and its name not repeated)
    "api/fabrics/fabrics/<slug:slug>/nodes/<str:node>/tsdb/":
        Probe("/api/fabrics/fabrics/shared/nodes/{globex_leaf}/tsdb/?series=utilization", API, NOT_ALLOWED),
    "api/fabrics/fabrics/<slug:slug>/jobs/<str:job>/tsdb/":
        Probe("/api/fabrics/fabrics/shared/jobs/globex-secret/tsdb/", OTHER_TENANTS_ROW, NOT_ALLOWED),
    # the new-fabric form's helpers: generator ranges for anyone who may view, previews for who may add a fabric
    "api/fabrics/generators/": Probe("/api/fabrics/generators/", API, by_role(403, 403, 403, 403, 403, 403, 405)),
    "api/fabrics/preview/": Probe("/api/fabrics/preview/", by_role(405, 403, 405, 405, 405, 405, 405),
                                  by_role(403, 403, 403, 403, 403, 403, 200)),
    # tenancy API (the other tenant's rows: 404 below ALL)
    "api/tenancy/": Probe("/api/tenancy/", API, NOT_ALLOWED),
    "api/tenancy/fabrics/<slug:fabric>/pkeys/": Probe("/api/tenancy/fabrics/shared/pkeys/", API, CREATE_TENANCY),
    "api/tenancy/fabrics/<slug:fabric>/pkeys/add/": Probe("/api/tenancy/fabrics/shared/pkeys/add/", NOT_ALLOWED,
                                                          CREATE_TENANCY),
    "api/tenancy/fabrics/<slug:fabric>/pkeys/<str:pkey>/": Probe("/api/tenancy/fabrics/shared/pkeys/0x0b22/",
                                                                 OTHER_TENANTS_ROW, NOT_ALLOWED),
    "api/tenancy/fabrics/<slug:fabric>/pkeys/<str:pkey>/guids/":
        Probe("/api/tenancy/fabrics/shared/pkeys/0x0b22/guids/", NOT_ALLOWED, CREATE_TENANCY),
    "api/tenancy/fabrics/<slug:fabric>/pkeys/<str:pkey>/guids/remove/":
        Probe("/api/tenancy/fabrics/shared/pkeys/0x0b22/guids/remove/", NOT_ALLOWED, CREATE_TENANCY),
    "api/tenancy/fabrics/<slug:fabric>/pkeys/<str:pkey>/qos/":
        Probe("/api/tenancy/fabrics/shared/pkeys/0x0b22/qos/", NOT_ALLOWED, NOT_ALLOWED),
    "api/tenancy/fabrics/<slug:fabric>/opensm/<str:filename>":
        Probe("/api/tenancy/fabrics/shared/opensm/partitions.conf", ALL_ONLY_API,
              by_role(403, 403, 403, 403, 403, 400, 400)),
    "api/tenancy/^tenants/$": Probe("/api/tenancy/tenants/", API, CREATE_TENANCY),
    "api/tenancy/^tenants/(?P<slug>[^/.]+)/$": Probe("/api/tenancy/tenants/globex/", OTHER_TENANTS_ROW, NOT_ALLOWED),
    "api/tenancy/^service-classes/$": Probe("/api/tenancy/service-classes/", API, CREATE_TENANCY),
    "api/tenancy/^service-classes/(?P<pk>[^/.]+)/$": Probe("/api/tenancy/service-classes/{gold}/", OTHER_TENANTS_ROW,
                                                           NOT_ALLOWED),
    "api/tenancy/^partitions/$": Probe("/api/tenancy/partitions/", API, CREATE_TENANCY),
    "api/tenancy/^partitions/(?P<pk>[^/.]+)/$": Probe("/api/tenancy/partitions/{globex_partition}/",
                                                      OTHER_TENANTS_ROW, NOT_ALLOWED),
    "api/tenancy/^members/$": Probe("/api/tenancy/members/", API, NOT_ALLOWED),
    "api/tenancy/^qos-policies/$": Probe("/api/tenancy/qos-policies/", API, CREATE_TENANCY),
    "api/tenancy/^qos-policies/(?P<pk>[^/.]+)/$": Probe("/api/tenancy/qos-policies/{qos}/",
                                                        by_role(404, 403, 404, 200, 200, 200, 200), NOT_ALLOWED),
    # a fabric's congestion control settings (issue 41): read and written as its QoS tables
    "api/tenancy/^cc-policies/$": Probe("/api/tenancy/cc-policies/", API, CREATE_TENANCY),
    "api/tenancy/^cc-policies/(?P<pk>[^/.]+)/$": Probe("/api/tenancy/cc-policies/{cc}/",
                                                       by_role(404, 403, 404, 200, 200, 200, 200), NOT_ALLOWED),
    "api/tenancy/^audit-entries/$": Probe("/api/tenancy/audit-entries/", ALL_ONLY_API, NOT_ALLOWED),
    "api/tenancy/^audit-entries/(?P<pk>[^/.]+)/$": Probe("/api/tenancy/audit-entries/{audit}/", ALL_ONLY_API,
                                                         NOT_ALLOWED),
    # telemetry API
    "api/telemetry/": Probe("/api/telemetry/", API, NOT_ALLOWED),
    # a push token's route: not signed in, 401 naming Bearer; signed in (the API's one list of classes), 403
    "api/telemetry/fabrics/<slug:slug>/samples/": Probe("/api/telemetry/fabrics/lab/samples/",
                                                        by_role(401, 401, 403, 403, 403, 403, 403),
                                                        by_role(401, 401, 403, 403, 403, 403, 403)),
    "api/telemetry/fabrics/<slug:slug>/health/": Probe("/api/telemetry/fabrics/lab/health/",
                                                       by_role(401, 401, 403, 403, 403, 403, 403),
                                                       by_role(401, 401, 403, 403, 403, 403, 403)),
    "api/telemetry/fabrics/<slug:slug>/devices/": Probe("/api/telemetry/fabrics/lab/devices/",
                                                        by_role(401, 401, 403, 403, 403, 403, 403),
                                                        by_role(401, 401, 403, 403, 403, 403, 403)),
    "api/telemetry/^collectors/$": Probe("/api/telemetry/collectors/", ALL_ONLY_API, NOT_ALLOWED),
    "api/telemetry/^collectors/(?P<pk>[^/.]+)/$": Probe("/api/telemetry/collectors/{collector}/", ALL_ONLY_API,
                                                        NOT_ALLOWED),
    "api/telemetry/^sweeps/$": Probe("/api/telemetry/sweeps/", ALL_ONLY_API, NOT_ALLOWED),
    # the reference cabling: operators accept it (400 here: the fabric has no discovery yet)
    "api/telemetry/fabrics/<slug:slug>/reference/": Probe("/api/telemetry/fabrics/lab/reference/", ALL_ONLY_API,
                                                          by_role(403, 403, 403, 403, 400, 403, 400)),
    "fabrics/<slug:slug>/events/accept-cabling/": Probe("/fabrics/lab/events/accept-cabling/", NOT_ALLOWED,
                                                        by_role(302, 302, 403, 403, 302, 403, 302)),
    "api/telemetry/^sweeps/(?P<pk>[^/.]+)/$": Probe("/api/telemetry/sweeps/{sweep}/", ALL_ONLY_API, NOT_ALLOWED),
    # active conditions: the events API's rules (hosts named only for views of every tenant)
    "api/telemetry/fabrics/<slug:slug>/conditions/": Probe("/api/telemetry/fabrics/shared/conditions/", API,
                                                           EVENTS_READ_ONLY),
    # a port's error counters (lab has no discovery yet: 404 for whoever may read the fabric's events)
    "api/telemetry/fabrics/<slug:slug>/ports/<str:node>/<int:port>/counters/":
        Probe("/api/telemetry/fabrics/lab/ports/leaf01/1/counters/", by_role(404, 403, 404, 404, 404, 404, 404),
              EVENTS_READ_ONLY),
    # a test sweep runs commands on the server: who may configure collectors (an empty body: 400, nothing runs)
    "api/telemetry/trial-sweep/": Probe("/api/telemetry/trial-sweep/", NOT_ALLOWED,
                                        by_role(403, 403, 403, 403, 403, 403, 400)),
    # events: pages and API (the event opened is globex's job's; operators acknowledge, they and policy admins
    # comment: events' migration 0002)
    "fabrics/<slug:slug>/events/": Probe("/fabrics/shared/events/", PAGE, NOT_ALLOWED),
    "fabrics/<slug:slug>/events/<int:pk>/acknowledge/": Probe("/fabrics/shared/events/{globex_event}/acknowledge/",
                                                              NOT_ALLOWED, by_role(302, 302, 404, 404, 302, 403, 302)),
    "fabrics/<slug:slug>/events/<int:pk>/comment/": Probe("/fabrics/shared/events/{globex_event}/comment/",
                                                          NOT_ALLOWED, by_role(302, 302, 404, 404, 302, 302, 302)),
    "api/fabrics/fabrics/<slug:slug>/events/": Probe("/api/fabrics/fabrics/shared/events/", API, EVENTS_READ_ONLY),
    "api/fabrics/fabrics/<slug:slug>/events/summary/": Probe("/api/fabrics/fabrics/shared/events/summary/", API,
                                                             EVENTS_READ_ONLY),
    "api/fabrics/fabrics/<slug:slug>/events/<int:pk>/": Probe("/api/fabrics/fabrics/shared/events/{globex_event}/",
                                                              OTHER_TENANTS_ROW, EVENTS_READ_ONLY),
    "api/fabrics/fabrics/<slug:slug>/events/<int:pk>/acknowledge/":
        Probe("/api/fabrics/fabrics/shared/events/{globex_event}/acknowledge/", EVENTS_WRITE_ONLY,
              by_role(403, 403, 404, 404, 200, 403, 200)),
    "api/fabrics/fabrics/<slug:slug>/events/<int:pk>/comments/":
        Probe("/api/fabrics/fabrics/shared/events/{globex_event}/comments/", EVENTS_WRITE_ONLY,
              by_role(403, 403, 404, 404, 400, 400, 400)),
    # twin pages and API
    "fabrics/<slug:slug>/plan/": Probe("/fabrics/lab/plan/", PAGE, by_role(403, 302, 403, 403, 400, 403, 400)),
    "api/twin/": Probe("/api/twin/", API, NOT_ALLOWED),
    "api/twin/fabrics/<slug:slug>/jobs/": Probe("/api/twin/fabrics/lab/jobs/", by_role(200, 404, 200, 200, 200, 200,
                                                                                         200),
                                                by_role(401, 401, 403, 403, 403, 403, 403)),
    "api/twin/fabrics/<slug:slug>/expected/": Probe("/api/twin/fabrics/lab/expected/",
                                                    by_role(200, 404, 200, 200, 200, 200, 200), NOT_ALLOWED),
    "api/twin/fabrics/<slug:slug>/plan/": Probe("/api/twin/fabrics/lab/plan/", by_role(200, 404, 200, 200, 200, 200,
                                                                                         200),
                                                by_role(403, 403, 403, 403, 400, 403, 400)),
    "api/twin/fabrics/<slug:slug>/events/": Probe("/api/twin/fabrics/lab/events/",
                                                  by_role(200, 404, 200, 200, 200, 200, 200), NOT_ALLOWED),
    "api/twin/^sources/$": Probe("/api/twin/sources/", API, NOT_ALLOWED),  # below ALL: an empty list
    "api/twin/^sources/(?P<pk>[^/.]+)/$": Probe("/api/twin/sources/{source}/", OTHER_TENANTS_ROW, NOT_ALLOWED),
    # notifications (issue 39): the operators' rows are ALL's; a tenant's admins write their tenant's channels and
    # rules (no role here is one); silences ALL only; deliveries read where their channel is; a test is sent by who
    # may change the channel (the operators' channel's webhook is down here: 200, the failed delivery)
    "api/notify/": Probe("/api/notify/", API, NOT_ALLOWED),
    "api/notify/^channels/$": Probe("/api/notify/channels/", API, NOTIFY_CREATE),
    "api/notify/^channels/(?P<pk>[^/.]+)/$": Probe("/api/notify/channels/{notify_channel}/", OTHER_TENANTS_ROW,
                                                   NOT_ALLOWED),
    "api/notify/^channels/(?P<pk>[^/.]+)/test/$": Probe("/api/notify/channels/{notify_channel}/test/",
                                                        EVENTS_WRITE_ONLY,
                                                        by_role(403, 403, 403, 403, 200, 403, 200)),
    "api/notify/^rules/$": Probe("/api/notify/rules/", API, NOTIFY_CREATE),
    "api/notify/^rules/(?P<pk>[^/.]+)/$": Probe("/api/notify/rules/{notify_rule}/", OTHER_TENANTS_ROW, NOT_ALLOWED),
    "api/notify/^silences/$": Probe("/api/notify/silences/", API, NOTIFY_CREATE),
    "api/notify/^silences/(?P<pk>[^/.]+)/$": Probe("/api/notify/silences/{notify_silence}/", OTHER_TENANTS_ROW,
                                                   NOT_ALLOWED),
    "api/notify/^deliveries/$": Probe("/api/notify/deliveries/", API, NOT_ALLOWED),
    # the notifications page: tenant users and ALL (its changes are the API's); silence drafts and the "Silence..."
    # actions by the API's rules; expire a silence and send a rule's digest now: as their writes
    "notifications/": Probe("/notifications/", by_role(302, 302, 403, 200, 200, 200, 200), NOT_ALLOWED),
    "api/notify/^silences/draft/$": Probe("/api/notify/silences/draft/?event={globex_event}", API, NOT_ALLOWED),
    "api/notify/^silences/(?P<pk>[^/.]+)/expire/$": Probe("/api/notify/silences/{notify_silence}/expire/",
                                                          EVENTS_WRITE_ONLY, by_role(403, 403, 403, 403, 200, 403,
                                                                                     200)),
    "api/notify/^rules/(?P<pk>[^/.]+)/digest/$": Probe("/api/notify/rules/{notify_rule}/digest/", EVENTS_WRITE_ONLY,
                                                       by_role(403, 403, 403, 403, 200, 403, 200)),
    "api/notify/^deliveries/(?P<pk>[^/.]+)/$": Probe("/api/notify/deliveries/{notify_delivery}/", OTHER_TENANTS_ROW,
                                                     NOT_ALLOWED),
}


def staff(*codes: int) -> tuple[int, ...]:
    """Statuses of the staff roles: viewer of no tenant, acme's user, operator, policy admin, superuser."""
    assert len(codes) == 5
    return codes


def rows(listing, add, history, delete, change, change_post=None) -> dict[str, tuple]:
    """A model admin's routes: (GET, empty POST) per route; POST is GET's status except where given."""
    return {"": (listing, listing), "add/": (add, add), "<path:object_id>/history/": (history, history),
            "<path:object_id>/delete/": (delete, delete), "<path:object_id>/change/": (change, change_post or change),
            "<path:object_id>/": (staff(*[302] * 5),) * 2}


_NO = staff(403, 403, 403, 403, 403)
_SUPERUSER = staff(403, 403, 403, 403, 200)
_VIEWS_ALL = staff(403, 403, 200, 200, 200)  # the ALL level, with the view permission its roles have
_EDITS = staff(403, 403, 403, 200, 200)  # policy admin and superuser
_MANAGES = staff(403, 403, 200, 403, 200)  # operator and superuser

# The admin (anonymous visitors go to its login page). Every registered model names the object its pages open
# (the other tenant's, where rows belong to a tenant) and what the staff roles get, GET and an empty POST.
ADMIN_MODELS: dict[str, tuple[str, dict[str, tuple]]] = {
    # tenant rows: acme's user (view permission) lists acme's, never finds globex's (redirected as missing)
    "tenancy.tenant": ("{globex_tenant}", rows(staff(403, 200, 200, 200, 200), _EDITS, staff(302, 302, 200, 200, 200),
                                               _EDITS, staff(403, 302, 200, 200, 200), _EDITS)),
    "tenancy.partition": ("{globex_partition}", {
        **rows(staff(403, 200, 200, 200, 200), _EDITS, staff(302, 302, 200, 200, 200), _EDITS,
               staff(403, 302, 200, 200, 200), _EDITS),
        "<int:pk>/bulk-members/": (staff(404, 404, 403, 200, 200),) * 2}),
    "tenancy.serviceclass": ("{gold}", rows(staff(403, 200, 200, 200, 200), _EDITS, staff(302, 302, 200, 200, 200),
                                            _EDITS, staff(403, 302, 200, 200, 200), _EDITS)),
    # a fabric's QoS tables name no tenant: tenants' users see them
    "tenancy.qospolicy": ("{qos}", rows(staff(403, 200, 200, 200, 200), _EDITS, staff(302, 200, 200, 200, 200),
                                        _EDITS, staff(403, 200, 200, 200, 200), _EDITS)),
    "tenancy.congestioncontrolpolicy": ("{cc}", rows(staff(403, 200, 200, 200, 200), _EDITS,
                                                     staff(302, 200, 200, 200, 200), _EDITS,
                                                     staff(403, 200, 200, 200, 200), _EDITS)),
    # every tenant at once: the ALL level only
    "tenancy.auditentry": ("{audit}", rows(_VIEWS_ALL, _NO, _VIEWS_ALL, _NO, _VIEWS_ALL, _NO)),
    "fabrics.fabric": ("{fabric}", rows(_VIEWS_ALL, _SUPERUSER, _VIEWS_ALL, _SUPERUSER, _VIEWS_ALL,
                                        _MANAGES)),
    # clusters name no tenant: operators manage them, policy admins view them (migration 0009)
    "fabrics.cluster": ("{cluster}", rows(_VIEWS_ALL, _MANAGES, _VIEWS_ALL, _MANAGES, _VIEWS_ALL, _MANAGES)),
    "fabrics.analysis": ("{analysis}", rows(_SUPERUSER, _NO, _SUPERUSER, _SUPERUSER, _SUPERUSER,
                                            staff(403, 403, 403, 403, 302))),
    "telemetry.collectorconfig": ("{collector}", rows(_SUPERUSER, _SUPERUSER, _SUPERUSER, _SUPERUSER, _SUPERUSER)),
    "telemetry.sweep": ("{sweep}", rows(_SUPERUSER, _NO, _SUPERUSER, _SUPERUSER, _SUPERUSER,
                                        staff(403, 403, 403, 403, 302))),
    "telemetry.pushtoken": ("{push_token}", rows(_SUPERUSER, _SUPERUSER, _SUPERUSER, _SUPERUSER, _SUPERUSER)),
    "twin.jobsource": ("{source}", rows(*[_MANAGES] * 5)),
    "twin.scheduledjob": ("{scheduled_job}", rows(_VIEWS_ALL, _NO, _VIEWS_ALL, _MANAGES,
                                                  _VIEWS_ALL, staff(403, 403, 302, 403, 302))),
    "twin.cablingplan": ("{plan}", rows(_VIEWS_ALL, _NO, _VIEWS_ALL, _MANAGES, _VIEWS_ALL,
                                        _MANAGES)),
    # Django's own: the superuser (the roles grant nothing of them)
    "auth.user": ("{user}", {**rows(*[_SUPERUSER] * 5), "<id>/password/": (_SUPERUSER, _SUPERUSER)}),
    "auth.group": ("{group}", rows(*[_SUPERUSER] * 5)),
    "accounts.apitoken": ("{api_token}", rows(*[_SUPERUSER] * 5)),
}
STAFF_ONLY = by_role(302, 302, 200, 200, 200, 200, 200)
STAFF_GET_ONLY = by_role(302, 302, 405, 405, 405, 405, 405)
STAFF_NOT_FOUND = by_role(302, 302, 404, 404, 404, 404, 404)
ADMIN_SITE: dict[str, Probe] = {
    "admin/": Probe("/admin/", STAFF_ONLY, STAFF_ONLY),
    "admin/login/": Probe("/admin/login/", by_role(200, 200, 302, 302, 302, 302, 302), same(200)),
    "admin/logout/": Probe("/admin/logout/", STAFF_GET_ONLY, same(302)),
    "admin/password_change/": Probe("/admin/password_change/", STAFF_ONLY, STAFF_ONLY),
    "admin/password_change/done/": Probe("/admin/password_change/done/", STAFF_ONLY, STAFF_GET_ONLY),
    # the related model's admin decides: acme's user is offered acme only
    "admin/autocomplete/": Probe("/admin/autocomplete/?app_label=tenancy&model_name=partition&field_name=tenant",
                                 by_role(302, 302, 403, 200, 200, 200, 200), STAFF_GET_ONLY),
    "admin/jsi18n/": Probe("/admin/jsi18n/", STAFF_ONLY, STAFF_GET_ONLY),
    "admin/r/<path:content_type_id>/<path:object_id>/": Probe("/admin/r/{partition_type}/{globex_partition}/",
                                                              STAFF_NOT_FOUND, STAFF_NOT_FOUND),
    "admin/^(?P<app_label>auth|accounts|fabrics|tenancy|telemetry|twin)/$":
        Probe("/admin/tenancy/", by_role(302, 302, 404, 200, 200, 200, 200),
              by_role(302, 302, 404, 200, 200, 200, 200)),
    "admin/(?P<url>.*)$": Probe("/admin/no-such-page/", STAFF_NOT_FOUND, STAFF_NOT_FOUND),
}


ADMIN_ROUTES = ("", "add/", "<path:object_id>/history/", "<path:object_id>/delete/", "<path:object_id>/change/",
                "<path:object_id>/", "<int:pk>/bulk-members/", "<id>/password/")


def admin_probes() -> dict[str, Probe]:
    """Probes of every model admin's routes, from :data:`ADMIN_MODELS`."""
    out = {}
    for label, (obj, routes) in ADMIN_MODELS.items():
        app, model = label.split(".")
        for suffix, (get, post) in routes.items():
            url = f"/admin/{app}/{model}/" + suffix.replace("<path:object_id>", obj).replace("<int:pk>", obj) \
                .replace("<id>", obj)
            out[f"admin/{app}/{model}/{suffix}"] = Probe(url, by_role(302, 302, *get), by_role(302, 302, *post))
    return out


def walk(patterns, prefix: str = ""):
    """Every URL pattern's full route text, DRF routers and the admin included."""
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from walk(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern)


_SUFFIX = re.compile(r"\\\.\(\?P<format>\[a-z0-9\]\+\)/\?\$$")


def base_route(route: str) -> tuple[str, bool]:
    """A format-suffix route (``.json``) as the route it suffixes, and whether it was one."""
    if route.endswith("<drf_format_suffix:format>"):
        return route.removesuffix("<drf_format_suffix:format>"), True
    if _SUFFIX.search(route):
        return _SUFFIX.sub("/$", route), True
    return route, False


def all_probes() -> dict[str, Probe]:
    return {**ROUTES, **ADMIN_SITE, **admin_probes()}


def test_every_route_has_an_entry():
    probes = all_probes()
    missing = sorted({base_route(r)[0] for r in walk(get_resolver().url_patterns)} - set(probes))
    assert not missing, f"routes without an entry in ROUTES or ADMIN_MODELS: {missing}"
    admin_labels = {m._meta.label_lower for m in admin.site._registry}
    assert admin_labels == set(ADMIN_MODELS), f"admin models without an entry: {admin_labels - set(ADMIN_MODELS)}"


def values(shared) -> dict[str, object]:
    """What the probes' URLs are formatted with."""
    from django.contrib.auth.models import Group
    from django.contrib.contenttypes.models import ContentType

    from fabric_engine.scenario import build_emulator
    from ibweb.accounts.models import ApiToken
    from ibweb.events.models import Event
    from ibweb.telemetry.models import PushToken
    from ibweb.twin.models import CablingPlan, JobSource, ScheduledJob

    f = build_emulator(shared.fabric.scenario()).fabric
    globex_host, acme_host = shared.hosts["globex"][0], shared.hosts["acme"][0]
    leaf = int(f.host_leaf[globex_host])
    globex = shared.partitions["globex"]
    group, _ = Group.objects.get_or_create(name="operator")
    token, _ = ApiToken.issue(shared.users["superuser"], "probe")
    return {
        "globex_host": globex_host, "acme_host": acme_host, "globex_leaf": str(f.node_name[leaf]),
        "globex_link": int(f.out_link(globex_host, 1)), "analysis": shared.analysis.pk,
        "globex_partition": globex.pk, "globex_tenant": shared.tenants["globex"].pk,
        "gold": ServiceClass.objects.get(name="gold").pk, "qos": QosPolicy.objects.get(fabric=shared.fabric).pk,
        "cc": CongestionControlPolicy.objects.get_or_create(fabric=shared.fabric)[0].pk,
        "audit": AuditEntry.objects.filter(object_type="tenancy.Partition", object_id=str(globex.pk)).first().pk,
        "fabric": shared.fabric.pk, "cluster": shared.cluster.pk, "collector": shared.lab.collector.pk,
        "sweep": Sweep.objects.get(config__fabric=shared.lab).pk, "push_token": PushToken.objects.first().pk,
        "source": JobSource.objects.get(fabric=shared.lab).pk, "scheduled_job": ScheduledJob.objects.first().pk,
        "plan": CablingPlan.objects.first().pk, "user": shared.users["superuser"].pk, "group": group.pk,
        "api_token": token.pk, "partition_type": ContentType.objects.get_for_model(Partition).pk,
        "tenant_count": Tenant.objects.count(), "analysis_count": Analysis.objects.count(),
        "globex_event": Event.objects.get(job="globex-secret").pk,
        **notify_rows(shared, f),
    }


def notify_rows(shared, f) -> dict[str, int]:
    """The operators' notification channel (its HMAC key a secret nobody reads back, its webhook down), a rule, a
    silence and a delivery naming a globex host (issue 39)."""
    from datetime import timedelta

    from django.utils import timezone

    from ibweb.notify.models import Channel, Delivery, Rule, Silence
    from tests.support.notify_servers import free_port

    ch = Channel.objects.create(name="ops", kind="webhook", config={"template": "ibweb", "timeout_s": 2},
                                secrets={"url": f"http://127.0.0.1:{free_port()}/hook", "secret": SECRETS[1]})
    rule = Rule.objects.create(name="everything", min_severity="info")
    rule.channels.set([ch])
    now = timezone.now()
    silence = Silence.objects.create(kinds=["link_down"], starts_at=now, ends_at=now + timedelta(hours=1),
                                     reason="recabling", author_name="audit-author")
    name = str(f.node_name[shared.hosts["globex"][0]])
    delivery = Delivery.objects.create(channel=ch, key="probe-delivery", state="sent", status="firing",
                                       reason="start", group="probe", fabric=shared.fabric,
                                       notices=[{"key": "k", "body": f"{name} port 1 is down"}])
    return {"notify_channel": ch.pk, "notify_rule": rule.pk, "notify_silence": silence.pk,
            "notify_delivery": delivery.pk}


#: Tables that change when a role signs in again (after a logout): the last login, the sessions.
WRITTEN_WHEN_SIGNING_IN = {"auth.user", "sessions.session", "accounts.apitoken"}  # and a token's last use


def fingerprint() -> dict[str, str]:
    """A digest of every row of every model: what a request that may write nothing must leave as it was."""
    import hashlib

    from django.apps import apps

    out = {}
    for model in apps.get_models():
        rows = model._default_manager.order_by("pk").values_list()
        out[model._meta.label_lower] = hashlib.sha256(repr(list(rows)).encode()).hexdigest()
    return out


class Sessions:
    """One signed-in session per role, made again after a request that may have ended it (a logout)."""

    def __init__(self, users: dict) -> None:
        self.users, self.keys = users, {}

    def key(self, role: str) -> str | None:
        if self.users[role] is None:
            return None
        if role not in self.keys:
            client = Client()
            client.force_login(self.users[role])
            self.keys[role] = client.cookies["sessionid"].value
        return self.keys[role]

    def forget(self, role: str) -> None:
        self.keys.pop(role, None)


def service_account(users: dict) -> str:
    """Make the service account with the command (its group as the migrations grant it); its token's key."""
    import io

    from django.contrib.auth.models import Group
    from django.core.management import call_command

    Group.objects.get_or_create(name="service account")[0].permissions.set(role_permissions("service account"))
    out = io.StringIO()
    call_command("create_user", SERVICE, "--role", "service-account", "--token", stdout=out, stderr=io.StringIO())
    users[SERVICE] = None  # no session: the token
    return out.getvalue().strip()


def service_expected(probe: Probe, method: str, url: str) -> int:
    """A service account gets from the API what a viewer of no tenant gets (the same view permissions, no tenant);
    pages and the admin take no token: what an anonymous visitor gets."""
    view = resolve(url.partition("?")[0]).func
    cls = getattr(view, "cls", None) or getattr(view, "view_class", None)
    api = isinstance(cls, type) and issubclass(cls, APIView)
    return getattr(probe, method)["viewer" if api else "anonymous-public"]


def request(role: str, sessions: Sessions, method: str, url: str, address: str, token: str = ""):
    """One request as ``role``, from its own address (the login throttles count per address)."""
    client = Client(REMOTE_ADDR=address, **({"HTTP_AUTHORIZATION": f"Token {token}"} if role == SERVICE else {}))
    key = sessions.key(role)
    if key is not None:
        client.cookies["sessionid"] = key
    if "logout" in url or "password" in url:
        sessions.forget(role)
    with public_read(role != "anonymous-private"):
        call = getattr(client, method)
        return call(url, {}, content_type="application/json") if method in ("post", "put", "patch") else call(url)


#: The roles, in three parts of one test each (run side by side by pytest-xdist); each part ends with a role that
#: sees all, so the rows are compared before it, and has two roles or more, whose static bodies are compared.
ROLE_PARTS = (("anonymous-public", "anonymous-private", "operator"), ("viewer", "acme-user", "policy-admin"),
              (SERVICE, "superuser"))


def test_the_parts_cover_every_role_once():
    parts = [r for part in ROLE_PARTS for r in part]
    assert sorted(parts) == sorted((*ROLES, SERVICE)) and len(parts) == len(set(parts))
    assert all(part[-1] in SEE_ALL and not set(part[:-1]) & SEE_ALL for part in ROLE_PARTS)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("part", ROLE_PARTS, ids=["-".join(p) for p in ROLE_PARTS])
def test_every_route_for_every_role(part):
    shared = build()
    run_engine(shared.fabric)
    fmt = values(shared)
    forbidden = {"acme-user": identifiers(shared, "globex")}
    for role in ("anonymous-public", "anonymous-private", "viewer", SERVICE):
        forbidden[role] = identifiers(shared, "globex") + identifiers(shared, "acme")
    token = service_account(shared.users)
    secrets = [re.compile(re.escape(s)) for s in SECRETS]
    failures, n = [], 0
    seen: dict[str, dict[str, list[int]]] = {}
    bodies: dict[str, set[bytes]] = {}
    sessions = Sessions(shared.users)
    for role in ROLES:
        sessions.key(role)
    # the cluster's plane has a frame naming both tenants' jobs: the search of the cluster API below can fail
    for role, jobs in (("operator", {"acme-train", "globex-secret"}), ("acme-user", {"acme-train"})):
        body = request(role, sessions, "get", "/api/clusters/shared-cluster/", "10.255.255.1").json()
        assert {j["id"] for j in body["jobs"]} == jobs, f"{role}: {body['jobs']}"
    before = fingerprint()
    routes = sorted(set(walk(get_resolver().url_patterns)))
    # the roles that may write nothing first: then nothing may have changed
    for role in part:
        if role in SEE_ALL:
            after = fingerprint()
            failures += [f"{k} changed, though no role below ALL may write" for k in before
                         if before[k] != after[k] and k not in WRITTEN_WHEN_SIGNING_IN]
        for route in routes:
            base, suffixed = base_route(route)
            probe = all_probes().get(base)
            if probe is None:
                continue  # test_every_route_has_an_entry names it
            url = probe.url.format(**fmt)
            if suffixed:
                path, _, query = url.partition("?")
                path = path + ".json" if route.endswith("<drf_format_suffix:format>") else path.rstrip("/") + ".json"
                url = path + (f"?{query}" if query else "")
            for method in ("get", "post"):
                expected = service_expected(probe, method, url) if role == SERVICE else getattr(probe, method)[role]
                n += 1
                r = request(role, sessions, method, url, f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}", token)
                seen.setdefault(route, {}).setdefault(method, {})[role] = r.status_code
                body = b"".join(r.streaming_content) if r.streaming else r.content
                text = body.decode(errors="replace")
                if r.status_code != expected:
                    failures.append(f"{method.upper()} {url} as {role}: {r.status_code}, expected {expected}")
                if probe.static:  # the roles it is served to get the same body
                    if r.status_code == 200:
                        bodies.setdefault(f"{method} {url}", set()).add(body)
                    continue
                # what the client sent may come back (a 404 naming the key asked for): that is not a leak
                asked = [p for p in forbidden.get(role, []) if not p.search(url)]
                found = leaks(text, asked) + leaks(text, secrets)
                if found:
                    failures.append(f"{method.upper()} {url} as {role} ({r.status_code}) shows {found}")
            if role not in SEE_ALL:  # may write nothing: whatever comes back, nothing changes (checked above)
                for method in ("put", "patch", "delete"):
                    n += 1
                    r = request(role, sessions, method, url, f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}",
                                token)
                    if r.status_code >= 500:
                        failures.append(f"{method.upper()} {url} as {role}: {r.status_code}")
    failures += [f"{key}: the body differs between roles" for key, seen_bodies in bodies.items()
                 if len(seen_bodies) > 1]
    report = "\n".join(f"{route}: GET {[v['get'].get(r) for r in part]} POST {[v['post'].get(r) for r in part]}"
                       for route, v in sorted(seen.items()))
    assert not failures, "\n".join(failures) + "\n\nobserved:\n" + report
    assert n >= 2 * len(part) * len(seen) and len(seen) > len(routes) // 2


# ------------------------------------------------------------------ websocket routes
#: What each role gets of a websocket route: "feed" (a snapshot, then frames) or the close code.
WS_ROUTES: dict[str, tuple[str, dict[str, int | str]]] = {
    "ws/fabrics/<slug:slug>/live/": ("/ws/fabrics/shared/live/", {**{r: "feed" for r in ROLES},
                                                                  "anonymous-private": 4403, SERVICE: "feed"}),
}


def test_every_websocket_route_has_an_entry():
    from ibweb.live.feed.websocket_urls import websocket_urlpatterns

    routes = {r for r in walk(websocket_urlpatterns)}
    assert routes == set(WS_ROUTES), f"websocket routes without an entry: {routes - set(WS_ROUTES)}"


@pytest.mark.timeout(600)
async def test_every_websocket_route_for_every_role():
    """Each role's snapshot and next frame (or its close code), searched for the identifiers it may not see."""
    import json

    from channels.testing import WebsocketCommunicator
    from django.contrib.auth.models import AnonymousUser

    from ibweb.asgi import application

    shared = await asyncio.to_thread(build)
    forbidden = await asyncio.to_thread(
        lambda: {"acme-user": identifiers(shared, "globex"),
                 **{r: identifiers(shared, "globex") + identifiers(shared, "acme")
                    for r in ("anonymous-public", "anonymous-private", "viewer", SERVICE)}})
    token = await asyncio.to_thread(service_account, shared.users)
    engine = FabricRunner(shared.fabric)
    await engine.start()
    await engine.tick()
    failures = []
    for path, expected in WS_ROUTES.values():
        for role in (*ROLES, SERVICE):
            with public_read(role not in ("anonymous-private", SERVICE)):  # the service account's token admits it
                headers = [(b"authorization", f"Token {token}".encode())] if role == SERVICE else []
                comm = WebsocketCommunicator(application, path, headers=headers)
                comm.scope["user"] = shared.users[role] or AnonymousUser()
                await comm.connect()
                try:
                    messages = []
                    if expected[role] == "feed":
                        messages.append(await comm.receive_from(timeout=10))
                        await engine.tick()
                        messages.append(await comm.receive_from(timeout=10))
                        kinds = [json.loads(m)["type"] for m in messages]
                        if kinds != ["snapshot", "frame"]:
                            failures.append(f"{path} as {role}: {kinds}, expected a snapshot and a frame")
                    else:
                        out = await comm.receive_output(timeout=10)
                        if out.get("code") != expected[role]:
                            failures.append(f"{path} as {role}: {out}, expected close {expected[role]}")
                    for text in messages:
                        found = leaks(text, forbidden.get(role, []))
                        if found:
                            failures.append(f"{path} as {role}: the {json.loads(text)['type']} shows {found}")
                finally:
                    await comm.disconnect()
    assert not failures, "\n".join(failures)
