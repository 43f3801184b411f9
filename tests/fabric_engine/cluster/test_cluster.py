"""Clusters of fabrics (issue 25): generated planes, jobs named by hostlist, hosts joined, planes compared."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from fabric_engine import formats
from fabric_engine.cluster import cluster_fabrics, compare_planes, join_hosts, twin_across_planes
from fabric_engine.errors import FabricEngineError
from fabric_engine.scenario import build_emulator
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin.hostlist import fold_hostlist
from tests.support.cluster_spec import PLANE, SPEC


def job_bytes(emulator) -> dict[str, float]:
    """Collective bytes per iteration of each job, summed over its expanded flows."""
    flows = emulator._jf.flows
    totals = np.bincount(flows.job, weights=flows.nbytes, minlength=len(emulator.jobs))
    return {job.name: float(totals[k]) for k, job in enumerate(emulator.jobs)}


def host_names(emulator, job) -> list[str]:
    return emulator.fabric.node_name[job.hosts].tolist()


@pytest.fixture(scope="module")
def cluster() -> dict[str, tuple]:
    """suffix -> (ClusterFabric, its emulator) of :data:`SPEC`."""
    return {part.suffix: (part, build_emulator(part.spec)) for part in cluster_fabrics(SPEC)}


# ------------------------------------------------------------------ generation
def test_planes_then_storage_with_roles_and_rails(cluster):
    assert [(p.role, p.rail, p.suffix) for p, _ in cluster.values()] == [
        ("compute", 1, "plane1"), ("compute", 2, "plane2"), ("storage", None, "storage")]
    assert [e.fabric.name for _, e in cluster.values()] == ["pod-plane1", "pod-plane2", "pod-storage"]


def test_every_fabric_has_the_same_hosts_by_name_and_planes_no_storage_servers(cluster):
    gpus = [f"dgx{i:04d}" for i in range(1, 17)]
    for suffix, (_, e) in cluster.items():
        f = e.fabric
        names = f.node_name[f.hosts].tolist()
        servers = [n for n, r in zip(names, f.role[f.hosts].tolist(), strict=True) if r == 1]  # ROLES[1]: storage
        if suffix == "storage":
            assert sorted(set(names) - set(servers)) == gpus and servers == ["stor001", "stor002"]
        else:
            assert names == gpus and servers == [], suffix
            assert e.storage is None, "planes carry no data loading when the cluster has a storage fabric"


def test_jobs_are_placed_once_on_the_same_hosts_of_every_fabric(cluster):
    lists = {suffix: [j["nodelist"] for j in p.spec["jobs"]] for suffix, (p, _) in cluster.items()}
    assert lists["plane1"] == lists["plane2"] == lists["storage"]
    assert lists["plane1"][0] == "dgx[0001-0006]"
    per_fabric = {suffix: [host_names(e, j) for j in e.jobs] for suffix, (_, e) in cluster.items()}
    assert per_fabric["plane1"] == per_fabric["plane2"] == per_fabric["storage"]
    llm, moe = per_fabric["plane1"]
    assert len(llm) == 6 and len(moe) == 4 and not set(llm) & set(moe)
    assert all(fold_hostlist(hosts) == nl for hosts, nl in zip(per_fabric["plane1"], lists["plane1"], strict=True))


def test_collective_bytes_split_over_the_planes_sum_to_the_job_on_one_fabric(cluster):
    """As NCCL with one ring per rail: each plane carries 1/N, the planes together the job's whole buffer."""
    plane1, plane2 = (job_bytes(cluster[s][1]) for s in ("plane1", "plane2"))
    nodelists = [j["nodelist"] for j in cluster["plane1"][0].spec["jobs"]]
    whole = [{k: v for k, v in j.items() if k not in ("hosts", "placement", "read_gbps", "checkpoint")}
             | {"nodelist": nl} for j, nl in zip(SPEC["jobs"], nodelists, strict=True)]
    single = job_bytes(build_emulator({"topology": PLANE, "jobs": whole, "seed": 3}))
    assert single["llm"] > 0 and single["moe"] > 0
    for name in ("llm", "moe"):
        assert plane1[name] == pytest.approx(plane2[name]) == pytest.approx(single[name] / 2)
        assert plane1[name] + plane2[name] == pytest.approx(single[name])


