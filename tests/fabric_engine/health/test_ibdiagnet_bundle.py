"""Link health of an ibdiagnet output folder or archive: its db_csv's health sections and its ibdiagnet2.cables."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.cli import main
from fabric_engine.errors import FormatError
from fabric_engine.health import ibdiagnet_bundle, read_file

DATA = Path(__file__).parents[2] / "data"
HEALTH = DATA / "health"
CAPTURE = DATA / "captures" / "ibdiagnet"


def _folder(tmp_path: Path, cables: bool = True) -> Path:
    run = tmp_path / "ibdiagnet2"
    run.mkdir()
    shutil.copy(HEALTH / "ibdiagnet2_phy.db_csv", run / "ibdiagnet2.db_csv")
    if cables:
        shutil.copy(HEALTH / "ibdiagnet2.cables", run / "ibdiagnet2.cables")
    (run / "ibdiagnet2.log").write_text("-I- not read\n")
    return run


def test_folder_merges_the_db_csv_and_the_cables_file(tmp_path):
    warnings: list = []
    rec, files = ibdiagnet_bundle.read_folder(_folder(tmp_path), warnings)
    assert files == {"db_csv": "ibdiagnet2.db_csv", "cables": "ibdiagnet2.cables"}
    keys = set(rec.keys().tolist())
    assert "0xb83fd20300a10003/2" in keys and "0xb83fd20300a1b2c0/1" in keys  # db_csv's and the cables file's
    leaf2 = int(np.flatnonzero(rec.keys() == "0xb83fd20300a10003/2")[0])
    assert rec["raw_ber"][leaf2] == pytest.approx(5e-6)
    assert all(w["source"].endswith("ibdiagnet2.cables") for w in warnings)


def test_archives_zip_and_tar_read_alike_and_errors_name_the_member(tmp_path):
    run = _folder(tmp_path)
    tgz, zipped = io.BytesIO(), io.BytesIO()
    with tarfile.open(fileobj=tgz, mode="w:gz") as tf:
        tf.add(run, arcname="ibdiagnet2")
    with zipfile.ZipFile(zipped, "w") as zf:
        for p in run.iterdir():
            zf.write(p, f"out/{p.name}")
    a, _ = ibdiagnet_bundle.read_archive(tgz.getvalue(), "run.tgz", [])
    b, files = ibdiagnet_bundle.read_archive(zipped.getvalue(), "run.zip", [])
    assert files["cables"] == "out/ibdiagnet2.cables" and sorted(a.keys().tolist()) == sorted(b.keys().tolist())
    (run / "ibdiagnet2.cables").write_text("Vendor: outside a block\n")
    with pytest.raises(FormatError, match=r"ibdiagnet2:ibdiagnet2\.cables:1: "):
        ibdiagnet_bundle.read_folder(run, [])


def test_a_run_without_health_files_has_none(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(CAPTURE / "ibdiagnet2.lst", run / "ibdiagnet2.lst")
    assert ibdiagnet_bundle.read_folder(run, []) == (None, {})
    with pytest.raises(FormatError, match=r"no link health in this ibdiagnet run"):
        read_file(run, [])


def test_cli_reads_a_folder_and_an_archive(tmp_path, capsys):
    run = _folder(tmp_path, cables=False)
    assert main(["health", str(run), str(CAPTURE / "ibdiagnet2_capture.tar.gz"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(f["kind"], f["ports"]) for f in out["files"]] == [("ibdiagnet folder", 6), ("ibdiagnet archive", 20)]
    assert out["ber"]["error"] == 1 and out["links_down"] == 1
