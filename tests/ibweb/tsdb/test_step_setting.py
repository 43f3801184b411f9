"""IBWEB_TSDB_STEP_S: a step that does not fit the tiers stops the settings, naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.server import ROOT


@pytest.mark.parametrize("step, ok", [("60", True), ("300", True), ("45", False), ("7", False)])
def test_the_step_must_divide_an_hour_in_tens_of_seconds(step, ok):
    env = {**os.environ, "IBWEB_TSDB_STEP_S": step, "DJANGO_SETTINGS_MODULE": "ibweb.settings"}
    run = subprocess.run([sys.executable, "-c", "from django.conf import settings; print(settings.IBWEB_TSDB_STEP_S)"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    if ok:
        assert run.returncode == 0 and run.stdout.strip() == step, run.stderr[-500:]
    else:
        assert run.returncode != 0 and f"IBWEB_TSDB_STEP_S={step}" in run.stderr, run.stderr[-500:]
