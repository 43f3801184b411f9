"""The drop-directory collector of ``docs/telemetry.md``, run as printed against ibsim (issue 35).

The guide prints ``ib-drop.sh`` (between its markers) for an external collector that writes one sweep of
``iblinkinfo`` and ``perfquery`` outputs into a drop directory. Here it runs, taken from the guide as it is,
under umad2sim against a generated 4x HDR fat tree (the lab of the guide) with OpenSM's LFT dump, and the
new-fabric page's test sweep reads the directory: the counts the guide states. A second run replaces the
files (newer reads, rates between them); a switch whose ``perfquery`` fails keeps its previous files while
the others are moved in, and a failed discovery changes nothing; no run leaves its work directory behind.
"""

from __future__ import annotations

import re
import stat
import time
from pathlib import Path

import numpy as np
import pytest
from rest_framework.test import APIClient

from fabric_engine.telemetry import COLUMN, MIN_INTERVAL_S, STALE, counter_deltas, port_key
from fabric_engine.topology.generate import fat_tree
from ibweb.telemetry.collector import read_drop_dir
from ibweb.telemetry.transport import parse_outputs

pytestmark = [pytest.mark.realtools, pytest.mark.django_db]

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "telemetry.md"
BEGIN, END = "<!-- ib-drop.sh:", "<!-- end of ib-drop.sh -->"
SWITCHES, HOSTS, LINKS = 8, 16, 32
XD = COLUMN["PortXmitData"]


def guide_script() -> str:
    """The ``sh`` block between the guide's ``ib-drop.sh`` markers, exactly as printed."""
    text = GUIDE.read_text()
    block = text[text.index(BEGIN):text.index(END)]
    (script,) = re.findall(r"^```sh\n(.*?)^```$", block, flags=re.M | re.S)
    return script


def _lab(ibsim, tmp_path: Path):
    sim = ibsim(fat_tree(hosts=HOSTS, radix=8, speed="HDR"), sim_host="gpu0001",
                tools=("perfquery", "iblinkinfo", "ibswitches"))
    osm = tmp_path / "osm"
    sim.run_opensm(["-o", "-R", "ftree", "-D", "0x47"], cache_dir=osm)
    script = tmp_path / "ib-drop.sh"
    script.write_text(guide_script())
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    drop = tmp_path / "drop"
    drop.mkdir()
    return sim, script, drop, osm / "opensm-lfts.dump"


def _files(drop: Path) -> dict[str, tuple[int, str]]:
    """Every entry of the drop directory (hidden ones included): its modification time and text."""
    return {p.name: (p.stat().st_mtime_ns, p.read_text() if p.is_file() else "") for p in drop.iterdir()}


def _samples(drop: Path):
    _, outputs = read_drop_dir(drop)
    return parse_outputs((o.text, o.t, o.source) for o in outputs)


def test_the_guides_drop_script_fills_a_directory_the_test_sweep_reads(ibsim, tmp_path):
    from django.contrib.auth.models import User

    sim, script, drop, dump = _lab(ibsim, tmp_path)
    first = sim.run([str(script), str(drop)], check=False)
    assert first.returncode == 0, first.stderr
    names = sorted(_files(drop))
    assert names == sorted(["iblinkinfo.txt", *(f"perfquery-{lid}.txt" for lid in range(1, 9)),
                            *(f"perfquery-x-{lid}.txt" for lid in range(1, 9))])  # no work directory left

    # the new-fabric page's test sweep of the directory, with OpenSM's dump: what the guide says it shows
    api = APIClient()
    api.force_authenticate(User.objects.create_superuser("root", password="pw-root"))
    r = api.post("/api/telemetry/trial-sweep/", {"source": "directory", "drop_dir": str(drop),
                                                 "lfts_path": str(dump), "routing_engine": "ftree"}, format="json")
    assert r.status_code == 200, r.content
    report = r.json()
    assert report["ok"], report["errors"]
    assert report["warnings"] == []
    d, c, lft = report["discovery"], report["counters"], report["lft"]
    assert (d["switches"], d["cas"], d["links"], d["ports_not_up"]) == (SWITCHES, HOSTS, LINKS, 16)
    assert (c["files"], c["switches_read"]) == (2 * SWITCHES, SWITCHES)
    assert c["ports_read"] == c["ports_expected"] == 48 and c["ports_missing"] == []
    assert lft["read"] and (lft["switches"], lft["entries"], lft["dead_entries"]) == (SWITCHES, 180, 0)

    # read twice without a new run: the same reads, no rate (the guide: run the script more often than sweeps)
    before = _samples(drop)
    same = counter_deltas(before, _samples(drop))
    assert (same.flags[:, XD] & STALE).all()

    # a second run after traffic on leaf03 port 5: newer files, and a rate between the two runs
    words = 10**9
    sim.console(f'PerformanceSet "leaf03"[5] PortCountersExtended.PortXmitData={words}')
    time.sleep(MIN_INTERVAL_S)
    second = sim.run([str(script), str(drop)], check=False)
    assert second.returncode == 0, second.stderr
    assert sorted(_files(drop)) == names
    deltas = counter_deltas(before, _samples(drop))
    row = deltas.lookup(np.array([port_key(3, 5)]))[0]  # leaf03 (LID 3) port 5
    assert row >= 0 and not deltas.flags[row, XD] & STALE
    assert deltas.rate[row, XD] > 0


def test_a_switch_that_fails_keeps_its_files_and_a_failed_discovery_changes_nothing(ibsim, tmp_path):
    sim, script, drop, _ = _lab(ibsim, tmp_path)
    assert sim.run([str(script), str(drop)], check=False).returncode == 0
    kept = _files(drop)
    time.sleep(0.05)

    # perfquery of LID 3 fails (a switch that does not answer): the others are replaced, LID 3's files stay
    fake = tmp_path / "bin"
    fake.mkdir()
    real = sim.run(["sh", "-c", "command -v perfquery"]).stdout.strip()
    (fake / "perfquery").write_text(f'#!/bin/sh\nfor a; do [ "$a" = 3 ] && exit 2; done\nexec {real} "$@"\n')
    (fake / "perfquery").chmod(0o755)
    path = f"{fake}:{sim.env['PATH']}"
    run = sim.run([str(script), str(drop)], env={"PATH": path}, check=False)
    assert run.returncode == 1
    assert "perfquery of LID 3 failed" in run.stderr
    now = _files(drop)
    assert sorted(now) == sorted(kept)  # nothing partial of LID 3, no work directory
    assert now["perfquery-3.txt"] == kept["perfquery-3.txt"] and now["perfquery-x-3.txt"] == kept["perfquery-x-3.txt"]
    assert all(now[n][0] > kept[n][0] for n in kept if not n.endswith("-3.txt"))

    # iblinkinfo fails: the script stops, and the directory is as it was
    (fake / "iblinkinfo").write_text("#!/bin/sh\necho 'ibwarn: cannot open umad port' >&2\nexit 1\n")
    (fake / "iblinkinfo").chmod(0o755)
    run = sim.run([str(script), str(drop)], env={"PATH": path}, check=False)
    assert run.returncode != 0
    assert _files(drop) == now
