"""LFTs judged against a discovery by their content (issue 35): dead entries, unrouted host LIDs, missing tables.

The fixtures are real: ibsim's ``fat-tree-8.net`` under OpenSM ``-D 0x47``, before and after
``Unlink "leaf01"[3]`` (``tests/realtools/record_telemetry_lfts.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from fabric_engine.formats import opensm_lfts
from fabric_engine.routing import NO_PATH, Routing, route
from fabric_engine.telemetry import fabric_from_linkinfo, parse_iblinkinfo
from fabric_engine.telemetry.lftcheck import check_lfts
from fabric_engine.topology.generate import fat_tree

DATA = Path(__file__).parents[2] / "data" / "telemetry"


def discovered(name: str):
    return fabric_from_linkinfo(parse_iblinkinfo((DATA / name).read_text()), "lab")


def dump(name: str, fabric) -> Routing:
    return opensm_lfts.read((DATA / name).read_text(), fabric)


def test_a_dump_agrees_with_the_cabling_it_was_made_for_and_one_that_avoids_a_cable():
    full, cut = discovered("iblinkinfo.txt"), discovered("iblinkinfo_unlinked.txt")
    pairs = ((full, "opensm-lfts.dump"), (cut, "opensm-lfts_unlinked.dump"), (full, "opensm-lfts_unlinked.dump"))
    for f, name in pairs:
        check = check_lfts(dump(name, f))
        assert check.ok and check.describe() == "" and check.as_json()["dead_entries"] == 0, (name, check)
    assert check_lfts(route(fat_tree(hosts=32, radix=8), "minhop")).ok


def test_the_dump_of_the_old_cabling_names_each_port_and_an_example():
    check = check_lfts(dump("opensm-lfts.dump", discovered("iblinkinfo_unlinked.txt")))
    # counted in the text: entries leaving leaf01 by port 3 and spine01 by port 1 (the two ends of the cut cable)
    tables = re.split(r"^(?=Unicast lids)", (DATA / "opensm-lfts.dump").read_text(), flags=re.M)
    uses = {name: len(re.findall(rf"^0x[0-9a-f]+ {port:03d} ", t, flags=re.M))
            for t in tables for name, port in (("leaf01", 3), ("spine01", 1)) if f"('{name}')" in t}
    assert not check.ok and check.dead == sum(uses.values()) == 11
    assert check.dead_ports == [("leaf01", 3, uses["leaf01"]), ("spine01", 1, uses["spine01"])]
    assert check.unrouted == 0 and check.switches_missing == []
    assert check.describe() == ("11 entries lead out of ports without a cable (leaf01 port 3: 7, spine01 port 1: 4); "
                                "e.g. spine01 routes LID 1 (gpu0001) out of port 1, which has no cable")
    assert check.as_json()["dead_entries"] == 11


def test_unrouted_host_lids_and_missing_tables_disagree_but_unrouted_switch_lids_do_not():
    f = discovered("iblinkinfo.txt")
    text = (DATA / "opensm-lfts.dump").read_text()
    # leaf01 forgets gpu0001 (cabled to it); spine02 forgets leaf02's switch LID (engines may leave those out)
    gpu = re.search(r"^(0x[0-9a-f]+) 001 # Channel Adapter .*'gpu0001'$", text, flags=re.M)
    forgot = text.replace(gpu.group(0) + "\n", "", 1)
    routing = opensm_lfts.read(forgot, f)
    spine02, leaf02 = int(f.switch_index[f.node("spine02")]), int(f.lid[f.node("leaf02")])
    routing.lft[spine02, leaf02] = NO_PATH
    check = check_lfts(routing)
    assert (check.dead, check.unrouted, check.unrouted_switches) == (0, 1, [("leaf01", 1)])
    lid = int(gpu.group(1), 16)
    assert f"leaf01 has no entry for LID {lid} (gpu0001), cabled to it" in check.describe()
    # a dump cut at a table's end (OpenSM writes in place): the tables it lacks are named
    half = "".join(re.split(r"(?<=lids dumped\n)", text)[:3])
    check = check_lfts(opensm_lfts.read(half, f))
    assert not check.ok and len(check.switches_missing) == f.num_switches - 3 and check.unrouted == 0
    assert f"no table for {f.num_switches - 3} switches" in check.describe()


def test_blocks_give_the_same_counts_as_one_pass():
    f = discovered("iblinkinfo_unlinked.txt")
    routing = dump("opensm-lfts.dump", f)
    assert check_lfts(routing, block=1) == check_lfts(routing, block=64)
    big = fat_tree(hosts=128, radix=16, levels=2)
    r = route(big, "minhop")
    lft = r.lft.copy()
    lft[:, big.port_lid[big.port_offset[big.hosts[:10]]]] = NO_PATH  # ten hosts unknown to every switch
    bad = Routing(big, lft, "edited")
    check = check_lfts(bad, block=3)
    assert check == check_lfts(bad, block=1000) and (check.unrouted, check.dead) == (10, 0)
    assert check_lfts(routing, block=1).dead == 11
