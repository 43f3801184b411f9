"""A fabric shared by two tenants with something of each to leak, and one user per role (issue 14).

``shared`` (emulated, 16 hosts): tenant ``acme`` runs ``acme-train`` on gpu0001-0004
(partition 0x0a11), tenant ``globex`` runs ``globex-secret`` on gpu0005-0008 (partition
0x0b22); both may use SHARP; partitions were filled through the services (so the audit
log names members); a what-if analysis failed a cable of a globex host; ``lab`` is a
telemetry-fed fabric whose collector holds secrets. Both are in the cluster ``shared-cluster``
(issue 25): ``shared`` its compute plane of rail 1, ``lab`` its storage fabric.
:func:`identifiers` lists what must never reach a user who may not see a tenant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.auth.models import Permission, User
from django.test import override_settings

from fabric_engine.scenario import build_emulator
from ibweb.fabrics.models import Analysis, Cluster, Fabric
from ibweb.telemetry.models import CollectorConfig, PushToken, Sweep
from ibweb.tenancy import services
from ibweb.tenancy.models import Partition, QosPolicy, ServiceClass, Tenant
from ibweb.twin.models import CablingPlan, JobSource, JobToken, ScheduledJob

SPEC = {
    "topology": {"generator": "fat_tree", "hosts": 16, "radix": 8, "name": "shared"},
    "jobs": [
        {"name": "acme-train", "tenant": "acme", "hosts": 4, "placement": "packed", "sharp": True, "buffer_gb": 1,
         "compute_s": 0.2},
        {"name": "globex-secret", "tenant": "globex", "hosts": 4, "placement": "packed", "sharp": True,
         "buffer_gb": 1, "compute_s": 0.2},
    ],
    "sharp": {"allowed_tenants": ["acme", "globex"]},
    "health": [{"kind": "hot_module", "port": "gpu0005 1", "celsius": 78}],  # a globex host's: in the health report
    "tick_s": 1.0,
}
PKEYS = {"acme": 0x0A11, "globex": 0x0B22}
CONTACTS = {"acme": "alice@acme.example", "globex": "gina@globex.example"}
NAMES = {"acme": "Acme Corp", "globex": "Globex Inc"}
#: Collector secrets: never shown by the API or the admin, to anyone.
SECRETS = ("s3cret-env-value", "s3cret-prefix-password")

#: role -> (level it should get, groups, tenant, is_staff, is_superuser)
ROLES = {
    "anonymous-public": None,
    "anonymous-private": None,
    "viewer": ("viewer", None, True, False),
    "acme-user": ("viewer", "acme", True, False),
    "operator": ("operator", None, True, False),
    "policy-admin": ("policy admin", None, True, False),
    "superuser": (None, None, True, True),
}


@dataclass
class Shared:
    fabric: Fabric
    lab: Fabric
    tenants: dict[str, Tenant]
    partitions: dict[str, Partition]
    hosts: dict[str, list[int]]
    users: dict[str, User | None]
    analysis: Analysis
    cluster: Cluster


def make_user(role: str) -> User | None:
    spec = ROLES[role]
    if spec is None:
        return None
    group, tenant, staff, superuser = spec
    user = User.objects.create_user(role, password="pw-" + role, is_staff=staff, is_superuser=superuser)
    if group:
        user.user_permissions.add(*role_permissions(group))
    if tenant:
        Tenant.objects.get(slug=tenant).users.add(user)
    return user


def role_migrations() -> list:
    """The migration modules that grant the roles their permissions: every one of ibweb's with a ``ROLES``."""
    import sys

    from django.db.migrations.loader import MigrationLoader

    modules = [sys.modules[type(m).__module__] for m in MigrationLoader(None).disk_migrations.values()]
    return sorted((m for m in modules if m.__name__.startswith("ibweb.") and hasattr(m, "ROLES")),
                  key=lambda m: m.__name__)


def role_permissions(group: str) -> list[Permission]:
    """The permissions of a role, as the migrations grant them (granted directly: flushes drop the groups)."""
    pairs = [p for m in role_migrations() for p in m.ROLES.get(group, [])]
    return [Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in pairs]


