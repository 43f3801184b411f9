"""``manage.py create_user`` makes an account of a role, with its token printed once (issue 42)."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from ibweb.accounts.models import ApiToken
from ibweb.tenancy.models import Tenant
from tests.support.access_fixtures import role_permissions

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _role_groups():
    """The groups as the role migrations make them (a flushed database of an earlier test may lack them)."""
    for name in ("operator", "policy admin", "viewer", "service account"):
        Group.objects.get_or_create(name=name)[0].permissions.set(role_permissions(name))


def create(*args: str, stdin: str | None = None) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    extra = {"stdin": io.StringIO(stdin)} if stdin is not None else {}
    call_command("create_user", *args, stdout=out, stderr=err, **extra)
    return out.getvalue().strip(), err.getvalue()


def test_a_service_account_with_a_token_reads_the_api_and_nothing_else(settings):
    settings.IBWEB_PUBLIC_READ = False
    acme = Tenant.objects.create(slug="acme", name="Acme")
    key, said = create("prom-scraper", "--role", "service-account", "--tenant", "acme", "--token")
    assert "service-account 'prom-scraper' in tenant acme" in said and key not in said
    user = User.objects.get(username="prom-scraper")
    assert not user.has_usable_password() and not user.is_staff and list(acme.users.all()) == [user]
    assert ApiToken.objects.get(user=user).digest == hashlib.sha256(key.encode()).hexdigest()
    assert {p.codename for g in user.groups.all() for p in g.permissions.all()} == {
        "view_tenant", "view_serviceclass", "view_partition", "view_partitionmember", "view_qospolicy",
        "view_auditentry", "view_fabric", "view_cluster", "view_scheduledjob", "view_cablingplan", "view_event",
        "view_eventcomment", "view_congestioncontrolpolicy"}
    api = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/fabrics/fabrics/").status_code == 200
    assert api.post("/api/fabrics/fabrics/", {}, format="json").status_code == 403
    assert api.get("/api/tenancy/tenants/").json()["results"][0]["slug"] == "acme"


def test_roles_map_to_their_groups_and_a_password_comes_from_stdin():
    key, _ = create("olga", "--role", "operator", "--password-stdin", stdin="a-long-passphrase-42\n")
    olga = User.objects.get(username="olga")
    assert key == "" and olga.is_staff and olga.check_password("a-long-passphrase-42")
    assert [g.name for g in olga.groups.all()] == ["operator"] and olga.has_perm("tenancy.view_all_tenants")
    create("paul", "--role", "policy-admin")
    assert User.objects.get(username="paul").groups.get().name == "policy admin"


@pytest.mark.parametrize("args, stdin, message", [
    (("x", "--role", "root"), None, "invalid choice: 'root'"),
    (("x", "--role", "viewer", "--tenant", "nope"), None, "--tenant 'nope': no such tenant (tenants: acme)"),
    (("ALICE", "--role", "viewer"), None, "NAME 'ALICE': the user 'alice' exists"),
    (("ａｌｉｃｅ", "--role", "viewer"), None, "the user 'alice' exists"),  # fullwidth: the same name (NFKC)
    (("bad name!", "--role", "viewer"), None, "NAME 'bad name!': Enter a valid username"),
    (("bob", "--role", "viewer", "--password-stdin"), "short\n", "--password-stdin: This password is too short"),
    (("bob", "--role", "viewer", "--password-stdin"), "", "--password-stdin: no password"),
])
def test_bad_arguments_are_refused_by_name_and_create_nothing(args, stdin, message):
    Tenant.objects.create(slug="acme", name="Acme")
    User.objects.create_user("alice")
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        create(*args, "--token", stdin=stdin)
    assert list(User.objects.values_list("username", flat=True)) == ["alice"] and not ApiToken.objects.exists()


def test_a_missing_role_group_says_to_migrate():
    Group.objects.filter(name="service account").delete()
    with pytest.raises(CommandError, match="group 'service account' is missing"):
        create("svc", "--role", "service-account")
