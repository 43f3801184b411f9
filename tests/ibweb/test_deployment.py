"""compose.yaml and production settings (issue 10)."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from ibweb import env

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def settings_env_names() -> set[str]:
    """Every name settings read through ibweb.env (found in the source, not by importing twice)."""
    tree = ast.parse((ROOT / "ibweb" / "settings.py").read_text())
    names = set()
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        if (isinstance(node, ast.Call) and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id == "env" and node.args and isinstance(node.args[0], ast.Constant)):
            names.add(node.args[0].value)
    return names


def test_compose_has_every_service_with_health_checks_and_one_beat():
    services = compose()["services"]
    assert {"postgres", "redis", "web", "engine", "worker", "beat"} <= set(services)
    for name in ("postgres", "redis", "web"):
        assert "healthcheck" in services[name], name
    assert services["beat"]["deploy"]["replicas"] == 1
    assert services["engine"]["deploy"]["replicas"] >= 2
    assert "--workers" in services["web"]["command"]


def test_every_compose_command_exists_in_the_project():
    services = compose()["services"]
    commands = {}
    for name, svc in services.items():
        cmd = svc.get("command")
        if not cmd or name in ("redis",):
            continue
        text = " ".join(cmd)
        for match in re.findall(r"manage\.py (\w+)", text):
            commands[match] = name
        if "ibweb.asgi:application" in text:  # through ibweb.serve: proxy headers from IBWEB_TRUSTED_PROXIES only
            assert cmd[:3] == ["python", "-m", "ibweb.serve"] and "proxy" not in text
        assert "uvicorn" not in text
        if text.startswith("celery"):
            assert cmd[:3] == ["celery", "-A", "ibweb"]
    out = subprocess.run([sys.executable, "manage.py", "help", "--commands"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    missing = {c: s for c, s in commands.items() if c not in out}
    assert not missing and {"run_engine", "migrate", "ensure_demo"} <= set(commands)


def test_compose_environment_names_are_the_ones_settings_read():
    read = settings_env_names()
    assert read >= env.NAMES  # the AST view covers what settings read at import (production adds a few)
    app_env = set(compose()["x-app"]["environment"])
    assert app_env <= read, f"compose sets names settings never read: {app_env - read}"
    assert {"IBWEB_ENV", "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS", "IBWEB_PUBLIC_READ"} <= app_env


def test_production_passes_check_deploy():
    environ = {**os.environ, "IBWEB_ENV": "production", "SECRET_KEY": "x" * 64 + "-production-test-key-9f8e7d",
               "ALLOWED_HOSTS": "ibweb.example.org"}
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                            env=environ, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_secret_key():
    environ = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    environ["IBWEB_ENV"] = "production"
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=environ, capture_output=True,
                            text=True)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr
