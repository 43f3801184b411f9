"""Reading a drop directory (ibweb.telemetry.collector.read_drop_dir): what is wrong with it is said as it is.

Walking docs/telemetry.md (issue 35), a drop directory that did not exist was reported as its
``iblinkinfo.txt`` missing; the operator is told the directory is not there, is a file, or cannot be read.
"""

from __future__ import annotations

import os

import pytest
from django.core.cache import cache

from ibweb.telemetry import collector
from ibweb.telemetry.collector import CollectorError, read_drop_dir


def test_a_drop_directory_that_is_not_there_or_not_a_directory_is_named_as_such(tmp_path):
    with pytest.raises(CollectorError, match=f"^{tmp_path / 'nowhere'}: no such directory$"):
        read_drop_dir(tmp_path / "nowhere")
    (tmp_path / "file").write_text("")
    with pytest.raises(CollectorError, match=f"^{tmp_path / 'file'}: not a directory$"):
        read_drop_dir(tmp_path / "file")


def test_an_unreadable_drop_directory_is_named_as_such(tmp_path, monkeypatch):
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "iblinkinfo.txt").write_text("")
    (drop / "perfquery-1.txt").write_text("")
    real = os.access
    monkeypatch.setattr(collector.os, "access", lambda p, mode: False if str(p) == str(drop) else real(p, mode))
    with pytest.raises(CollectorError, match="not readable by ibweb's user"):
        read_drop_dir(drop)


def test_a_drop_directory_without_its_files_names_the_missing_one(tmp_path):
    with pytest.raises(CollectorError, match="iblinkinfo.txt: missing"):
        read_drop_dir(tmp_path)
    (tmp_path / "iblinkinfo.txt").write_text("")
    with pytest.raises(CollectorError, match="no perfquery\\*.txt files"):
        read_drop_dir(tmp_path)
    (tmp_path / "perfquery-1.txt").write_text("x")
    linkinfo, outputs = read_drop_dir(tmp_path)
    assert linkinfo.source.endswith("iblinkinfo.txt") and [o.text for o in outputs] == ["x"]


def test_the_trial_sweep_says_the_drop_directory_is_not_there(tmp_path):
    from ibweb.telemetry.models import CollectorConfig
    from ibweb.telemetry.trial import trial_sweep

    report = trial_sweep(CollectorConfig(source="directory", drop_dir=str(tmp_path / "nowhere")))
    assert not report["ok"]
    assert report["errors"][0]["stage"] == "discovery"
    assert report["errors"][0]["message"] == f"{tmp_path / 'nowhere'}: no such directory"


@pytest.mark.django_db(transaction=True)
def test_a_sweep_of_counter_files_not_rewritten_since_the_last_says_so(tmp_path):
    """Run no faster than the sweep, the drop script left the same files for two sweeps: every link went stale
    with no reason given (walking docs/telemetry.md, issue 35). The sweep now says why."""
    import time

    from ibweb.telemetry.choices import CollectorSource, SweepStatus
    from ibweb.telemetry.sweeps import run_sweep
    from tests.ibweb.telemetry.test_port_counters_api import _drop
    from tests.ibweb.telemetry.test_telemetry_app import make_config

    cache.clear()  # the sweeps of an earlier test's fabric of the same id
    config = make_config("same", source=CollectorSource.DIRECTORY, drop_dir=str(tmp_path / "d"), interval_s=10.0)
    now = time.time()
    _drop(tmp_path / "d", now - 30.0, 0)
    assert run_sweep(config).status == SweepStatus.OK  # the first sweep: nothing to compare with
    _drop(tmp_path / "d", now - 20.0, 5)
    assert run_sweep(config).failures == []
    sweep = run_sweep(config)  # the same files again
    assert sweep.status == SweepStatus.PARTIAL
    [failure] = sweep.failures
    assert failure["shard"] == "directory"
    assert failure["error"].startswith(f"{tmp_path / 'd'}: no perfquery*.txt written since the last sweep (newest ")
    assert failure["error"].endswith("the drop script must write more often than every 10 s")
    _drop(tmp_path / "d", now - 5.0, 9)
    assert run_sweep(config).failures == []
