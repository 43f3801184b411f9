"""ftree on a SHARP fabric: an Aggregation Node CA on every switch, routed with OpenSM's guid files.

:func:`superpod` builds a SuperPOD-shaped 3-level fat tree: pods of leaves and spines, cores in
planes (spine ``j`` of every pod goes to the cores of plane ``j``), a SHARP Aggregation Node (a CA
with NodeDesc ``"Mellanox Technologies Aggregation Node"``) on port ``radix + 1`` of every switch,
management CAs on the first spine of every pod and, when the Fabric model takes it, one loopback
cable on a core. :func:`guid_files` writes the root (cores) and compute-node (GPU ports) GUID files
OpenSM's ``--root_guid_file``/``--cn_guid_file`` take. The real-tools test and the SuperPOD bench
share both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import RoutingError, TopologyError
from fabric_engine.routing import NO_PATH, route
from fabric_engine.topology import KIND_HOST, KIND_SWITCH, ROLES, Fabric

_SW_GUID, _CA_GUID, _AN_GUID = 0x98039B0300670000, 0xB83FD20300A00000, 0x0002C90300B00000
_CHASSIS_GUID = 0x0002C90300C0FFEE


def superpod(pods: int = 3, leaves_per_pod: int = 2, spines_per_pod: int = 2, hosts_per_leaf: int = 3,
             cores_per_plane: int = 2, mgmt_per_pod: int = 1, radix: int = 8, loopback: bool = True,
             director: bool = True, speed: str = "HDR", parallel: int = 1, short_leaves: int = 0,
             short_spines: int = 0, leaf_pairs: int = 0, spine_pairs: int = 0, unplugged: int = 0) -> Fabric:
    """A SuperPOD-shaped 3-level fat tree with an Aggregation Node on port ``radix + 1`` of every switch.

    Leaf ports: hosts first, then one cable to each spine of its pod. Spine ports: the pod's leaves,
    the cores of its plane, then (first spine of a pod) ``mgmt_per_pod`` management CAs. Core ports:
    one cable to the spine of its plane in every pod, the loopback cable on its last two ports (first core;
    kept in ``meta["loopbacks"]`` as the readers keep one, and written out by the ibsim writer). With
    ``director``, the cores of the first plane are the ASICs of one director: they share a system image
    GUID (``meta["chassis"]``, written as ``sysimgguid=`` for ibsim).

    What a real SuperPOD has on top (all off by default): ``parallel`` cables between a leaf and each
    spine of its pod (leaf port ``H + 1 + c * U + j`` is its ``c``-th cable to spine ``j``, spine port
    ``c * L + i + 1`` its ``c``-th to leaf ``i``); ``short_leaves`` leaves without their last cable to
    the last spine (the last leaf of the first pods, then the one before it...), ``short_spines``
    spines without their cable to the last core of their plane (likewise); ``leaf_pairs`` / ``spine_pairs`` cables
    between leaves (spines) ``2k`` and ``2k + 1`` of every pod (same-rank cables, on the port after the
    switch's last used one); the last host of each of the first ``unplugged`` leaves left uncabled (its
    leaf is short of a compute node: OpenSM routes a dummy in its place).
    Raises ``TopologyError`` when a switch needs more than ``radix`` ports.
    """
    P, L, U, H, K = pods, leaves_per_pod, spines_per_pod, hosts_per_leaf, cores_per_plane
    leaf_used, spine_used = H + U * parallel, L * parallel + K + mgmt_per_pod
    if (radix < leaf_used + (leaf_pairs > 0) or spine_used + (spine_pairs > 0) > radix
            or P + (2 if loopback else 0) > radix or 2 * leaf_pairs > L or 2 * spine_pairs > U
            or short_leaves > L * P or short_spines > U * P or parallel < 1 or unplugged > L * P):
        raise TopologyError(f"radix {radix} too small for this SuperPOD shape")
    leaves = [f"p{p + 1}-leaf{i + 1}" for p in range(P) for i in range(L)]
    spines = [f"p{p + 1}-spine{j + 1}" for p in range(P) for j in range(U)]
    cores = [f"core{j + 1}-{k + 1}" for j in range(U) for k in range(K)]
    switches = leaves + spines + cores
    hosts = [f"dgx{i + 1:04d}" for i in range(P * L * H)]
    mgmt = [f"mgmt{i + 1:02d}" for i in range(P * mgmt_per_pod)]
    ans = [f"an-{s}" for s in switches]
    names = switches + hosts + mgmt + ans
    S, n_h, n_m = len(switches), len(hosts), len(mgmt)
    sw = {nm: i for i, nm in enumerate(switches)}
    cables: list[tuple[int, int, int, int]] = []
    for p in range(P):
        for i in range(L):
            leaf = sw[leaves[p * L + i]]
            for h in range(H):
                if h < H - 1 or p * L + i >= unplugged:
                    cables.append((leaf, h + 1, S + (p * L + i) * H + h, 1))
            for c in range(parallel):
                for j in range(U):
                    if (L - 1 - i) * P + p < short_leaves and (c, j) == (parallel - 1, U - 1):
                        continue
                    cables.append((leaf, H + 1 + c * U + j, sw[spines[p * U + j]], c * L + i + 1))
        for j in range(U):
            spine = sw[spines[p * U + j]]
            for k in range(K):
                if (U - 1 - j) * P + p < short_spines and k == K - 1:
                    continue
                cables.append((spine, L * parallel + 1 + k, sw[cores[j * K + k]], p + 1))
        for m in range(mgmt_per_pod):
            cables.append((sw[spines[p * U]], spine_used - mgmt_per_pod + 1 + m, S + n_h + p * mgmt_per_pod + m, 1))
        for k in range(leaf_pairs):
            a_, b_ = sw[leaves[p * L + 2 * k]], sw[leaves[p * L + 2 * k + 1]]
            cables.append((a_, leaf_used + 1, b_, leaf_used + 1))
        for k in range(spine_pairs):
            a_, b_ = sw[spines[p * U + 2 * k]], sw[spines[p * U + 2 * k + 1]]
            cables.append((a_, spine_used + 1, b_, spine_used + 1))
    for s in range(S):
        cables.append((s, radix + 1, S + n_h + n_m + s, 1))
    kind = [KIND_SWITCH] * S + [KIND_HOST] * (n_h + n_m + S)
    role = ([ROLES.index("switch")] * S + [ROLES.index("gpu")] * n_h + [ROLES.index("mgmt")] * n_m
            + [ROLES.index("aggregation")] * S)
    tier = [1] * len(leaves) + [2] * len(spines) + [3] * len(cores) + [0] * (n_h + n_m + S)
    # GUIDs whose byte-swapped order (OpenSM's map order) differs from the index order
    guid = ([_SW_GUID + (((i * 7) % S) << 8) + i for i in range(S)]
            + [_CA_GUID + (((i * 5) % (n_h + n_m)) << 12) + (i << 4) for i in range(n_h + n_m)]
            + [_AN_GUID + (i << 4) for i in range(S)])
    lid = list(range(1, S + 1)) + list(range(S + 1, S + 1 + n_h + n_m + S))
    a, ap, b, bp = (list(c) for c in zip(*cables, strict=True))

    meta: dict = {"chassis": [{"guid": f"0x{_CHASSIS_GUID:016x}", "switches": cores[:K]}]} if director else {}
    if loopback:
        meta["loopbacks"] = [[cores[0], radix - 1, radix, f"4x{speed}"]]
    return Fabric.build(f"superpod-{P}x{L}x{H}", kind=kind, node_name=names, guid=guid, lid=lid,
                        nports=[radix + 1] * S + [1] * (n_h + n_m + S), role=role, tier=tier,
                        a_node=a, a_port=ap, b_node=b, b_port=bp, speed=_speed(speed), meta=meta)


def _speed(name: str) -> int:
    from fabric_engine.topology.speeds import speed_code

    return speed_code(name)


def guid_files(fabric: Fabric, where: Path) -> tuple[Path, Path]:
    """Write ``roots.guids`` (core switch node GUIDs) and ``cns.guids`` (GPU host port GUIDs) under ``where``."""
    f = fabric
    where.mkdir(parents=True, exist_ok=True)
    roots, cns = where / "roots.guids", where / "cns.guids"
    cores = f.switches[f.tier[f.switches] == 3]
    roots.write_text("# core switches (rank 0)\n" + "".join(f"0x{int(g):016x}\n" for g in f.guid[cores]))
    gpu = f.kind[f.port_node] == KIND_HOST
    gpu &= f.role[f.port_node] == ROLES.index("gpu")
    cns.write_text("# compute node port GUIDs\n" + "".join(f"0x{int(g):016x}\n" for g in f.port_guid[gpu]))
    return roots, cns


def net_text(fabric: Fabric) -> str:
    """The ibsim net file of ``fabric``: Aggregation Nodes described as NVIDIA's are, the loopback cabled."""
    from fabric_engine import formats

    return formats.write(fabric, "ibsim")


