"""OpenSM export and import, and the plain data handed to the engine (issue 9)."""
# ruff: noqa: F811  (pytest fixtures imported from tenancy_fixtures are redefined as test arguments)

import numpy as np
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from fabric_engine.errors import FormatError
from fabric_engine.formats.opensm_partitions import parse
from fabric_engine.formats.opensm_qos import parse_opensm_conf, parse_policy
from fabric_engine.policy import enforce
from ibweb.tenancy.engine_policy import policy_data, policy_for, policy_version
from ibweb.tenancy.importers import import_partitions_conf
from ibweb.tenancy.models import AuditEntry, Partition, PartitionMember, QosPolicy, ServiceClass
from tests.support.tenancy_fixtures import fabric, host_guid, partitions, tenants, user_in  # noqa: F401

pytestmark = pytest.mark.django_db


def operator_api() -> APIClient:
    client = APIClient()
    client.force_authenticate(user_in("operator", "op-export"))
    return client


def test_export_partitions_conf(partitions):
    a, g = partitions
    a.sl, a.mtu, a.rate = 1, 5, 21
    a.save()
    text = operator_api().get("/api/tenancy/fabrics/tiny/opensm/partitions.conf")
    assert text["Content-Disposition"] == 'attachment; filename="tiny-partitions.conf"'
    specs = {p.pkey: p for p in parse(text.content.decode())}
    assert {m.target: m.membership for m in specs[0x7FFF].members} == {"ALL_CAS": "limited", "ALL_SWITCHES": "full",
                                                                        "SELF": "full"}
    assert (specs[1].name, specs[1].mtu, specs[1].rate, specs[1].sl) == ("acme", 5, 21, 1)
    assert {m.target: m.membership for m in specs[1].members} == {int(host_guid(0), 16): "full",
                                                                  int(host_guid(1), 16): "limited"}


def test_default_partition_is_all_full_without_partitions(fabric, tmp_path):
    call_command("export_opensm", "tiny", str(tmp_path))
    specs = parse((tmp_path / "partitions.conf").read_text())
    assert len(specs) == 1 and {m.target: m.membership for m in specs[0].members} == {"ALL": "full", "SELF": "full"}
    assert (tmp_path / "opensm.conf").read_text().endswith("qos FALSE\n")


def test_export_qos_files(partitions, tmp_path):
    a, g = partitions
    gold = ServiceClass.objects.create(name="gold", sl=2, rate_limit=16)
    a.tenant.service_class = gold
    a.tenant.save()
    QosPolicy.objects.create(fabric=a.fabric, max_vls=4, high_limit=8, vlarb_high="2:32", vlarb_low="0:8,3:4",
                             sl2vl="0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,15")
    call_command("export_opensm", "tiny", str(tmp_path))
    tables = parse_opensm_conf((tmp_path / "opensm.conf").read_text())["qos"]
    assert tables.vlarb_high == [(2, 32)] and tables.sl2vl[-1] == 15 and tables.high_limit == 8
    levels, rules, _ = parse_policy((tmp_path / "qos-policy.conf").read_text())
    by_pkey = {r.pkeys[0]: next(lv for lv in levels if lv.name == r.level) for r in rules}
    assert by_pkey[1].sl == 2 and by_pkey[1].rate_limit == 16  # from the tenant's class
    assert by_pkey[2].sl == 3  # the partition's own SL


def test_import_every_syntax_then_reexport(fabric, tenants):
    text = f"""# from a live subnet
Default=0x7fff,ipoib : ALL=full, SELF=full ;
acme=0x0001,ipoib,mtu=4,rate=21,sl=1,defmember=full : {host_guid(0)}, {host_guid(1)}=limited ;
acme=0x0001 : {host_guid(2)} ;
infra=0x0100,indx0 : ALL_SWITCHES=full, SELF=full ;
auto : {host_guid(5)}=both ;
"""
    result = import_partitions_conf(fabric, text, user_in("policy admin", "imp"))
    assert result.created == ["acme (0x0001)", "infra (0x0100)", "auto (0x0002)"]
    assert "partitions.conf:2" in result.notes[0]
    acme = Partition.objects.get(pkey=1)
    assert (acme.mtu, acme.rate, acme.sl, acme.default_membership) == (4, 21, 1, "full")
    assert dict(acme.members.values_list("guid", "membership")) == {host_guid(0): "full", host_guid(1): "limited",
                                                                    host_guid(2): "limited"}
    infra = Partition.objects.get(pkey=0x100)
    assert (infra.all_switches, infra.self_port, infra.index0) == ("full", "full", True)
    assert AuditEntry.objects.filter(action="import").count() == 3
    again = parse(operator_api().get("/api/tenancy/fabrics/tiny/opensm/partitions.conf").content.decode())
    assert [p.pkey for p in again] == [0x7FFF, 1, 2, 0x100]


