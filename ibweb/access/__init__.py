"""What a user may see: decided here, once, from explicit grants (fail-closed).

Every page, API endpoint, export, ``/metrics``, the live feed and its progress and
alert messages ask :func:`view_of` and act on the :class:`View` it returns, through
this package; nothing else decides visibility. The levels, from least to most:

``NONE``
    may see nothing: not logged in where public read is off.
``FABRIC``
    fabric-wide aggregates only (link loads, totals, switches; no tenant, job id,
    host name or GUID of a tenant, no contacts, audit, exports or collectors):
    anonymous visitors where public read is on, and signed-in users who hold
    neither a tenant membership nor the permission to see all tenants.
``TENANTS``
    the aggregates plus the tenants, partitions, jobs and hosts of the tenants the
    user belongs to (``Tenant.users``).
``ALL``
    every tenant, the audit log, the OpenSM exports and the collectors: superusers
    and users with ``tenancy.view_all_tenants`` (the operator and policy admin roles,
    and service accounts such as a Prometheus scraper's).

A deactivated user is not authenticated, so they fall to the anonymous level,
which is never more than any signed-in user's.

One module per concept, none importing a model (models import this package, never the
reverse):

* :mod:`.view`: the levels and a user's :class:`View`;
* :mod:`.querysets`: :class:`RestrictedQuerySet`, which the tenant-owned models inherit,
  each declaring its path to the tenant in a :class:`Scope`;
* :mod:`.jobs`: which jobs a view sees; :mod:`.specs`: what it reads of a scenario spec;
* :mod:`.redaction`: what it reads of a fabric's hosts (:class:`Redaction`), from the
  tenant host sets the fabric's runner publishes (:mod:`.host_sets`);
* :mod:`.alert_objects`: the hosts an alert or event names, resolved on its fabric, and the objects of its
  template; :mod:`.alert_render`: the one renderer of alerts, events, conditions and progress messages for a
  view (:func:`alert_renderer`, :func:`progress_message`), which the feed, the event store and anything that
  sends a message later call;
* :mod:`.relabel`: the one relabelling of a text that is still free.
"""

from .alert_render import AlertRenderer, alert_renderer, progress_message
from .host_sets import tenant_host_sets
from .jobs import job_tenants, shown_job_rows, visible_job_ids
from .node_names import find_node, host_hcas, is_index, node_name, node_number
from .querysets import (
    RestrictedQuerySet,
    Scope,
    visible_fabrics,
    visible_members,
    visible_partitions,
    visible_qos_policies,
    visible_service_classes,
    visible_tenants,
)
from .redaction import HIDDEN, HIDDEN_NODE, Redaction, hidden_host_names, host_label, redaction
from .relabel import relabel
from .specs import FABRIC_WIDE_SPEC_KEYS, OPERATOR_TOPOLOGY_KEYS, scenario_spec
from .view import EVERYTHING, FABRIC_ONLY, NOTHING, VIEW_ALL_PERMISSION, Level, View, view_from_key, view_of

__all__ = ["Level", "View", "view_of", "VIEW_ALL_PERMISSION", "NOTHING", "FABRIC_ONLY", "EVERYTHING",
           "RestrictedQuerySet", "Scope", "visible_fabrics", "visible_tenants", "visible_partitions",
           "visible_members", "visible_service_classes", "visible_qos_policies", "job_tenants", "Redaction",
           "redaction", "HIDDEN", "host_label", "scenario_spec", "visible_job_ids", "FABRIC_WIDE_SPEC_KEYS",
           "OPERATOR_TOPOLOGY_KEYS", "tenant_host_sets", "HIDDEN_NODE", "hidden_host_names", "relabel",
           "shown_job_rows", "view_from_key", "progress_message", "AlertRenderer", "alert_renderer",
           "find_node", "host_hcas", "node_name", "is_index", "node_number"]