def load_dump(fabric: Fabric, path: Path):
    """OpenSM's ``opensm-lfts.dump`` as a Routing of ``fabric``, every switch's table required."""
    from fabric_engine.formats import opensm_lfts

    return opensm_lfts.read(path.read_text(), fabric, str(path), complete=True)


def test_superpod_shape():
    f = superpod()
    assert f.num_switches == 16 and len(f.aggregation_nodes) == 16
    assert f.num_hosts == 18 + 3  # GPU hosts and mgmt nodes; Aggregation Nodes are no hosts
    ports = f.dl_src_port[np.isin(f.dl_src, f.aggregation_nodes)]
    assert set(ports.tolist()) == {1}


def _files(f: Fabric, tmp_path: Path) -> tuple[list[int], list[int]]:
    from fabric_engine.routing.guid_files import read_guids

    roots, cns = guid_files(f, tmp_path)
    return read_guids(roots), read_guids(cns)


def test_without_guid_files_ftree_refuses_like_opensm_and_names_the_aggregation_nodes(tmp_path):
    f = superpod()
    r = route(f, "ftree")
    reason = r.info["fallback"]["reason"]
    assert r.info["fallback"]["engine"] == "minhop"
    assert "ERR AB2B: Found more than one root on fabric with maximum rank 0" in reason
    assert "16 SHARP Aggregation Node(s) (e.g. an-p1-leaf1 on port 9 of p1-leaf1)" in reason
    assert "-u/--cn-guid-file" in reason and "-a/--root-guid-file" in reason and "--write-guid-files" in reason
    assert np.array_equal(r.lft, route(f, "minhop").lft)