def build() -> Shared:
    """Create the cluster and its two fabrics, the tenants and their data, and one user per role (needs the
    database)."""
    cluster = Cluster.objects.create(name="Shared cluster", slug="shared-cluster")
    fabric = Fabric.objects.create(name="Shared", slug="shared", spec=SPEC, tick_s=1.0, cluster=cluster,
                                   cluster_role="compute", rail=1)
    emulator = build_emulator(fabric.scenario())
    f = emulator.fabric
    tenants, partitions, hosts = {}, {}, {}
    operator = User.objects.create_user("audit-author", password="pw-audit")
    for job in emulator.jobs:
        slug = job.tenant
        tenant = Tenant.objects.create(slug=slug, name=NAMES[slug], contacts=CONTACTS[slug],
                                       description=f"{NAMES[slug]} research")
        tenants[slug] = tenant
        hosts[slug] = [int(h) for h in job.hosts]
        partition = Partition.objects.create(fabric=fabric, tenant=tenant, name=f"{slug}-jobs", pkey=PKEYS[slug])
        guids = [f"0x{int(f.port_guid[f.port_offset[h]]):016x}" for h in job.hosts]
        services.add_members(partition, [(g, "full") for g in guids], operator, "api")
        partitions[slug] = partition
    gold = ServiceClass.objects.create(name="gold", sl=2)
    tenants["globex"].service_class = gold
    tenants["globex"].save()
    QosPolicy.objects.create(fabric=fabric)
    lab = Fabric.objects.create(name="Lab", slug="lab", mode="telemetry", cluster=cluster, cluster_role="storage")
    config = CollectorConfig.objects.create(fabric=lab, command_prefix=["sshpass", "-p", SECRETS[1], "ssh", "mgmt"],
                                            environment={"IBSIM_TOKEN": SECRETS[0]})
    PushToken.issue(config, "collector")
    Sweep.objects.create(config=config, source="commands", status="partial",
                         failures=[{"shard": 0, "target": "gpu0005", "error": "no answer"}])
    source = JobSource.objects.create(fabric=lab, accounts={"gx-research": "globex"})
    JobToken.issue(source, "scheduler")
    ScheduledJob.objects.create(fabric=lab, job_id="4242", origin="slurm", tenant="globex", account="gx-research",
                                name="globex-secret", hosts=["gpu0005"])
    CablingPlan.objects.create(fabric=lab, filename="lab-plan.csv", text="")
    _events(fabric, f, tenants, hosts)
    cable = int(f.out_link(hosts["globex"][0], 1)) % f.num_links
    analysis = Analysis.objects.create(fabric=fabric, kind="whatif_links",
                                       params={"failed_cables": [cable], "ebb_patterns": 0, "seed": 1},
                                       requested_by=operator)
    from ibweb.fabrics.tasks import run_analysis

    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    users = {role: make_user(role) for role in ROLES}
    return Shared(fabric, lab, tenants, partitions, hosts, users, analysis, cluster)


def _events(fabric: Fabric, f, tenants: dict[str, Tenant], hosts: dict[str, list[int]]) -> None:
    """A job event of each tenant and a fabric-wide one naming a globex host, each with a comment."""
    from django.utils import timezone

    from ibweb.events.models import Event, EventComment

    now = timezone.now()
    g = hosts["globex"][0]
    entry = [g, str(f.node_name[g]), f"0x{int(f.guid[g]):016x}"]
    for slug, job in (("acme", "acme-train"), ("globex", "globex-secret")):
        h = hosts[slug][0]
        event = Event.objects.create(fabric=fabric, key=f"slow:{job}", kind="slow_job", object_type="job",
                                     object_id=job, job=job, tenant=tenants[slug], message=f"{job} runs slow",
                                     hosts=[[h, str(f.node_name[h]), f"0x{int(f.guid[h]):016x}"]],
                                     details={"job": job}, first_seen=now, last_seen=now)
        EventComment.objects.create(event=event, username="audit-author", text=f"looking at {job}")
    down = Event.objects.create(fabric=fabric, key=f"link_down:{entry[1]}", kind="link_down", object_type="node",
                                object_id=entry[1], node=entry[1], hosts=[entry],
                                message=f"{entry[1]} port 1 is down", details={"node": entry[1]}, first_seen=now,
                                last_seen=now)
    EventComment.objects.create(event=down, username="audit-author", text=f"cable of {entry[1]} reseated")
    _telemetry_events(fabric, f, hosts, now.timestamp())


