"""Jobs from the scheduler (issue 17): Slurm hostlists, Slurm JSON, host names to HCAs per rail."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FabricEngineError, FormatError
from fabric_engine.topology.generate import fat_tree, rail_optimized
from fabric_engine.twin import HostMap, SchedulerJob, expand_hostlist, hostlist_size, parse_slurm_jobs, place_jobs
from fabric_engine.twin.catalog import workload_jobs
from fabric_engine.twin.slurm import MAX_FIELD_CHARS

DATA = Path(__file__).parents[2] / "data" / "slurm"


# ------------------------------------------------------------------ hostlists
@pytest.mark.parametrize(("expr", "hosts"), [
    ("dgx[001-004,010],gpu-a[1-2]", ["dgx001", "dgx002", "dgx003", "dgx004", "dgx010", "gpu-a1", "gpu-a2"]),
    ("dgx[001-003]", ["dgx001", "dgx002", "dgx003"]),
    ("n[9-11]", ["n9", "n10", "n11"]),
    ("node7", ["node7"]),
    ("rack[1-2]-n[01-02]", ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]),
    ("a.b_c-1,a.b_c-2", ["a.b_c-1", "a.b_c-2"]),
    ("", []),
])
def test_hostlist_expands_like_slurm(expr, hosts):
    assert expand_hostlist(expr, limit=100) == hosts
    assert hostlist_size(expr) == len(hosts)


@pytest.mark.parametrize(("expr", "message"), [
    ("n[1-3", "'[' is not closed"),
    ("n1-3]", "']' without '['"),
    ("n[[1-3]]", "nested '['"),
    ("n[3-1]", "runs backwards"),
    ("n[1-x]", "not a number"),
    ("n[1-2],,m1", "empty name"),
    ("@gpus", "not allowed"),
    ("n[1-2]^n1", "not allowed"),
    ("n 1", "not allowed"),
    ("n[1-010]", "padding"),
])
def test_hostlist_errors_name_the_problem(expr, message):
    with pytest.raises(FormatError, match=re.escape(message)) as err:
        expand_hostlist(expr, limit=100, source="jobs.json: jobs[0] field 'nodes'")
    assert str(err.value).startswith("jobs.json: jobs[0] field 'nodes':")


def test_hostlist_larger_than_the_fabric_is_refused_before_expansion(monkeypatch):
    import ClusterShell.NodeSet

    def no_expansion(*args, **kwargs):
        raise AssertionError("expanded before the size check")

    monkeypatch.setattr(ClusterShell.NodeSet, "NodeSet", no_expansion)
    for expr in ("n[1-100000000000000]", "a[1-9],b[1-9],c[1-9]", "r[1-1000]-n[1-1000]"):
        with pytest.raises(FormatError, match="names more than 20 hosts"):
            expand_hostlist(expr, limit=20)
    assert hostlist_size("r[1-1000]-n[1-1000]") == 1_000_000


def test_hostlist_too_long_is_refused():
    with pytest.raises(FormatError, match="characters, more than"):
        hostlist_size("n1," * 400_000)


# --------------------------------------------------------------- Slurm JSON
@pytest.mark.parametrize("name", ["squeue-23.02.json", "squeue-23.11.json"])
def test_squeue_json_of_slurm_23_gives_the_running_jobs(name):
    jobs = parse_slurm_jobs((DATA / name).read_bytes(), max_hosts=16, source=name)
    assert [j.job_id for j in jobs] == ["4242", "4243"]
    a, b = jobs
    assert a.account == "llm-pretrain" and a.user == "alice" and a.partition == "gpu"
    assert a.name == "llama-70b-pretrain" and a.state == "RUNNING"
    assert a.hosts == ("gpu0001", "gpu0002", "gpu0009", "gpu0010")
    assert b.hosts == ("gpu0003", "gpu0004", "gpu0005", "gpu0013")
    assert a.start == 1733140800 - 3600 and a.end == 1733140800 + 169200


def test_squeue_json_keeps_other_states_when_asked():
    jobs = parse_slurm_jobs((DATA / "squeue-23.11.json").read_text(), max_hosts=16,
                            states=("RUNNING", "PENDING"))
    pending = next(j for j in jobs if j.job_id == "4244")
    assert pending.hosts == () and pending.state == "PENDING" and pending.start is None and pending.end is None


def test_scontrol_show_job_json_with_nodes_under_job_resources():
    (job,) = parse_slurm_jobs((DATA / "scontrol-24.05.json").read_text(), max_hosts=16, source="scontrol")
    assert job.job_id == "4242" and job.hosts == ("gpu0001", "gpu0002", "gpu0009", "gpu0010")


def test_slurm_error_is_reported():
    with pytest.raises(FormatError, match="Slurm reported an error: Invalid job id specified"):
        parse_slurm_jobs((DATA / "scontrol-error.json").read_text(), max_hosts=16)


def _doc(**fields) -> str:
    job = {"job_id": 1, "job_state": ["RUNNING"], "nodes": "n[1-2]", "account": "t"}
    job.update(fields)
    return json.dumps({"jobs": [job]})


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", r"s.json:1: not JSON"),
    ("[]", "expected an object with a 'jobs' list"),
    (json.dumps({"jobs": [1]}), r"jobs\[0\]: not an object"),
    (_doc(job_id="x"), r"jobs\[0\] field 'job_id': not a positive integer"),
    (_doc(account=5), r"jobs\[0\] \(job 1\) field 'account': not a string"),
    (_doc(account="x" * (MAX_FIELD_CHARS + 1)), "more than 256"),
    (_doc(nodes="n[1-99]"), r"s.json: jobs\[0\] \(job 1\) field 'nodes': hostlist 'n\[1-99\]' names more than 16"),
    (_doc(job_state=[1]), "field 'job_state'"),
    (_doc(start_time={"set": True, "infinite": False, "number": "x"}), "field 'start_time': not a time"),
    (json.dumps({"jobs": [{"job_id": 1, "job_state": "RUNNING", "nodes": "n1"}] * 2}), "listed twice"),
    ('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}", "s.json: not JSON Slurm writes: nested too deeply"),
    ('{"jobs": [{"job_id": ' + "9" * 5000 + "}]}", "s.json: not JSON: Exceeds the limit"),
])
def test_slurm_json_errors_name_source_record_and_field(text, message):
    with pytest.raises(FormatError, match=message):
        parse_slurm_jobs(text, max_hosts=16, source="s.json")


def test_slurm_json_sizes_are_checked_before_parsing():
    with pytest.raises(FormatError, match="more than the limit of 100"):
        parse_slurm_jobs(" " * 101, max_hosts=4, max_bytes=100)
    many = json.dumps({"jobs": [{"job_id": i + 1, "job_state": "PENDING"} for i in range(11)]})
    with pytest.raises(FormatError, match="11 job records, more than the limit of 10"):
        parse_slurm_jobs(many, max_hosts=4, max_jobs=10)


def test_slurm_times_as_plain_integers_and_unset():
    jobs = parse_slurm_jobs(_doc(start_time=1700000000, end_time={"set": False, "infinite": False, "number": 0}),
                            max_hosts=4)
    assert jobs[0].start == 1700000000.0 and jobs[0].end is None


# ------------------------------------------------------------------ host map
def test_hostmap_default_patterns_and_exact_names():
    f = fat_tree(hosts=8, radix=4)
    index = HostMap().index(f)
    rails, missing = index.resolve(["gpu0003", "gpu0007", "ghost"])
    assert list(rails) == [1] and f.node_name[rails[1]].tolist() == ["gpu0003", "gpu0007"]
    assert missing == ["ghost"]
    assert HostMap().split("dgx001 HCA-2") == ("dgx001", 2)
    assert HostMap().split("dgx001 mlx5_0") == ("dgx001", 0)
    assert HostMap().split("leaf01") is None


def test_hostmap_rails_of_a_rail_optimized_fabric():
    f = rail_optimized(nodes=8, gpus_per_node=4, nodes_per_su=4, radix=16)
    index = HostMap("{host}-hca{rail}").index(f)
    rails, missing = index.resolve(["dgx0002", "dgx0005"])
    assert missing == [] and list(rails) == [1, 2, 3, 4]
    for r, nodes in rails.items():
        assert f.node_name[nodes].tolist() == [f"dgx0002-hca{r}", f"dgx0005-hca{r}"]
    regex = HostMap(r"re:^(?P<host>dgx\d+)-hca(?P<rail>\d)$").index(f)
    assert {r: n.tolist() for r, n in regex.resolve(["dgx0002"])[0].items()} == \
        {r: n[:1].tolist() for r, n in rails.items()}


@pytest.mark.parametrize("pattern", ["", "{rail}", "{host}{host}", "{host} {gpu}", "re:(", "re:^dgx$", "x" * 300])
def test_hostmap_bad_patterns(pattern):
    with pytest.raises(FabricEngineError, match="host pattern"):
        HostMap(pattern)


def test_hostmap_two_hcas_claiming_one_rail_is_an_error():
    f = rail_optimized(nodes=2, gpus_per_node=2, nodes_per_su=2, radix=8)
    with pytest.raises(FabricEngineError, match="both claim rail 1"):
        HostMap("re:^(?P<host>dgx\\d+)-hca\\d$").index(f)


def test_place_jobs_by_hosts_and_by_port_guids():
    f = rail_optimized(nodes=8, gpus_per_node=2, nodes_per_su=4, radix=16)
    index = HostMap("{host}-hca{rail}").index(f)
    guids = tuple(int(f.port_guid[f.port_offset[f.node(f"dgx000{n}-hca1")]]) for n in (1, 2, 3))
    jobs = [SchedulerJob("1", "a", ("dgx0001", "dgx0002", "dgx0009")), SchedulerJob("2", "b", port_guids=guids),
            SchedulerJob("3", "c", ("nowhere1", "nowhere2"))]
    known, problems = place_jobs(jobs, index, patterns={"b": "all_to_all"})
    assert [k.job_id for k in known] == ["1", "2"]
    assert known[0].num_ports == 4 and sorted(known[0].rails) == [1, 2]
    assert known[1].pattern == "all_to_all" and known[1].num_ports == 3 and list(known[1].rails) == [1]
    assert [p["job"] for p in problems] == ["1", "3"]
    assert "dgx0009" in problems[0]["message"] and problems[1]["missing"] == 2
    wl, owner = workload_jobs(known)
    assert [j.name for j in wl] == ["1/rail1", "1/rail2", "2"] and owner.tolist() == [0, 0, 1]
    assert all(j.compute_s == 0 for j in wl)
    with pytest.raises(FabricEngineError, match="unknown pattern"):
        place_jobs(jobs, index, default_pattern="gossip")


def test_workload_skips_rails_with_one_hca():
    f = fat_tree(hosts=8, radix=4)
    known, _ = place_jobs([SchedulerJob("1", "a", ("gpu0001",))], HostMap().index(f))
    assert workload_jobs(known)[0] == [] and np.array_equal(known[0].nodes, [f.node("gpu0001")])