def test_a_cn_file_alone_does_not_help_opensm_ranks_from_every_ca(tmp_path):
    f = superpod()
    _, cns = _files(f, tmp_path)
    reason = route(f, "ftree", cns=cns).info["fallback"]["reason"]
    assert "ERR AB2B" in reason and "-a/--root-guid-file" in reason and "-u/--cn-guid-file" not in reason


def test_a_root_file_alone_makes_aggregation_nodes_compute_nodes_off_the_leaves(tmp_path):
    f = superpod()
    roots, _ = _files(f, tmp_path)
    reason = route(f, "ftree", roots=roots).info["fallback"]["reason"]
    assert "ERR AB26: CN port 0x" in reason and "while FatTree leaf rank is 2" in reason
    assert "-u/--cn-guid-file" in reason and "-a/--root-guid-file" not in reason


def test_with_both_files_every_ca_is_routed_the_aggregation_nodes_after_the_compute_nodes(tmp_path):
    f = superpod()
    roots, cns = _files(f, tmp_path)
    r = route(f, "ftree", roots=roots, cns=cns)
    info = r.info["ftree"]
    assert "fallback" not in r.info
    assert (info["levels"], info["leaves"], info["compute_nodes"], info["non_compute_nodes"]) == (3, 6, 18, 19)
    assert info["roots"] == ["core1-1", "core1-2", "core2-1", "core2-2"]
    assert info["shortest_path_fallbacks"] == 0 and info["leaf_detours"] == 0
    lft, names = r.lft, f.node_name[f.switches]
    sw = {str(n): i for i, n in enumerate(names)}
    for an in f.aggregation_nodes:  # a switch reaches its own Aggregation Node through port 9
        host = str(f.node_name[an])[3:]
        assert lft[sw[host], f.lid[an]] == 9
    # an Aggregation Node on a core is reached down from that core only: every leaf and the spines of
    # its plane; the other cores and the spines of the other plane have no route (OpenSM's up/down)
    lid = int(f.lid[f.node("an-core1-1")])
    routed = {str(n) for n, p in zip(names, lft[:, lid], strict=True) if p != NO_PATH}
    assert routed == {str(n) for n in names if "leaf" in str(n) or str(n).endswith("spine1") or n == "core1-1"}
    # compute nodes still see every compute node over a shortest up/down path
    gpu = f.hosts[f.role[f.hosts] == ROLES.index("gpu")]
    _, broken = r.paths(np.repeat(gpu, len(gpu)), np.tile(gpu, len(gpu)), return_broken=True)
    assert not broken.any()


