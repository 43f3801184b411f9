"""Start the real ASGI server as a subprocess on a free port, for websocket and browser tests."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from tests.support.processes import stop_process

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running server; ``cookie`` is the ``Cookie`` header of a signed-in operator (sees every tenant)."""

    def __init__(self, proc: subprocess.Popen, port: int, log: Path, session_key: str = "") -> None:
        self.proc, self.port, self.log = proc, port, log
        self.url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}"
        self.session_key = session_key
        self.cookie = f"sessionid={session_key}"

    def get_json(self, path: str, timeout_s: float = 30.0):
        """``GET path`` as the operator, parsed."""
        request = urllib.request.Request(self.url + path, headers={"Cookie": self.cookie})
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.load(response)

    def stop(self) -> None:
        stop_process(self.proc)


def _manage(env: dict, *args: str) -> str:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True).stdout



def session_script(make_user: str) -> str:
    """Code for ``manage.py shell -c``: ``make_user`` (lines that bind ``user``), then print the key of a session
    signed in as ``user``."""
    return f"""
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import Permission, User
from django.contrib.sessions.backends.db import SessionStore
{make_user.strip()}
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""


#: Creates the user ``operator`` (sees every tenant) and prints the key of a session signed in as them.
_OPERATOR_SESSION = session_script("""
user, _ = User.objects.get_or_create(username="operator")
user.set_password("pw-operator")
user.save()
user.user_permissions.add(Permission.objects.get(codename="view_all_tenants"))
""")



#: Per test process: a migrated SQLite database, and one with the demo and the operator's session besides
#: (``demo``: its session key), each made once and copied for each server instead of migrating again.
_TEMPLATES: dict[str, tuple[Path, str]] = {}
#: The databases :func:`running_server` wrote (migrated already when a later server of the test opens one), each
#: with the key of the operator's session in it: a later server without rows of its own reuses it.
_MADE: dict[Path, str] = {}


def _template(kind: str) -> tuple[Path, str]:
    """The database file of template ``kind`` (``migrated`` or ``demo``) and the operator's session key in it."""
    if kind not in _TEMPLATES:
        folder = Path(tempfile.mkdtemp(prefix=f"ibweb-test-{kind}-"))
        env = {**os.environ, "IBWEB_VAR_DIR": str(folder), "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}"}
        if kind == "migrated":
            _manage(env, "migrate", "--verbosity", "0")
            key = ""
        else:
            _copy(_template("migrated")[0], folder / "db.sqlite3")
            key = _manage(env, "shell", "-c", _rows_script([], None)).split()[-1]
        _TEMPLATES[kind] = (folder / "db.sqlite3", key)
    return _TEMPLATES[kind]


def _copy(source: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")


def _rows_script(fabrics: list[dict], setup: str | None) -> str:
    """One ``manage.py shell -c`` script (one process, not one per step): the demo, the extra fabrics, the
    test's ``setup`` code, then the operator's session key, printed last."""
    return f"""
import json as _json
from django.core.management import call_command as _call_command
from ibweb.fabrics.models import Fabric as _Fabric
_call_command("ensure_demo")
for _spec in _json.loads({json.dumps(fabrics)!r}):
    _Fabric.objects.create(**_spec)
exec(compile({(setup or "")!r}, "<setup>", "exec"), globals())
{_OPERATOR_SESSION}
"""


def redis_namespace(tmp_path: Path) -> str:
    """The Redis namespace of the servers (and engine processes) of one test: its own, on a Redis that the
    other tests' servers share."""
    return "ibweb-test-" + hashlib.blake2b(str(tmp_path).encode(), digest_size=6).hexdigest()


def _wait_until_live(server: Server, deadline: float) -> None:
    """Wait for the demo's first frame: with Redis the embedded engine starts once the engine processes settled
    (ibweb.live.engine.share), seconds after the server answers."""
    while True:
        request = urllib.request.Request(server.url + "/api/fabrics/overview/", headers={"Cookie": server.cookie})
        cards = json.loads(urllib.request.urlopen(request, timeout=5).read())["fabrics"]
        if any(c["slug"] == "demo" and c["state"] == "live" for c in cards):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the demo fabric's engine did not start:\n{server.log.read_text()}")
        time.sleep(0.2)


@contextmanager
def running_server(tmp_path: Path, extra_env: dict | None = None, fabrics: list[dict] | None = None,
                   name: str = "server", setup: str | None = None, ready: str = "/api/fabrics/fabrics/"):
    """A uvicorn process serving ibweb with the embedded engine, on a fresh SQLite database.

    ``fabrics``: extra emulated fabrics to create (dicts of model fields) besides the demo.
    ``setup``: Python code run by ``manage.py shell`` before the server starts (rows a test needs).
    ``ready``: the path asked until it answers (``/healthz`` where Django redirects plain HTTP: production).
    Servers started with the same ``tmp_path`` and different ``name`` share the database.
    """
    port = free_port()
    database = f"sqlite:///{tmp_path / 'server.sqlite3'}"
    env = {**os.environ, "IBWEB_VAR_DIR": str(tmp_path), "DATABASE_URL": database,
           "IBWEB_REDIS_NAMESPACE": redis_namespace(tmp_path), "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    target, session_key = tmp_path / "server.sqlite3", ""
    if env["DATABASE_URL"] != database or (target.exists() and target not in _MADE):
        _manage(env, "migrate", "--verbosity", "0")  # another database, or one the test made: migrated here
    elif not target.exists():
        # a test's first server; without rows or settings of its own, the demo and the session as the script
        # below writes them are copied too (no manage.py process at all)
        plain = not (fabrics or setup or extra_env or env.get("REDIS_URL"))
        source, session_key = _template("demo" if plain else "migrated")
        _copy(source, target)
        _MADE[target] = session_key
    elif not (fabrics or setup):
        # a later server of the test (a restart, a second web process): the demo and the operator's session are
        # in the database already (no manage.py process)
        session_key = _MADE[target]
    if not session_key:
        session_key = _manage(env, "shell", "-c", _rows_script(fabrics or [], setup)).split()[-1]
        if target in _MADE:
            _MADE[target] = session_key
    log = tmp_path / f"{name}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ibweb.serve", "ibweb.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--lifespan", "on", "--ws", "ibweb.websocket.deflate:WebSocketProtocol"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    server = Server(proc, port, log, session_key)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()}")
            try:
                # refused at once until uvicorn listens; then the first answer (URLconf, views imported) may take
                # seconds on a loaded machine: waited for, not asked again while the server still works on it
                urllib.request.urlopen(server.url + ready, timeout=15).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server did not come up:\n{log.read_text()}") from None
                time.sleep(0.2)
        if env.get("IBWEB_ENGINE_EMBEDDED", "1") != "0":
            _wait_until_live(server, deadline + 30)
        yield server
    finally:
        server.stop()