def test_storage_fabric_jobs_move_no_collective_bytes_but_keep_reads_and_checkpoints(cluster):
    part, e = cluster["storage"]
    assert job_bytes(e) == {"llm": 0.0, "moe": 0.0}
    llm = e.jobs[0]
    assert llm.read_gbps == 100 and llm.checkpoint is not None and llm.checkpoint.every == 5
    assert e.storage is not None and part.spec["storage"] == SPEC["storage_model"]
    for suffix in ("plane1", "plane2"):
        plane_llm = cluster[suffix][1].jobs[0]
        assert plane_llm.read_gbps == 0 and plane_llm.checkpoint is None, suffix


def test_without_a_storage_fabric_the_planes_keep_reads():
    spec = {k: v for k, v in SPEC.items() if k != "storage"}
    parts = cluster_fabrics(spec)
    assert [p.suffix for p in parts] == ["plane1", "plane2"]
    assert all(p.spec["jobs"][0]["read_gbps"] == 100 and p.spec["storage"] == SPEC["storage_model"] for p in parts)


@pytest.mark.parametrize(("change", "field"), [
    ({"planes": 0}, "cluster.planes"),
    ({"planes": 17}, "cluster.planes"),
    ({"planes": "2"}, "cluster.planes"),
    ({"planes": True}, "cluster.planes"),
    ({"plane": {**PLANE, "storage_servers": 2}}, "cluster.plane"),
    ({"plane": "fat_tree"}, "cluster.plane"),
    ({"jobs": SPEC["jobs"] + [{"name": "big", "tenant": "acme", "hosts": 7}]}, "jobs[2]"),
    ({"jobs": [{"name": "nohosts", "tenant": "acme"}]}, "jobs[0]"),
    ({"storage": "fat_tree"}, "cluster.storage"),
])
def test_bad_cluster_specs_name_the_field(change, field):
    with pytest.raises(FabricEngineError) as err:
        cluster_fabrics({**copy.deepcopy(SPEC), **change})
    assert str(err.value).startswith(f"{field}:"), str(err.value)


# ------------------------------------------------------------------ nodelist
ONE_FABRIC = {"topology": {"generator": "fat_tree", "hosts": 16, "radix": 8, "storage_servers": 1}, "seed": 1}


def with_jobs(*jobs: dict) -> dict:
    return {**ONE_FABRIC, "jobs": [{"name": f"j{i}", "tenant": "t", "compute_s": 0.5, **j} for i, j in enumerate(jobs)]}


def test_a_nodelist_places_exactly_its_hosts():
    e = build_emulator(with_jobs({"nodelist": "gpu[0009-0010],gpu0002,gpu0004"}, {"hosts": 3}))
    assert host_names(e, e.jobs[0]) == ["gpu0002", "gpu0004", "gpu0009", "gpu0010"]
    assert not set(host_names(e, e.jobs[1])) & set(host_names(e, e.jobs[0])), "the next job is placed around it"
    counted = build_emulator(with_jobs({"nodelist": "gpu[0001-0004]", "hosts": 4, "placement": "scattered"}))
    assert host_names(counted, counted.jobs[0]) == ["gpu0001", "gpu0002", "gpu0003", "gpu0004"]


@pytest.mark.parametrize(("jobs", "message"), [
    ([{"nodelist": "gpu[0001-0002],gpu9999"}], "jobs[0]: nodelist: 1 names are no GPU host of the fabric"),
    ([{"nodelist": "stor001"}], "jobs[0]: nodelist: 1 names are no GPU host"),
    ([{"nodelist": "gpu[0001-0004]"}, {"nodelist": "gpu[0004-0005]"}], "jobs[1]: nodelist: 'gpu0004' runs an earlier"),
    ([{"hosts": 4}, {"nodelist": "gpu0003"}], "jobs[1]: nodelist: 'gpu0003' runs an earlier job"),
    ([{"nodelist": "gpu[0001-0004]", "hosts": 3}], "jobs[0]: hosts 3 but the nodelist names 4"),
    ([{"nodelist": "gpu[0001-0003"}], "jobs[0]: jobs[0].nodelist: hostlist"),
])
def test_bad_nodelists_name_the_job(jobs, message):
    with pytest.raises(FabricEngineError) as err:
        build_emulator(with_jobs(*jobs))
    assert str(err.value).startswith(message), str(err.value)


