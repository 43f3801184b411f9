"""Each leak of issue 14, closed: tenant users, users of no tenant and anonymous visitors see no other tenant.

Every test here failed before :mod:`ibweb.access` decided these endpoints.
"""


import pytest
from rest_framework.test import APIClient

from tests.support.access_fixtures import build, identifiers, leaks, public_read, run_engine
from tests.support.engine_fixtures import published

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def shared():
    return build()


def client_of(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def hidden_from(shared, role: str) -> list:
    """Identifiers ``role`` must not see: globex's for acme's user, both tenants' for the fabric-wide view."""
    if role == "acme-user":
        return identifiers(shared, "globex")
    return identifiers(shared, "globex") + identifiers(shared, "acme")


FABRIC_WIDE = ("anonymous-public", "viewer")


def test_audit_log_is_for_operators_only(shared):
    with public_read(True):
        for role in (*FABRIC_WIDE, "acme-user"):
            r = client_of(shared.users[role]).get("/api/tenancy/audit-entries/")
            assert r.status_code == 403, role
            assert not leaks(r.content.decode(), hidden_from(shared, role)), role
        r = client_of(shared.users["operator"]).get("/api/tenancy/audit-entries/")
        assert r.status_code == 200 and "gina@globex.example" not in r.content.decode()  # members, not contacts
        assert leaks(r.content.decode(), identifiers(shared, "globex"))


def test_metrics_show_only_the_ports_a_level_may_see(shared):
    run_engine(shared.fabric)
    with public_read(True):
        full = client_of(shared.users["operator"]).get("/metrics", {"fabric": "shared"}).content.decode()
        assert 'name="gpu0005"' in full and 'name="gpu0001"' in full
        for role in (*FABRIC_WIDE, "acme-user"):
            text = client_of(shared.users[role]).get("/metrics", {"fabric": "shared"}).content.decode()
            assert not leaks(text, hidden_from(shared, role)), role
            assert 'name="spine01"' in text and 'remote_name="leaf01"' in text  # switch-to-switch ports stay
            assert "host-" not in text  # hidden ports are left out, not renamed
        acme = client_of(shared.users["acme-user"]).get("/metrics", {"fabric": "shared"}).content.decode()
        assert 'name="gpu0001"' in acme and 'remote_name="gpu0001"' in acme


def test_metrics_for_a_prometheus_service_account_token(shared):
    from ibweb.accounts.models import ApiToken
    from ibweb.tenancy.models import Tenant

    run_engine(shared.fabric)
    _, key = ApiToken.issue(shared.users["operator"], "prometheus")
    with public_read(False):
        assert APIClient().get("/metrics").status_code == 403
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        text = client.get("/metrics").content.decode()
        assert 'name="gpu0005"' in text and 'name="gpu0001"' in text
    assert Tenant.objects.count() == 2


def test_fabric_list_and_detail_show_only_own_jobs(shared):
    with public_read(True):
        for role in (*FABRIC_WIDE, "acme-user"):
            client = client_of(shared.users[role])
            for url in ("/api/fabrics/fabrics/", "/api/fabrics/fabrics/shared/"):
                r = client.get(url)
                assert r.status_code == 200 and not leaks(r.content.decode(), hidden_from(shared, role)), (role, url)
        detail = client_of(shared.users["acme-user"]).get("/api/fabrics/fabrics/shared/").json()
        assert [j["name"] for j in detail["spec"]["jobs"]] == ["acme-train"]
        assert detail["spec"]["sharp"]["allowed_tenants"] == ["acme"]
        everything = client_of(shared.users["operator"]).get("/api/fabrics/fabrics/shared/").json()
        assert len(everything["spec"]["jobs"]) == 2


def test_path_hides_the_names_of_hosts_the_feed_hides(shared):
    published(shared.fabric)  # the path API reads the routing its engine published
    globex_host, acme_host = shared.hosts["globex"][0], shared.hosts["acme"][0]
    with public_read(True):
        acme = client_of(shared.users["acme-user"])
        r = acme.get("/api/fabrics/fabrics/shared/path/", {"src": globex_host, "dst": acme_host})
        assert r.status_code == 200
        names = [h["name"] for h in r.json()["hops"]]
        assert names[0] == f"host-{globex_host}" and names[-1] == "gpu0001" and "leaf01" in names
        assert not leaks(r.content.decode(), identifiers(shared, "globex"))
        # a hidden host is found by its label, and not by its real name (the same answer as an unknown name)
        assert acme.get("/api/fabrics/fabrics/shared/path/", {"src": f"host-{globex_host}",
                                                              "dst": "gpu0001"}).status_code == 200
        by_name = acme.get("/api/fabrics/fabrics/shared/path/", {"src": "gpu0005", "dst": "gpu0001"})
        unknown = acme.get("/api/fabrics/fabrics/shared/path/", {"src": "gpu9999", "dst": "gpu0001"})
        assert by_name.status_code == unknown.status_code == 400
        assert by_name.json()["src"].replace("gpu0005", "X") == unknown.json()["src"].replace("gpu9999", "X")
        anon = client_of(None).get("/api/fabrics/fabrics/shared/path/", {"src": acme_host, "dst": globex_host})
        assert anon.status_code == 200 and not leaks(anon.content.decode(), hidden_from(shared, "viewer"))
        op = client_of(shared.users["operator"]).get("/api/fabrics/fabrics/shared/path/",
                                                     {"src": "gpu0005", "dst": "gpu0001"})
        assert op.status_code == 200 and op.json()["hops"][0]["name"] == "gpu0005"


def test_port_history_by_name_or_guid_of_a_hidden_host_is_not_found(shared):
    from fabric_engine.scenario import build_emulator

    f = build_emulator(shared.fabric.scenario()).fabric
    h = shared.hosts["globex"][0]
    guid = f"0x{int(f.guid[h]):016x}"
    with public_read(True):
        for role in (*FABRIC_WIDE, "acme-user"):
            client = client_of(shared.users[role])
            for key in ("gpu0005", guid):
                r = client.get(f"/api/fabrics/fabrics/shared/ports/{key}/1/history/")
                assert r.status_code == 404, (role, key)
            r = client.get(f"/api/fabrics/fabrics/shared/ports/host-{h}/1/history/")
            assert r.status_code == 200 and r.json()["node"] == f"host-{h}"
        op = client_of(shared.users["operator"]).get(f"/api/fabrics/fabrics/shared/ports/{guid}/1/history/")
        assert op.status_code == 200 and op.json()["node"] == "gpu0005"


def test_analyses_show_only_own_jobs_and_hosts(shared):
    url = f"/api/fabrics/fabrics/shared/analyses/{shared.analysis.pk}/"
    full = client_of(shared.users["operator"]).get(url).json()
    assert {d["id"] for d in full["result"]["delta"]} == {"acme-train", "globex-secret"}
    assert "gpu0005" in str(full["result"]["failed"])
    with public_read(True):
        for role in (*FABRIC_WIDE, "acme-user"):
            client = client_of(shared.users[role])
            for u in ("/api/fabrics/fabrics/shared/analyses/", url):
                r = client.get(u)
                assert r.status_code == 200 and not leaks(r.content.decode(), hidden_from(shared, role)), (role, u)
        mine = client_of(shared.users["acme-user"]).get(url).json()
        assert [d["id"] for d in mine["result"]["delta"]] == ["acme-train"]
        assert mine["result"]["summary"]["jobs"] == 1 and mine["requested_by"] is None


def test_sharp_allowed_tenants_and_jobs_are_cut_to_the_view(shared):
    run_engine(shared.fabric)
    with public_read(True):
        for role in (*FABRIC_WIDE, "acme-user"):
            for section in ("sharp", "storage"):
                r = client_of(shared.users[role]).get(f"/api/fabrics/fabrics/shared/{section}/")
                assert r.status_code == 200 and not leaks(r.content.decode(), hidden_from(shared, role)), role
        sharp = client_of(shared.users["acme-user"]).get("/api/fabrics/fabrics/shared/sharp/").json()["sharp"]
        assert sharp["allowed_tenants"] == ["acme"] and [j["id"] for j in sharp["jobs"]] == ["acme-train"]


def test_collectors_and_sweeps_are_for_operators_only(shared):
    with public_read(True):
        for role in (*FABRIC_WIDE, "acme-user"):
            for url in ("/api/telemetry/collectors/", "/api/telemetry/sweeps/"):
                assert client_of(shared.users[role]).get(url).status_code == 403, (role, url)
        assert client_of(shared.users["operator"]).get("/api/telemetry/collectors/").status_code == 200


def test_tenancy_api_and_exports_give_nothing_to_the_fabric_wide_view(shared):
    with public_read(True):
        for role in FABRIC_WIDE:
            client = client_of(shared.users[role])
            for url in ("/api/tenancy/tenants/", "/api/tenancy/partitions/", "/api/tenancy/members/",
                        "/api/tenancy/fabrics/shared/pkeys/", "/api/tenancy/service-classes/"):
                r = client.get(url)
                assert r.status_code == 200 and not leaks(r.content.decode(), hidden_from(shared, role)), (role, url)
            assert list(client.get("/api/tenancy/fabrics/shared/pkeys/").json()) == ["0x7fff"]
            for name in ("partitions.conf", "qos-policy.conf", "opensm.conf"):
                r = client.get(f"/api/tenancy/fabrics/shared/opensm/{name}")
                assert r.status_code == 403 and not leaks(r.content.decode(), hidden_from(shared, role))
        acme = client_of(shared.users["acme-user"])
        assert [t["slug"] for t in acme.get("/api/tenancy/tenants/").json()["results"]] == ["acme"]
        assert list(acme.get("/api/tenancy/fabrics/shared/pkeys/").json()) == ["0x7fff", "0x0a11"]
        assert acme.get("/api/tenancy/fabrics/shared/opensm/partitions.conf").status_code == 403


def test_removing_a_user_from_their_last_tenant_narrows_their_view(shared):
    user = shared.users["acme-user"]
    client = client_of(user)
    assert client.get("/api/tenancy/tenants/").json()["count"] == 1
    shared.tenants["acme"].users.remove(user)
    assert client.get("/api/tenancy/tenants/").json()["count"] == 0
    assert client.get("/api/fabrics/fabrics/shared/jobs/").json()["jobs"] == []