@pytest.mark.parametrize("text, line, words", [
    ("a=0x0001 : {g0} ;\nb=0x0002 : 0x1234 ;", 2, "not a port of fabric tiny"),
    ("a=0x0001 : {g0} ;\n\n0x0002 : {g0} ;", 3, "a partition needs a name"),
    ("a=0x0001 : {g0} ;\nb=0x0002,sl=99 : {g0} ;", 2, "sl=99"),
    ("a=0x0001 : {g0} ;\na=0x0002 : {g0} ;", 2, "already used"),
    ("a=0x0001 :\n  mgid=ff12:401b::1\n  {g0} ;", 2, "multicast"),
    ("a=0x0001,scope=2 : {g0} ;", 1, "scope"),
    ("a=0x0001 : {g0}=maybe ;", 1, "membership"),
])
def test_import_errors_name_the_line_and_save_nothing(partitions, text, line, words):
    before = (Partition.objects.count(), PartitionMember.objects.count(), AuditEntry.objects.count())
    with pytest.raises(FormatError) as info:
        import_partitions_conf(partitions[0].fabric, text.format(g0=host_guid(3)))
    assert info.value.line == line and words in info.value.message
    assert (Partition.objects.count(), PartitionMember.objects.count(), AuditEntry.objects.count()) == before


def test_api_import_reports_line(partitions):
    client = APIClient()
    client.force_authenticate(user_in("policy admin", "pa"))
    r = client.post("/api/tenancy/fabrics/tiny/opensm/partitions.conf", "x=0x9 : 0x5 ;", content_type="text/plain")
    assert r.status_code == 400 and r.json()["line"] == 1
    r = client.post("/api/tenancy/fabrics/tiny/opensm/partitions.conf", {"text": f"x=0x9 : {host_guid(7)} ;"},
                    format="json")
    assert r.status_code == 200 and r.json()["created"] == ["x (0x0009)"]
    viewer = APIClient()
    viewer.force_authenticate(user_in("viewer", "vv"))
    assert viewer.post("/api/tenancy/fabrics/tiny/opensm/partitions.conf", {"text": "y=0xa : ;"},
                       format="json").status_code == 403


def test_engine_policy_follows_the_database(partitions):
    a, g = partitions
    fabric = a.fabric
    v0 = policy_version(fabric.pk)
    policy, inv = policy_for(fabric)
    assert policy.names == ("Default", "acme", "globex")
    h = inv.hosts
    fp = enforce(policy, np.array([h[0], h[1], h[0]]), np.array([h[1], h[0], h[4]]), np.zeros(3, int))
    assert fp.allowed.tolist() == [True, True, False]
    PartitionMember.objects.filter(guid=host_guid(0)).update(membership="limited")  # bulk update: no signal
    PartitionMember.objects.create(partition=g, guid=host_guid(0), membership="full")
    assert policy_version(fabric.pk) > v0
    policy, _ = policy_for(fabric)
    fp = enforce(policy, np.array([h[0], h[0]]), np.array([h[1], h[4]]), np.zeros(2, int))
    assert fp.allowed.tolist() == [False, True]
    data = policy_data(fabric)
    assert data["partitions"][2]["sl"] == 3 and "qos" not in data


def test_access_helpers_for_jobs_and_hosts(partitions, tenants):
    from ibweb.access import redaction, view_of

    acme, _ = tenants
    user = user_in("viewer", "acme-h", acme)
    inv = policy_for(partitions[0].fabric)[1]
    shown = redaction(view_of(user), partitions[0].fabric)
    assert inv.hosts[~shown.hidden_nodes(inv)[inv.hosts]].tolist() == inv.hosts[:2].tolist()
    assert shown.shows_job("acme") and shown.shows_job("Acme") and not shown.shows_job("globex")
    assert not shown.shows_job(None)
    operator = redaction(view_of(user_in("operator", "op")), partitions[0].fabric)
    assert operator.shows_all and not operator.hidden_nodes(inv).any() and operator.shows_job("globex")