def test_a_hostlist_naming_more_hosts_than_the_fabric_is_refused_before_expansion(monkeypatch):
    import ClusterShell.NodeSet

    def never(*args, **kwargs):
        raise AssertionError("the hostlist was expanded")

    monkeypatch.setattr(ClusterShell.NodeSet, "NodeSet", never)
    for nodelist in ("gpu[0001-0017]", "gpu[1-999999999999]"):
        with pytest.raises(FabricEngineError) as err:
            build_emulator(with_jobs({"nodelist": nodelist}))
        assert str(err.value).startswith("jobs[0]: jobs[0].nodelist: ") and "names more than 16 hosts" in str(err.value)


# ------------------------------------------------------------------ hosts joined
def ibnetdiscover_text(hcas: list[tuple[str, int]], leaf: int) -> str:
    """One leaf switch ``leaf`` (GUID) with one single-port HCA per ``(description, system image GUID)``."""
    blocks = [f"vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x{leaf:016x}\nswitchguid=0x{leaf:016x}({leaf:x})\n"
              f'Switch\t{len(hcas)} "S-{leaf:016x}"\t\t# "leaf-{leaf:x}" enhanced port 0 lid 1 lmc 0\n'
              + "".join(f'[{p}]\t"H-{leaf + 0x100 * p:016x}"[1]({leaf + 0x100 * p + 1:x}) \t\t# "{desc}" '
                        f"lid {p + 1} 4xNDR\n" for p, (desc, _) in enumerate(hcas, 1))]
    for p, (desc, sysimg) in enumerate(hcas, 1):
        guid = leaf + 0x100 * p
        blocks.append(f"vendid=0x2c9\ndevid=0x1021\nsysimgguid=0x{sysimg:016x}\ncaguid=0x{guid:016x}\n"
                      f'Ca\t1 "H-{guid:016x}"\t\t# "{desc}"\n'
                      f'[1]({guid + 1:x}) \t"S-{leaf:016x}"[{p}]\t\t# lid {p + 1} lmc 0 "leaf-{leaf:x}" lid 1 '
                      "4xNDR\n")
    return "\n".join(blocks)


SERVER = 0xB8CEF60300AA0000  # system image GUID of server dgx01 (dgx0N: + N - 1)


def read_capture(hcas: list[tuple[str, int]], leaf: int):
    return formats.read(ibnetdiscover_text(hcas, leaf), "ibnetdiscover", source=f"leaf-{leaf:x}")


def test_generated_planes_join_by_name(cluster):
    fabrics = {s: cluster[s][1].fabric for s in ("plane1", "plane2", "storage")}
    hosts = join_hosts(fabrics)
    assert hosts.names == [f"dgx{i:04d}" for i in range(1, 17)] + ["stor001", "stor002"]
    assert hosts.by_sysimg == 0 and hosts.rails == {"plane1": [1], "plane2": [1], "storage": [1]}
    p2 = fabrics["plane2"]
    assert p2.node_name[hosts.hcas["plane2"][:16, 0]].tolist() == hosts.names[:16]
    assert (hosts.hcas["plane1"][16:] == -1).all(), "storage servers have no HCA on a plane"
    assert hosts.on_every(["plane1", "plane2"]).tolist() == [True] * 16 + [False] * 2
    assert hosts.on_every(["storage"]).all()
    found = hosts.nodes("plane2", ["dgx0003", "not-a-host", "dgx0010"])
    assert p2.node_name[found].tolist() == ["dgx0003", "dgx0010"]


