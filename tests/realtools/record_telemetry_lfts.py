"""Record OpenSM's LFT dumps of the telemetry fixtures' subnet (``tests/data/telemetry``).

Run ``python -m tests.realtools.record_telemetry_lfts`` (needs ibsim, opensm, infiniband-diags).
The subnet is ``fat-tree-8.net``, the one ``iblinkinfo.txt`` and ``iblinkinfo_unlinked.txt``
were captured from (the script checks that ``iblinkinfo`` still prints exactly those,
so LIDs and GUIDs agree). OpenSM runs once (``-o``) with ``-D 0x47`` (routing log bit
0x40: ``opensm-lfts.dump`` in ``OSM_CACHE_DIR``), before and after ``Unlink "leaf01"[3]``;
``ibtracert 1 11`` (gpu0001 -> gpu0005) is recorded in both states.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tests.realtools.ibsim import IbSim

DATA = Path(__file__).resolve().parents[1] / "data" / "telemetry"
PAIR = (1, 11)  # gpu0001 -> gpu0005: leaf01 sends it up port 3 (spine01) until that cable is gone


def record(sim: IbSim, osm: Path, linkinfo: str, suffix: str) -> None:
    got = sim.run(["iblinkinfo"]).stdout
    if got != (DATA / linkinfo).read_text():
        raise SystemExit(f"iblinkinfo differs from {linkinfo}: the dump would not belong to the fixtures")
    sim.run_opensm(["-o", "-D", "0x47"], cache_dir=osm)
    shutil.copy(osm / "opensm-lfts.dump", DATA / f"opensm-lfts{suffix}.dump")
    trace = sim.run(["ibtracert", *map(str, PAIR)]).stdout
    (DATA / f"ibtracert_{PAIR[0]}_{PAIR[1]}{suffix}.txt").write_text(trace)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with IbSim(work, (DATA / "fat-tree-8.net").read_text(), sim_host="gpu0001") as sim:
            sim.run_opensm(["-o"], cache_dir=work / "osm")  # LIDs first, as when iblinkinfo.txt was captured
            record(sim, work / "osm", "iblinkinfo.txt", "")
            sim.console('Unlink "leaf01"[3]')
            record(sim, work / "osm", "iblinkinfo_unlinked.txt", "_unlinked")


if __name__ == "__main__":
    main()
