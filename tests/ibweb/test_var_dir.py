"""Issue 35: ``make run`` with an ``IBWEB_VAR_DIR`` that did not exist yet stopped with "unable to open database
file"; the directory is now created at start, and the start says where."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from ibweb import env

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_var_dir_is_created_with_its_parents_and_named(tmp_path, monkeypatch, capsys):
    where = tmp_path / "a" / "b" / "var"
    monkeypatch.setenv("IBWEB_TEST_DIR", str(where))
    assert env.directory("IBWEB_TEST_DIR", tmp_path / "unused") == where and where.is_dir()
    assert capsys.readouterr().err == f"ibweb: created IBWEB_TEST_DIR directory {where}\n"
    assert env.directory("IBWEB_TEST_DIR", tmp_path / "unused") == where  # there: said once
    assert capsys.readouterr().err == ""


def test_a_var_dir_that_cannot_be_a_directory_stops_the_start_naming_it(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("IBWEB_TEST_DIR", str(tmp_path / "file" / "var"))
    with pytest.raises(ImproperlyConfigured, match=r"^IBWEB_TEST_DIR='.*/file/var': cannot create the directory"):
        env.directory("IBWEB_TEST_DIR", tmp_path)


def test_migrate_into_a_var_dir_that_does_not_exist_yet(tmp_path):
    """What ``make run`` does first (``make db``): the SQLite default in the new directory."""
    where = tmp_path / "new" / "var"
    environ = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    environ["IBWEB_VAR_DIR"] = str(where)
    result = subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=environ,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (where / "ibweb.sqlite3").stat().st_size > 0
    assert f"ibweb: created IBWEB_VAR_DIR directory {where}" in result.stderr
