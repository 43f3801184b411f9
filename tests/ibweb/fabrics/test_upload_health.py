"""An uploaded ibdiagnet archive keeps its link health: the db_csv's PHY/BER, cable and counter sections and
ibdiagnet2.cables become the new fabric's health readings, as a push of them would (issue 37)."""

from __future__ import annotations

import asyncio
import io
import tarfile
from pathlib import Path

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from ibweb.fabrics.models import Fabric
from ibweb.live.engine.emulated import EmulatedSource
from ibweb.runtime import health_readings

DATA = Path(__file__).resolve().parents[2] / "data"
CAPTURE = DATA / "captures" / "ibdiagnet"
LEAF, GPU = 0xB83FD20300A10003, 0x946DAE0300C30010
pytestmark = pytest.mark.django_db

# ibdiagnet2.cables of the capture's gpu001 port 1 and of a port the capture has no node for
CABLES = """-------------------------------------------------------
Port=1 Lid=0x0006 GUID=0x946dae0300c30010 Port Name=gpu001/P1
-------------------------------------------------------
Vendor: Mellanox
PN: MMA4Z00-NS
SN: MT2312FT09876
Temperature: 47C
RX1 Power: -1.4 dBm

-------------------------------------------------------
Port=1 Lid=0x0099 GUID=0x0000000000abcdef Port Name=elsewhere/P1
-------------------------------------------------------
Vendor: Mellanox
"""


def _section(text: str, name: str) -> str:
    return text[text.index(f"START_{name}\n"):text.index(f"END_{name}\n") + len(f"END_{name}\n")]


def _archive(phy: str | None = None, cables: str = CABLES) -> bytes:
    """The capture's folder as a .tar.gz, its db_csv with the PHY_DB16 and CABLE_INFO sections of the health
    fixture (same GUIDs), and an ibdiagnet2.cables."""
    fixture = (DATA / "health" / "ibdiagnet2_phy.db_csv").read_text()
    db_csv = (CAPTURE / "ibdiagnet2.db_csv").read_text() + "\n" + (
        phy if phy is not None else _section(fixture, "PHY_DB16")) + "\n" + _section(fixture, "CABLE_INFO")
    files = {"ibdiagnet2/ibdiagnet2.db_csv": db_csv, "ibdiagnet2/ibdiagnet2.lst":
             (CAPTURE / "ibdiagnet2.lst").read_text(), "ibdiagnet2/ibdiagnet2.cables": cables}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for name, text in files.items():
            raw = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))
    return out.getvalue()


@pytest.fixture(autouse=True)
def forget_readings():
    yield
    for pk in Fabric.objects.values_list("pk", flat=True):  # the cache outlives the test's database rows
        health_readings.forget(pk)


def _row(rec, guid: int, port: int) -> int:
    hits = np.flatnonzero((rec.guid == guid) & (rec.port == port))
    assert hits.size == 1, (hex(guid), port, rec.keys())
    return int(hits[0])


def test_api_upload_keeps_the_archives_link_health(operator):
    response = operator.post("/api/fabrics/fabrics/", {"name": "Diag", "slug": "diag", "topology_file":
                                                       SimpleUploadedFile("run.tar.gz", _archive())})
    assert response.status_code == 201, response.content
    health = response.json()["spec"]["topology"]["health"]
    assert health["files"] == {"db_csv": "ibdiagnet2/ibdiagnet2.db_csv", "cables": "ibdiagnet2/ibdiagnet2.cables"}
    assert health["unknown_ports"] == 1  # the cables file's port of no node of the capture
    rec = health_readings.read(Fabric.objects.get(slug="diag").pk)
    assert rec is not None and len(rec) == health["ports"]
    p2 = _row(rec, LEAF, 2)
    assert rec["raw_ber"][p2] == pytest.approx(5e-6) and rec["link_down"][p2] == 0  # PM_INFO of the capture
    gpu = _row(rec, GPU, 1)
    assert rec["sn"][gpu] == "MT2312FT09876"  # CABLE_INFO (db_csv first) ...
    assert rec["temp"][gpu] == 77 and rec["rx_power"][gpu, 0] == pytest.approx(-13.0103, abs=1e-4)
    assert rec.name[gpu] == "gpu001"  # named as the fabric names its node
    assert not np.isnan(rec["t"]).any()


def test_ui_upload_keeps_it_too_and_the_emulated_source_gives_it(operator):
    response = operator.post("/fabrics/add/", {"name": "Lab", "slug": "lab", "routing_engine": "minhop", "tick_s": 1,
                                               "source": "upload", "topology_file":
                                               SimpleUploadedFile("run.tgz", _archive())})
    assert response.status_code == 302, response.content
    row = Fabric.objects.get(slug="lab")
    assert health_readings.read(row.pk) is not None
    source = EmulatedSource(row)

    async def run():
        async def progress(fraction, message):
            return None

        await source.start(progress)
        await source.step(1, 1000.0)
        return source.health()

    rec = asyncio.run(run())
    assert rec is not None and rec["raw_ber"][_row(rec, LEAF, 2)] == pytest.approx(5e-6)
    assert (rec["t"] == rec["t"][0]).all() and np.isfinite(rec["t"][0])  # timed on the emulation's clock


def test_a_health_file_a_reader_refuses_is_said_and_the_fabric_stands(operator):
    bad = "START_PHY_DB16\nNodeGuid,PortNum,field12,field13\n0xb83fd20300a10003,1,2,x\nEND_PHY_DB16\n"
    response = operator.post("/api/fabrics/fabrics/", {"name": "Bad", "slug": "bad", "topology_file":
                                                       SimpleUploadedFile("run.tar.gz", _archive(phy=bad))})
    assert response.status_code == 201, response.content
    topology = response.json()["spec"]["topology"]
    assert topology["health"] == {"ports": 0, "refused": True}
    refused = [w["reason"] for w in topology["warnings"] if w["reason"].startswith("link health not kept: ")]
    assert len(refused) == 1 and refused[0].removeprefix("link health not kept: ").startswith(
        "run.tar.gz:ibdiagnet2/ibdiagnet2.db_csv:") and "'x' is not a number" in refused[0]
    assert health_readings.read(Fabric.objects.get(slug="bad").pk) is None


def test_an_archive_without_health_files_keeps_its_counters_link_downs(operator):
    archive = CAPTURE / "ibdiagnet2_capture.tar.gz"  # db_csv with PM_INFO only, no ibdiagnet2.cables
    response = operator.post("/api/fabrics/fabrics/", {"name": "Old", "slug": "old", "topology_file":
                                                       SimpleUploadedFile(archive.name, archive.read_bytes())})
    assert response.status_code == 201, response.content
    health = response.json()["spec"]["topology"]["health"]
    assert health["files"] == {"db_csv": "ibdiagnet2/ibdiagnet2.db_csv"} and health["ports"] == 20
    rec = health_readings.read(Fabric.objects.get(slug="old").pk)
    assert np.isnan(rec["raw_ber"]).all() and (rec["link_down"] >= 0).all()
