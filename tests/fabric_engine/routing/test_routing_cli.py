"""``python -m fabric_engine route | trace | routing-report`` (issue 4)."""

from __future__ import annotations

import json

import pytest

from fabric_engine import cli, formats
from fabric_engine.formats import opensm_lfts
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from tests.fabric_engine.routing.test_routing_fixtures import ring


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def fabric_file(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(formats.write(fat_tree(hosts=16, radix=8), "json"))
    return path


def test_route_dumps_lfts_that_load_back(capsys, tmp_path, fabric_file):
    dump = tmp_path / "out.dump"
    code, out, err = run(capsys, "route", str(fabric_file), "--engine", "ftree", "--dump-lfts", str(dump), "--report")
    assert code == 0 and "ftree: routed" in err and "credit loops: acyclic" in out
    f = formats.read(fabric_file)
    assert (opensm_lfts.read(dump.read_text(), f).lft == route(f, "ftree").lft).all()


def test_trace_from_a_dump_prints_hops_and_latency(capsys, tmp_path, fabric_file):
    f = formats.read(fabric_file)
    dump = tmp_path / "lfts.dump"
    dump.write_text(opensm_lfts.write(route(f, "minhop"), "ibroute"))
    code, out, _ = run(capsys, "trace", str(fabric_file), "--lfts", str(dump), "gpu0001", "gpu0016")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("From ca") and lines[-2].startswith('To ca')
    assert len(lines) == 7 and "latency ~450 ns" in lines[-1]
    code, out, _ = run(capsys, "trace", str(fabric_file), "gpu0001", "gpu0002", "--json", "--switch-ns", "200")
    data = json.loads(out)
    assert code == 0 and data["latency"]["total_ns"] == pytest.approx(200 + 2 * 3 * 5)


def test_report_exit_code_says_whether_there_is_a_credit_loop(capsys, tmp_path, fabric_file):
    code, out, _ = run(capsys, "routing-report", str(fabric_file), "--engine", "updn", "--json")
    assert code == 0 and json.loads(out)["credit_loops"]["acyclic"]
    ring_file = tmp_path / "ring.json"
    ring_file.write_text(formats.write(ring(6, 2), "json"))
    code, out, _ = run(capsys, "routing-report", str(ring_file), "--engine", "minhop")
    assert code == 1 and "credit loop on VL 0" in out


def test_errors_are_one_line(capsys, tmp_path, fabric_file):
    code, _, err = run(capsys, "trace", str(fabric_file), "--lfts", str(tmp_path / "missing"), "gpu0001", "gpu0002")
    assert code == 2 and err.startswith("error:") and "missing" in err
    code, _, err = run(capsys, "trace", str(fabric_file), "gpu0001", "nobody")
    assert code == 2 and "nobody" in err
