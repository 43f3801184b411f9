"""Reading a drop directory (ibweb.telemetry.collector.read_drop_dir): what is wrong with it is said as it is.

Walking docs/telemetry.md (issue 35), a drop directory that did not exist was reported as its
``iblinkinfo.txt`` missing; the operator is told the directory is not there, is a file, or cannot be read.
"""

from __future__ import annotations

import os

import pytest

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