def test_a_cn_on_a_spine_is_refused_naming_the_port(tmp_path):
    f = superpod()
    roots, cns = _files(f, tmp_path)
    port = int(f.port_guid[f.port_offset[f.node("mgmt02")]])
    reason = route(f, "ftree", roots=roots, cns=cns + [port]).info["fallback"]["reason"]
    assert f"ERR AB26: CN port 0x{port:x} is connected to switch" in reason
    assert "mgmt02 port 1" in reason and "on p2-spine1 port 5" in reason and "with rank 1" in reason


def test_io_nodes_are_no_compute_nodes_and_reverse_hops_are_refused(tmp_path):
    f = superpod()
    roots, cns = _files(f, tmp_path)
    r = route(f, "ftree", roots=roots, cns=cns[:-3], ios=cns[-3:])
    assert (r.info["ftree"]["compute_nodes"], r.info["ftree"]["io_nodes"]) == (15, 3)
    with pytest.raises(RoutingError, match="reverse hops"):
        route(f, "ftree", roots=roots, cns=cns, ios=cns[-3:], max_reverse_hops=1)


def test_roots_that_are_leaves_give_a_tree_of_rank_1(tmp_path):
    f = superpod()
    leaves = [int(f.guid[n]) for n in f.switches if "leaf" in str(f.node_name[n])]
    _, cns = _files(f, tmp_path)
    reason = route(f, "ftree", roots=leaves, cns=cns).info["fallback"]["reason"]
    assert "Fabric rank is 1 (should be between 2 and 8)" in reason and "first compute node" in reason


def test_unknown_roots_and_node_guids_as_compute_nodes_are_explained(tmp_path):
    f = superpod()
    roots, cns = _files(f, tmp_path)
    r = route(f, "ftree", roots=[0x1234] + roots, cns=cns)
    assert "ERR AB24: Root switch GUID 0x1234 not found" in r.info["ftree"]["notes"]
    nodes = [int(f.guid[f.port_node[f.port_guid == g][0]]) for g in cns]  # node GUIDs, not port GUIDs
    reason = route(f, "ftree", roots=roots, cns=nodes).info["fallback"]["reason"]
    assert "Fabric has no valid compute nodes" in reason and "node GUIDs, not port GUIDs" in reason
    assert "ERR AB27" in route(f, "ftree", roots=roots, cns=[]).info["fallback"]["reason"]


def test_suggested_guid_files_are_the_cores_and_the_gpu_ports():
    from fabric_engine.routing.guid_files import suggest_guid_files

    f = superpod()
    roots, cns = suggest_guid_files(f)
    assert sorted(roots) == sorted(int(g) for g in f.guid[f.switches[f.tier[f.switches] == 3]])
    assert len(cns) == 18


def test_route_cli_writes_and_takes_the_guid_files(tmp_path, capsys):
    from fabric_engine import formats
    from fabric_engine.cli import main

    f = superpod()
    net = tmp_path / "pod.json"  # keeps the Aggregation Nodes' role
    net.write_text(formats.write(f, "json"))
    assert main(["route", str(net), "--write-guid-files", str(tmp_path / "g")]) == 0
    out = capsys.readouterr().out
    assert f"-a {tmp_path / 'g' / 'roots.guids'} -u {tmp_path / 'g' / 'cns.guids'}" in out
    dump = tmp_path / "lfts.dump"
    assert main(["route", str(net), "--engine", "ftree", "-a", str(tmp_path / "g" / "roots.guids"),
                 "-u", str(tmp_path / "g" / "cns.guids"), "--dump-lfts", str(dump)]) == 0
    err = capsys.readouterr().err
    assert "warning" not in err and dump.exists()
    assert main(["route", str(net), "--engine", "ftree"]) == 0
    assert "ERR AB2B" in capsys.readouterr().err
    assert main(["route", str(net), "--engine", "minhop", "-u", str(tmp_path / "g" / "cns.guids")]) != 0
    assert "-u/--cn-guid-file applies to --engine ftree only" in capsys.readouterr().err


def _routed(f: Fabric, tmp_path: Path):
    roots, cns = _files(f, tmp_path)
    r = route(f, "ftree", roots=roots, cns=cns)
    assert "fallback" not in r.info
    return r, {str(n): i for i, n in enumerate(f.node_name[f.switches])}


def test_parallel_cables_are_spread_as_opensms_counters_spread_them(tmp_path):
    """Leaf port 4 + c * 2 + j is its c-th cable to spine j: both cables to a spine carry routes."""
    f = superpod(spines_per_pod=2, parallel=2)
    r, sw = _routed(f, tmp_path)
    ports = r.lft[sw["p1-leaf1"], f.lid[f.switches]]  # switch LIDs: the climbs go on round robin
    assert {4, 6} <= set(ports.tolist()) and {5, 7} <= set(ports.tolist())