def _telemetry_events(fabric: Fabric, f, hosts: dict[str, list[int]], t: float) -> None:
    """What a telemetry-fed fabric raises about both tenants' hosts, recorded as its runner's signal is (issue 26):
    a counter reset (link indices and ports, no host field), a cable down, a twin deviation naming a globex host
    by GUID only with both tenants' jobs; each commented by an operator naming hosts, jobs and tenants."""
    from fabric_engine.telemetry import CounterSamples
    from fabric_engine.telemetry.conditions import cabling_conditions
    from fabric_engine.telemetry.observe import observe
    from fabric_engine.twin.persistence import alert_of
    from ibweb.events.models import Event, EventComment
    from ibweb.events.recorder import EventRecorder

    ends = [hosts["acme"][0], *hosts["globex"][:2]]

    def sweep(at: float, words: int) -> CounterSamples:
        return CounterSamples.from_records([{"lid": int(f.lid[h]), "port": 1, "t": at, "extended": True,
                                             "counters": {"PortXmitData": words}} for h in ends])

    state = observe(f, sweep(t - 10.0, 10**9), sweep(t, 1000), seq=2, t=t, tick_s=10.0, now=t).state
    g = hosts["globex"][0]
    guid = f"0x{int(f.guid[g]):016x}"
    alerts = [a for a in state.alerts if a["kind"] == "counter_reset"]
    alerts += cabling_conditions(f, f.without_links([int(f.out_link(g, 1)) % f.num_links]))
    alerts.append(alert_of({"kind": "below", "key": f"{guid}/1", "link": int(f.out_link(g, 1)), "hosts": [guid],
                            "jobs": ["acme-train", "globex-secret"], "expected_gbps": 80.0, "observed_gbps": 0.0}))
    assert {a["kind"] for a in alerts} == {"counter_reset", "link_down", "twin"}
    EventRecorder(fabric.pk).apply(alerts, [], seq=0, t=t, first=False, fabric=f,
                                   jobs=[{"id": "acme-train", "tenant": "acme"},
                                         {"id": "globex-secret", "tenant": "globex"}])
    _routing_after_hosts_left(fabric, f, [hosts["globex"][0], hosts["acme"][0]], t)
    for event in Event.objects.filter(fabric=fabric, kind__in=("counter_reset", "link_down", "twin"), resolved=True):
        EventComment.objects.create(event=event, username="audit-author",
                                    text=f"{f.node_name[g]} of {NAMES['globex']} (globex-secret) checked")


def without_nodes(f, gone: list[int]):
    """The engine fabric ``f`` without the nodes ``gone`` and their cables (the others keep names and GUIDs)."""
    from fabric_engine.formats.json_format import to_json
    from fabric_engine.scenario import build_fabric

    j = to_json(f)
    keep = [n for n in range(f.num_nodes) if n not in gone]
    at = {n: k for k, n in enumerate(keep)}
    cables = [c for c in range(f.num_links) if int(f.a_node[c]) in at and int(f.b_node[c]) in at]
    links = {k: [v[c] for c in cables] for k, v in j["links"].items()}
    links["a_node"], links["b_node"] = [at[n] for n in links["a_node"]], [at[n] for n in links["b_node"]]
    return build_fabric({"fabric": {**j, "nodes": {k: [v[n] for n in keep] for k, v in j["nodes"].items()},
                                    "links": links}})


def _routing_after_hosts_left(fabric: Fabric, f, gone: list[int], t: float) -> None:
    """The routing event of a discovery that lost a host of each tenant (issue 42), as the telemetry source makes it
    (the hosts' objects resolved on the discovery they were in) and its runner's signal records it."""
    from fabric_engine.telemetry import diff_topology
    from ibweb.events.recorder import EventRecorder
    from ibweb.telemetry.lft_tracker import RoutingTracker
    from ibweb.telemetry.message_parts import held

    after = without_nodes(f, gone)
    tracker = RoutingTracker(None)
    tracker.on_topology(f)
    event = tracker.on_topology(after, held(diff_topology(f, after), f, fabric))
    assert " vanished; " in event["message"] and event["gone"], event
    EventRecorder(fabric.pk).apply([event], [], seq=1, t=t, first=False, fabric=after)


def identifiers(shared: Shared, slug: str) -> list[re.Pattern]:
    """Patterns of everything that names tenant ``slug``: slug, name, contacts, job ids, its hosts' names and
    GUIDs (node and port), its partition's P_Key."""
    f = build_emulator(shared.fabric.scenario()).fabric
    words = [slug, NAMES[slug], CONTACTS[slug], *[j["name"] for j in SPEC["jobs"] if j["tenant"] == slug]]
    for h in shared.hosts[slug]:
        words.append(str(f.node_name[h]))
        words.append(f"{int(f.guid[h]):016x}")
        words.extend(f"{int(f.port_guid[s]):016x}" for s in range(int(f.port_offset[h]),
                                                                   int(f.port_offset[h] + f.nports[h])))
    pkey = PKEYS[slug]
    words.extend([f"0x{pkey:04x}", f"0x{pkey:x}", f"0x{pkey | 0x8000:04x}"])
    return [re.compile(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])", re.IGNORECASE) for w in words]


def leaks(text: str, patterns: list[re.Pattern]) -> list[str]:
    """The identifiers among ``patterns`` that appear in ``text``."""
    return sorted({m.group(0) for p in patterns for m in [p.search(text)] if m})


def public_read(on: bool):
    return override_settings(IBWEB_PUBLIC_READ=on)


def run_engine(fabric: Fabric, ticks: int = 2) -> None:
    """Start ``fabric``'s runner and run ``ticks`` ticks of it (its records, frames and events are published)."""
    import asyncio

    from ibweb.live.engine.runner import FabricRunner

    async def run():
        engine = FabricRunner(fabric)
        await engine.start()
        for _ in range(ticks):
            await engine.tick()

    asyncio.run(run())
