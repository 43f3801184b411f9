"""Helpers of the page tests: users and data in the running server's database, logging in, screenshots."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.server import ROOT

SCREENSHOTS = ROOT / "docs" / "screenshots"


def manage_shell(tmp_path: Path, code: str, attempts: int = 5) -> str:
    """Run Python ``code`` in ``manage.py shell`` against the database of the server started with ``tmp_path``.

    The running server writes to the same SQLite file (frames' rollups, events, runtime records): the shell
    waits up to 30 s for the write lock, and ``code`` runs again when SQLite still answers "database is
    locked" (a deferred transaction cannot take the lock while the server holds it); so ``code`` must be
    idempotent, as the users and events the page tests seed are.
    """
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}?timeout=30"}
    for attempt in range(attempts):
        done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, check=False)
        if not done.returncode:
            return done.stdout
        if "database is locked" not in done.stderr or attempt == attempts - 1:
            raise RuntimeError(done.stderr)
        time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


USERS = """
from django.contrib.auth.models import Group, User
from ibweb.tenancy.models import Tenant
def make(name, role=None, tenant=None, superuser=False):
    user = User.objects.filter(username=name).first() or User.objects.create_user(name, password='pw-' + name)
    user.is_superuser = user.is_staff = superuser
    user.save()
    if role:
        user.groups.add(Group.objects.get(name=role))
    if tenant:
        Tenant.objects.get(slug=tenant).users.add(user)
make('op', 'operator')
make('pa', 'policy admin')
make('ann', tenant='acme')
make('root', superuser=True)
"""


def make_users(tmp_path: Path) -> None:
    """Users ``op`` (operator), ``pa`` (policy admin), ``ann`` (of acme), ``root``; passwords ``pw-<name>``."""
    manage_shell(tmp_path, USERS)


def log_in(page, server, username: str) -> None:
    page.goto(server.url + "/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("pw-" + username)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url + "/")


def shot(page, name: str, full_page: bool = False) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=full_page)


def tab_to(page, selector: str, presses: int = 120) -> None:
    """Press Tab until the element matching ``selector`` has the focus (the page is usable from the keyboard)."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement === document.querySelector({selector!r})"):
            return
    raise AssertionError(f"Tab never reached {selector}")