def test_a_leaf_short_of_an_up_cable_still_reaches_the_aggregation_nodes_of_the_leaves(tmp_path):
    f = superpod(short_leaves=1)
    r, sw = _routed(f, tmp_path)
    short = sw["p1-leaf2"]  # the last leaf of the first pod lacks its cable to the last spine
    on_leaves = [a for a in f.aggregation_nodes if "leaf" in str(f.node_name[a])]
    assert not np.any(r.lft[short, f.lid[on_leaves]] == NO_PATH)  # over OpenSM's secondary paths


def test_spine_to_spine_cables_carry_the_routes_up_down_cannot_give(tmp_path):
    f = superpod(spine_pairs=1)
    r, sw = _routed(f, tmp_path)
    port = 2 * 1 + 2 + 1 + 1  # after the spine's leaves, cores and management node
    assert r.lft[sw["p1-spine1"], f.lid[f.node("an-p1-spine2")]] == port
    assert r.lft[sw["p1-spine1"], f.lid[f.switches[sw["p1-spine2"]]]] == port
    assert r.info["ftree"]["sibling_routes"] > 0
    assert any("join switches of the same level" in n and "as OpenSM's ftree" in n for n in r.info["ftree"]["notes"])


def test_up_counters_replay_least_loaded_lowest_index_with_sibling_routes():
    """A main path that also routes a sibling puts 2 on its group; a sibling route alone puts 1 on the least loaded."""
    from fabric_engine.routing.ftree_counters import UpCounters

    n_up = np.array([4])
    #        dest: 0 (main + sibling), 1, 2 (mains), 3 (sibling route only), 5, 6 (mains)
    c = UpCounters(np.zeros(6, np.int64), np.array([0, 1, 2, 3, 5, 6]), np.array([2, 1, 1, 1, 1, 1]),
                   np.array([True, True, True, False, True, True]), n_up)
    pick, prior = c.main_picks(np.zeros(5, np.int64), np.array([0, 1, 2, 5, 6]))
    # counters 2000 -> 2100 -> 2110 -> 2111 (bump on group 3) -> 2211 -> 2221: plain round robin gives 0,1,2,3,0
    assert pick.tolist() == [0, 1, 2, 1, 2] and prior.tolist() == [0, 0, 0, 1, 1]
    assert c.next_pos(np.array([3, 4, 7]))[:, 0].tolist() == [3, 1, 3]  # least loaded at each destination's turn
    assert c.extra_load(np.array([0]), 4).tolist() == [1, 0, 0, 1]


def test_dummy_sibling_routes_are_laid_by_the_first_of_a_pair_the_leaf_visits():
    from fabric_engine.routing.ftree_counters import dummy_sibling_bumps

    a, b = np.array([10, 11, 12, 13]), np.array([11, 10, 13, 12])  # pairs 10-11 and 12-13, both ways
    reach = np.ones(20, dtype=bool)
    parents = np.array([[10, 12, 11, 13],    # main 10 routes 11; 12 routes 13; 11 and 13 find them routed
                        [12, 10, 13, -1],    # a leaf without its cable to 11: 10 routes it
                        [13, 11, 12, 10]])
    assert dummy_sibling_bumps(parents, a, b, reach).tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]
    reach[11] = False  # routing 11 creates no route: OpenSM does not count it
    assert dummy_sibling_bumps(parents, a, b, reach)[0].tolist() == [0, 1, 0, 0]


def test_dummies_routed_over_spine_cables_shift_the_spines_up_ports_as_in_opensm(tmp_path):
    """Entries read off OpenSM 3.3.23's dump of this fabric (the realtools case of the same shape)."""
    f = superpod(pods=4, leaves_per_pod=4, spines_per_pod=4, hosts_per_leaf=5, cores_per_plane=3, radix=16,
                 spine_pairs=2, unplugged=5)
    r, sw = _routed(f, tmp_path)
    assert r.info["ftree"]["dummy_nodes"] == 5
    spine = sw["p1-spine1"]
    assert r.lft[spine, f.lid[f.node("dgx0031")]] == 7  # plain round robin would give 6
    assert r.lft[spine, f.lid[f.node("dgx0032")]] == 5  # and 7
    assert r.lft[spine, f.lid[f.switches[sw["p2-leaf1"]]]] == 7