def test_a_fabric_with_other_names_joins_by_system_image_guid():
    """The storage fabric describes its HCAs ``dgx0N-st``: the readers' host_sysimg still joins them to dgx0N."""
    servers = [(f"dgx0{n}", SERVER + n - 1) for n in range(1, 5)]
    plane1 = read_capture(servers, 0x10)
    plane2 = read_capture(servers[:3], 0x20)  # dgx04 has no HCA on plane 2
    storage = read_capture([(f"{name}-st", g) for name, g in servers] + [("stor01", SERVER + 0x99)], 0x30)
    assert plane1.meta["host_sysimg"], "the reader keeps each host's system image GUID"
    assert sorted(storage.meta["host_sysimg"].values()) == sorted(f"0x{g:016x}" for _, g in servers + [
        ("stor01", SERVER + 0x99)])
    hosts = join_hosts({"plane1": plane1, "plane2": plane2, "storage": storage})
    assert hosts.names == ["dgx01", "dgx02", "dgx03", "dgx04", "stor01"]
    assert hosts.by_sysimg == 4, "each dgx0N-st joined by GUID; plane 2's same names count nothing"
    assert storage.node_name[hosts.hcas["storage"][:4, 0]].tolist() == ["dgx01-st", "dgx02-st", "dgx03-st",
                                                                           "dgx04-st"]
    assert hosts.on_every(["plane1", "plane2", "storage"]).tolist() == [True, True, True, False, False]
    assert hosts.on_every(["plane1", "storage"]).tolist() == [True] * 4 + [False]
    assert storage.node_name[hosts.nodes("storage", ["dgx02"])].tolist() == ["dgx02-st"]


def test_different_names_and_different_guids_stay_apart():
    plane = read_capture([("dgx01", SERVER), ("dgx02", SERVER + 1)], 0x10)
    other = read_capture([("dgx01-st", SERVER + 0x50), ("dgx02", SERVER + 1)], 0x30)
    hosts = join_hosts({"plane": plane, "storage": other})
    assert hosts.names == ["dgx01", "dgx02", "dgx01-st"] and hosts.by_sysimg == 0


def test_hca_descriptions_give_one_host_with_a_rail_each():
    """``dgx001 HCA-1`` and ``dgx001 HCA-2``, read from a capture: one host, two rails, no join by GUID needed."""
    f = read_capture([("dgx001 HCA-1", SERVER), ("dgx001 HCA-2", SERVER), ("dgx002 HCA-1", SERVER + 1),
                      ("dgx002 HCA-2", SERVER + 1)], 0x10)
    hosts = join_hosts({"rails": f})
    assert hosts.names == ["dgx001", "dgx002"]
    assert hosts.rails == {"rails": [1, 2]}
    assert f.node_name[hosts.hcas["rails"]].tolist() == [["dgx001 HCA-1", "dgx001 HCA-2"],
                                                        ["dgx002 HCA-1", "dgx002 HCA-2"]]
    assert hosts.by_sysimg == 0, "HCAs joined by their names are not joins by system image GUID"


def test_hca_descriptions_join_without_any_system_image_guid():
    f = fat_tree(hosts=4, radix=4)
    names = f.node_name.astype(object).copy()
    names[f.hosts] = ["dgx001 HCA-1", "dgx001 HCA-2", "dgx002 HCA-1", "dgx002 HCA-2"]
    hosts = join_hosts({"rails": dataclasses.replace(f, node_name=names, meta={})})
    assert hosts.names == ["dgx001", "dgx002"]
    assert hosts.hcas["rails"].tolist() == f.hosts.reshape(2, 2).tolist()
    assert hosts.nodes("rails", ["dgx002"]).tolist() == f.hosts[2:].tolist()


# ------------------------------------------------------------------ planes compared
def header(gbps: float, jobs: dict[str, float], congested: int = 0) -> dict:
    """A frame header of one plane: its throughput and each job's slowdown (comm_s = slowdown, rate = 10 Gb/s)."""
    return {"t": 100.0, "totals": {"throughput_gbps": gbps, "congested_links": congested, "hottest": {"util": 0.5}},
            "jobs": [{"id": j, "tenant": "acme", "active": True, "slowdown": s, "comm_s": s, "achieved_gbps": 10.0}
                     for j, s in jobs.items()]}


