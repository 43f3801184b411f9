"""ftree with OpenSM's guid files on a SHARP fabric, against real OpenSM 3.3.23 on ibsim, entry for entry.

The fabric (:func:`tests.fabric_engine.routing.test_routing_ftree_superpod.superpod`) is a SuperPOD-shaped 3-level
fat tree: a SHARP Aggregation Node (NodeDesc ``"Mellanox Technologies Aggregation Node"``) on port
``radix + 1`` of every switch, management CAs on spines, the cores of one plane the ASICs of one director
and one loopback on a core. It runs in one ibsim (preset LIDs, so OpenSM keeps ours);
OpenSM sweeps it once per case (``-o -R ftree -D 0x47`` plus the case's guid files) and writes
``opensm-lfts.dump``; ours routes the same fabric with the same files (:mod:`fabric_engine.routing.
guid_files` reads them). In every case our tables equal OpenSM's entry for entry -- ftree's where
OpenSM routes with ftree, minhop's where it falls back -- and where OpenSM refuses, our reason carries
OpenSM's own log message, the offender named, and, for the Aggregation Nodes, what to pass. The
subnet's ``ibnetdiscover`` output reads back whole and routes to OpenSM's tables too.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.routing import NO_PATH, route
from fabric_engine.routing.guid_files import read_guids, write_guids
from tests.fabric_engine.routing.test_routing_ftree_superpod import guid_files, load_dump, net_text, superpod
from tests.realtools.conftest import REAL_TOOLS
from tests.realtools.ibsim import IbSim

pytestmark = pytest.mark.realtools

#: OpenSM's reasons to refuse a fat tree, as its log prints them (``osm_ucast_ftree.c``).
_REFUSAL = re.compile(r"-> (?:\w+: )?((?:ERR AB(?:2B|26|27|0F|11|09|0A|0B|0C)|Fabric rank is|Fabric has no valid|"
                      r"Failed to find leaf).*)$", re.M)


def _cases(f, files: dict[str, Path], work: Path) -> dict[str, dict[str, Path]]:
    """Guid files of every case: name -> {option: file} (OpenSM's long option names, without dashes)."""
    roots, cns = files["roots"], files["cns"]
    cn_guids = read_guids(cns)
    mgmt = int(f.port_guid[f.port_offset[f.node("mgmt02")]])
    leaves = [int(g) for g in f.guid[f.switches[f.tier[f.switches] == 1]]]
    return {
        "both files": {"root_guid_file": roots, "cn_guid_file": cns},
        "no files": {},
        "cn file only": {"cn_guid_file": cns},
        "root file only": {"root_guid_file": roots},
        "a cn on a spine": {"root_guid_file": roots,
                            "cn_guid_file": write_guids(work / "cn-spine.guids", cn_guids + [mgmt])},
        "roots are leaves": {"root_guid_file": write_guids(work / "leaves.guids", leaves), "cn_guid_file": cns},
        "io nodes": {"root_guid_file": roots, "cn_guid_file": write_guids(work / "cn-io.guids", cn_guids[:-3]),
                     "io_guid_file": write_guids(work / "io.guids", cn_guids[-3:])},
    }


#: Case -> what OpenSM does: the start of its refusal message, or None when it routes with ftree.
REFUSES = {"both files": None, "no files": "ERR AB2B", "cn file only": "ERR AB2B", "root file only": "ERR AB26",
           "a cn on a spine": "ERR AB26", "roots are leaves": "Fabric rank is 1", "io nodes": None}


@pytest.fixture(scope="module")
def opensm(tmp_path_factory):
    """``(fabric, {case: (OpenSM's routing, its log, the case's files)})``, OpenSM run once per case; the
    output of ``ibnetdiscover`` on the routed subnet under ``"ibnetdiscover"``."""
    from tests.conftest import require_tool

    require_tool(*REAL_TOOLS)
    f = superpod()
    work = tmp_path_factory.mktemp("ftree-guid-files")
    roots, cns = guid_files(f, work)
    cases = _cases(f, {"roots": roots, "cns": cns}, work)
    runs = [("ftree", name, files) for name, files in cases.items()]
    runs += [("updn", "updn, no file", {}), ("updn", "updn, root file", {"root_guid_file": roots})]
    out = {}
    with IbSim(work / "sim", net_text(f), sim_host=str(f.node_name[f.hosts[0]])) as sim:
        for engine, name, files in runs:
            cache = work / re.sub(r"\W+", "-", name)
            args = [a for opt, path in files.items() for a in (f"--{opt}", str(path))]
            sim.run_opensm(["-o", "-R", engine, "-D", "0x47", *args], cache_dir=cache)
            out[name] = (load_dump(f, cache / "opensm-lfts.dump"), (cache / "opensm.log").read_text(), files)
        out["ibnetdiscover"] = (sim.run(["ibnetdiscover"]).stdout, work / "both-files" / "opensm-lfts.dump",
                                cases["both files"])
    return f, out


def test_ftree_from_ibnetdiscovers_output_equals_opensms(opensm):
    """What the real tools print of the SHARP fabric reads back whole, and routes to OpenSM's tables."""
    from fabric_engine import formats
    from fabric_engine.formats import opensm_lfts

    f, runs = opensm
    text, dump, files = runs["ibnetdiscover"]
    seen = formats.read(text)
    # Aggregation Nodes are no hosts, the director is one chassis, the loopback is kept aside.
    assert (seen.num_switches, seen.num_hosts, len(seen.aggregation_nodes)) == (16, 21, 16)
    assert [len(c["switches"]) for c in seen.meta["chassis"]] == [2]
    assert [lb[1:3] for lb in seen.meta["loopbacks"]] == [[7, 8]] and seen.num_links == f.num_links
    theirs = opensm_lfts.read(dump.read_text(), seen, str(dump), complete=True)
    ours = _ours(seen, files)
    assert "fallback" not in ours.info
    used = (ours.lft != NO_PATH).any(axis=0) | (theirs.lft != NO_PATH).any(axis=0)
    equal, total = int((ours.lft[:, used] == theirs.lft[:, used]).sum()), int(ours.lft[:, used].size)
    print(f"ftree from ibnetdiscover's output, both files: {equal} of {total} entries equal to OpenSM's")
    assert equal == total


def _ours(f, files: dict[str, Path]):
    keys = {"root_guid_file": "roots", "cn_guid_file": "cns", "io_guid_file": "ios"}
    return route(f, "ftree", **{keys[k]: read_guids(p) for k, p in files.items()})


@pytest.mark.parametrize("case", list(REFUSES))
def test_our_tables_equal_opensms_with_the_same_guid_files(opensm, case):
    f, runs = opensm
    theirs, log, files = runs[case]
    ours = _ours(f, files)
    if REFUSES[case] is None:
        assert "ftree tables configured on all switches" in log, log[-3000:]
        assert "fallback" not in ours.info
    else:
        assert "building routing with 'minhop'" in log, "OpenSM no longer refuses this case"
        assert ours.info["fallback"]["engine"] == "minhop"
    used = (ours.lft != NO_PATH).any(axis=0) | (theirs.lft != NO_PATH).any(axis=0)
    equal, total = int((ours.lft[:, used] == theirs.lft[:, used]).sum()), int(ours.lft[:, used].size)
    print(f"ftree, {case}: {equal} of {total} entries equal to OpenSM's")
    assert equal == total, f"{total - equal} of {total} entries differ from OpenSM's"


@pytest.mark.parametrize("case", [c for c, why in REFUSES.items() if why])
def test_refusals_carry_opensms_message_and_name_the_offender(opensm, case):
    f, runs = opensm
    _, log, files = runs[case]
    theirs = _REFUSAL.findall(log)
    assert theirs and theirs[0].startswith(REFUSES[case]), log[-3000:]
    reason = _ours(f, files).info["fallback"]["reason"]
    assert theirs[0].strip() in reason, (theirs[0], reason)
    if case in ("no files", "cn file only", "root file only"):
        assert "SHARP Aggregation Node" in reason and "an-p1-leaf1 on port 9 of p1-leaf1" in reason
        assert ("-a/--root-guid-file" in reason) == (case != "root file only")
        assert ("-u/--cn-guid-file" in reason) == (case != "cn file only")
    if case == "a cn on a spine":
        assert "mgmt02 port 1" in reason and "p2-spine1 port 5" in reason
    print(f"{case}: OpenSM says {theirs[0]!r}; ours: {reason}")


def test_aggregation_nodes_are_reached_like_opensm_reaches_them(opensm):
    f, runs = opensm
    theirs, _, _ = runs["both files"]
    for an in f.aggregation_nodes:  # its own switch delivers it on port radix + 1 = 9
        sw = f.switch_index[f.node(str(f.node_name[an])[3:])]
        assert theirs.lft[sw, f.lid[an]] == 9
    # an Aggregation Node on a core: OpenSM's up/down routes reach it only from that core's cone
    lid = int(f.lid[f.node("an-core2-1")])
    assert int((theirs.lft[:, lid] != NO_PATH).sum()) == 6 + 3 + 1


def test_updn_needs_the_root_file_on_a_sharp_fabric_as_opensm_does(opensm):
    f, runs = opensm
    for case, roots in (("updn, no file", None), ("updn, root file", True)):
        theirs, log, files = runs[case]
        ours = route(f, "updn", roots=read_guids(files["root_guid_file"]) if roots else None)
        if roots:
            assert "updn tables configured on all switches" in log and "fallback" not in ours.info
        else:  # the Aggregation Nodes put adapters at every distance: no root, minhop instead
            assert "building routing with 'minhop'" in log
            assert "SHARP Aggregation Nodes count as adapters" in ours.info["fallback"]["reason"]
        assert np.array_equal(ours.lft, theirs.lft), f"{int((ours.lft != theirs.lft).sum())} entries differ"


def test_the_loopback_cable_is_cabled_in_ibsim_and_kept_aside():
    f = superpod()
    assert f.meta["loopbacks"] == [["core1-1", 7, 8, "4xHDR"]]
    assert '[7]\t"core1-1"[8]' in net_text(f) and '[8]\t"core1-1"[7]' in net_text(f)
