"""``manage.py create_user NAME --role ROLE [--tenant SLUG] [--token] [--password-stdin]``: an account of a role.

The role is one of the groups the role migrations make (``operator``, ``policy admin``, ``viewer``, and
``service account``: read-only API access for scripts). Staff roles may use the admin; a service account may
not. Without ``--password-stdin`` the password is unusable (sign in with a token, or set one later).
``--token`` issues an API token and prints its key on stdout, once (only its hash is kept). Nothing is
created when any argument is refused.
"""

from __future__ import annotations

import sys

from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UsernameField
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from ibweb.accounts.models import ApiToken
from ibweb.tenancy.models import Tenant

#: ``--role`` value -> (group the role migrations make, is staff).
ROLES = {
    "operator": ("operator", True),
    "policy-admin": ("policy admin", True),
    "viewer": ("viewer", True),
    "service-account": ("service account", False),
}


class Command(BaseCommand):
    help = ("Create a user of a role (operator, policy-admin, viewer, service-account), optionally in a tenant and "
            "with an API token printed once.")
    #: ``call_command(..., stdin=io.StringIO(...))``: where ``--password-stdin`` reads (tests).
    stealth_options = ("stdin",)

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="the user name")
        parser.add_argument("--role", required=True, choices=sorted(ROLES), help="the role's group")
        parser.add_argument("--tenant", help="slug of a tenant the user belongs to (sees its share)")
        parser.add_argument("--token", action="store_true", help="issue an API token and print its key (once)")
        parser.add_argument("--password-stdin", action="store_true",
                            help="read the password from the first line of standard input (else: unusable)")

    def handle(self, name: str, role: str, tenant: str | None, token: bool, password_stdin: bool,
               **options) -> None:
        User = get_user_model()
        username = UsernameField().to_python(name) or ""
        try:
            User._meta.get_field(User.USERNAME_FIELD).run_validators(username)
        except ValidationError as exc:
            raise CommandError(f"NAME {name!r}: {' '.join(exc.messages)}") from None
        if not username:
            raise CommandError("NAME: empty")
        same = User._default_manager.filter(**{f"{User.USERNAME_FIELD}__iexact": username}).first()
        if same is not None:
            raise CommandError(f"NAME {name!r}: the user {same.get_username()!r} exists (names are one account "
                               "whatever their case)")
        group_name, staff = ROLES[role]
        group = Group.objects.filter(name=group_name).first()
        if group is None:
            raise CommandError(f"--role {role}: its group {group_name!r} is missing (run manage.py migrate)")
        row = None
        if tenant is not None:
            row = Tenant.objects.filter(slug=tenant).first()
            if row is None:
                known = ", ".join(Tenant.objects.order_by("slug").values_list("slug", flat=True)[:20]) or "none"
                raise CommandError(f"--tenant {tenant!r}: no such tenant (tenants: {known})")
        user = User(**{User.USERNAME_FIELD: username}, is_staff=staff)
        if password_stdin:
            password = _first_line(options.get("stdin") or sys.stdin)
            try:
                validate_password(password, user)
            except ValidationError as exc:
                raise CommandError(f"--password-stdin: {' '.join(exc.messages)}") from None
            user.set_password(password)
        else:
            user.set_unusable_password()
        with transaction.atomic():
            user.save()
            user.groups.add(group)
            if row is not None:
                row.users.add(user)
            key = ApiToken.issue(user, "create_user")[1] if token else None
        where = f" in tenant {row.slug}" if row is not None else ""
        self.stderr.write(f"created {role} {username!r}{where}" + ("; its API token (shown once):" if key else ""))
        if key:
            self.stdout.write(key)



def _first_line(stream) -> str:
    line = stream.readline().rstrip("\r\n")
    if not line:
        raise CommandError("--password-stdin: no password on standard input")
    return line