def test_a_degraded_plane_sets_the_job_pace_and_the_imbalance():
    out = compare_planes(["p1", "p2"], [header(300.0, {"llm": 1.0, "moe": 1.2}), header(100.0, {"llm": 2.0,
                                                                                                "moe": 1.1})])
    jobs = {j["id"]: j for j in out["jobs"]}
    assert jobs["llm"]["slowdown"] == 2.0 and jobs["llm"]["slowest_plane"] == "p2"
    assert jobs["llm"]["comm_s"] == 2.0 and jobs["llm"]["achieved_gbps"] == 20.0
    assert jobs["llm"]["planes"] == {"p1": {"slowdown": 1.0, "comm_s": 1.0, "achieved_gbps": 10.0},
                                     "p2": {"slowdown": 2.0, "comm_s": 2.0, "achieved_gbps": 10.0}}
    assert jobs["moe"]["slowdown"] == 1.2 and jobs["moe"]["slowest_plane"] == "p1"
    assert [(p["key"], p["throughput_gbps"], p["load"]) for p in out["planes"]] == [("p1", 300.0, 1.5),
                                                                                   ("p2", 100.0, 0.5)]
    assert out["imbalance"] == {"max_over_mean": 1.5, "max_over_min": 3.0, "least_loaded": "p2",
                                "most_loaded": "p1", "jobs_slowest_on": {"p1": 1, "p2": 1}}


def test_even_planes_are_balanced_and_no_job_is_slowest_anywhere():
    out = compare_planes(["p1", "p2"], [header(200.0, {"llm": 1.0}), header(200.0, {"llm": 1.0})])
    assert out["imbalance"]["max_over_mean"] == 1.0 and out["imbalance"]["max_over_min"] == 1.0
    assert out["imbalance"]["jobs_slowest_on"] == {"p1": 0, "p2": 0}


def test_a_plane_without_a_frame_is_not_counted_in_the_mean():
    out = compare_planes(["p1", "p2", "p3"], [header(300.0, {"llm": 1.0}), header(100.0, {"llm": 1.5}), None])
    p3 = out["planes"][2]
    assert p3["live"] is False and p3["throughput_gbps"] is None and p3["load"] is None
    assert [p["load"] for p in out["planes"][:2]] == [1.5, 0.5]
    assert out["imbalance"]["max_over_mean"] == 1.5 and out["imbalance"]["least_loaded"] == "p2"
    llm = out["jobs"][0]
    assert llm["slowdown"] == 1.5 and llm["slowest_plane"] == "p2"
    assert llm["planes"]["p3"] == {"slowdown": None, "comm_s": None, "achieved_gbps": 0.0}


def test_no_frame_anywhere():
    out = compare_planes(["p1", "p2"], [None, None])
    assert out["jobs"] == [] and out["imbalance"]["max_over_mean"] is None
    assert out["imbalance"]["most_loaded"] is None and all(p["load"] is None for p in out["planes"])


# ------------------------------------------------------------------ the twins across planes
def twin_jobs(**observed: tuple[float, float]) -> list[dict]:
    """A plane's twin job entries: ``job=(expected, observed)`` Gb/s."""
    return [{"id": j, "emulated_gbps": e, "observed_gbps": o} for j, (e, o) in observed.items()]


def test_a_job_is_as_far_from_its_expectation_as_its_slowest_rail():
    out = twin_across_planes(["p1", "p2", "p3"], [twin_jobs(llm=(100.0, 98.0), moe=(10.0, 2.0)),
                                                  twin_jobs(llm=(100.0, 50.0), moe=(10.0, 9.0)), None])
    llm = out["llm"]
    assert (llm["expected_gbps"], llm["observed_gbps"], llm["ratio"], llm["slowest_plane"]) == (200.0, 148.0, 0.5,
                                                                                                "p2")
    assert llm["planes"] == {"p1": {"expected_gbps": 100.0, "observed_gbps": 98.0, "ratio": 0.98},
                             "p2": {"expected_gbps": 100.0, "observed_gbps": 50.0, "ratio": 0.5}}
    assert (out["moe"]["ratio"], out["moe"]["slowest_plane"]) == (0.2, "p1")


def test_a_plane_expecting_nothing_of_a_job_does_not_set_its_pace():
    out = twin_across_planes(["p1", "p2"], [twin_jobs(idle=(0.0, 0.0), llm=(100.0, 80.0)), twin_jobs(llm=(0.0, 5.0))])
    assert out["idle"]["ratio"] is None and out["idle"]["slowest_plane"] is None
    assert (out["llm"]["ratio"], out["llm"]["slowest_plane"], out["llm"]["observed_gbps"]) == (0.8, "p1", 85.0)
    assert out["llm"]["planes"]["p2"]["ratio"] is None
    assert twin_across_planes(["p1"], [None]) == {}
