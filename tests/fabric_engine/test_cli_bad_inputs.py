"""Every CLI command on bad inputs: one ``error:`` line and a non-zero exit, never a traceback (issue 16)."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from fabric_engine import cli, formats
from fabric_engine.formats import opensm_lfts
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A good fabric and dump, and the bad inputs every command is given."""
    d = tmp_path_factory.mktemp("bad")
    f = fat_tree(hosts=8, radix=4, name="small")
    good = d / "fabric.ibnd"
    good.write_text(formats.write(f, "ibnetdiscover"))
    dump = opensm_lfts.write(route(f, "minhop"))
    (d / "lfts.dump").write_text(dump)
    bad = {
        "missing": d / "does-not-exist.ibnd",
        "directory": d,
        "empty": d / "empty.ibnd",
        "binary": d / "binary.ibnd",
        "gzip-cut": d / "cut.ibnd.gz",
        "gzip-garbage": d / "garbage.gz",
        "truncated": d / "truncated.ibnd",
    }
    bad["empty"].write_text("")
    bad["binary"].write_bytes(bytes(range(256)) * 8)
    bad["gzip-cut"].write_bytes(gzip.compress(good.read_bytes())[:-30])
    bad["gzip-garbage"].write_bytes(b"\x1f\x8b" + b"\x00" * 64)
    bad["truncated"].write_text(good.read_text()[:700])
    lfts = {
        "lfts-truncated": dump[: len(dump) // 2],
        "lfts-partial-entry": dump.split("lids dumped")[0].rsplit("\n", 2)[0] + "\n0x0007 00",
        "lfts-binary": None,
        "lfts-other-fabric": opensm_lfts.write(route(fat_tree(hosts=27, radix=8), "minhop")),
    }
    for name, text in lfts.items():
        path = d / f"{name}.dump"
        if text is None:
            path.write_bytes(dump.encode()[:200] + b"\x00\xff\xfe" * 50)
        else:
            path.write_text(text)
        bad[name] = path
    return good, d / "lfts.dump", bad


def _argv_cases(good, dump, bad):
    """(command, argv) pairs: each command with each bad fabric input, plus its own bad options."""
    fabric_cmds = {
        "convert": lambda p: ["convert", str(p), str(good.parent / "out.json")],
        "info": lambda p: ["info", str(p)],
        "ebb": lambda p: ["ebb", str(p), "--patterns", "2", "--quiet"],
        "route": lambda p: ["route", str(p)],
        "trace": lambda p: ["trace", str(p), "gpu0001", "gpu0005"],
        "routing-report": lambda p: ["routing-report", str(p)],
        "roce": lambda p: ["roce", str(p), "--jobs", "1", "--job-hosts", "2", "--quiet"],
    }
    for name, make in fabric_cmds.items():
        for key in ("missing", "directory", "empty", "binary", "gzip-cut", "gzip-garbage", "truncated"):
            yield name, make(bad[key])
    for name in ("trace", "routing-report", "ebb"):
        for key in ("lfts-truncated", "lfts-partial-entry", "lfts-binary", "lfts-other-fabric", "missing"):
            yield name, [*fabric_cmds[name](good), "--lfts", str(bad[key])]
    roce = ["roce", str(good), "--jobs", "1", "--job-hosts", "2", "--quiet"]
    yield "roce", [*roce, "--qps", "0"]
    yield "roce", [*roce, "--job-hosts", "100000"]
    yield "roce", [*roce, "--scenario", str(good.parent / "no-such-scenario.json")]
    yield "roce", [*roce, "--scenario", str(bad["binary"])]
    yield "trace", ["trace", str(good), "gpu0001", "nobody"]
    yield "trace", ["trace", str(good), "0xdeadbeef", "gpu0002"]
    yield "route", ["route", str(good), "--dump-lfts", str(good.parent / "no-such-dir" / "x.dump")]
    yield "convert", ["convert", str(good), str(good.parent / "no-such-dir" / "out.json")]
    yield "convert", ["convert", str(good), str(good.parent / "out.unknown")]
    yield "generate", ["generate", "fat-tree", "--hosts", "8", "--radix", "4", "-o",
                       str(good.parent / "no-such-dir" / "f.json")]
    yield "generate", ["generate", "fat-tree", "--hosts", "0", "--radix", "4"]
    yield "generate", ["generate", "fat-tree", "--hosts", "100", "--radix", "4"]
    yield "generate", ["generate", "dragonfly-plus", "--groups", "1", "--radix", "3"]
    for key in ("missing", "directory", "empty", "binary", "gzip-cut", "gzip-garbage", "truncated"):
        yield "health", ["health", str(bad[key])]
    yield "health", ["health", str(good), "--interval", "-1"]
    # validate (issue 38): a bad topology, and each bad capture beside a good one
    for key in ("missing", "directory", "empty", "binary", "gzip-cut", "gzip-garbage", "truncated"):
        yield "validate", ["validate", str(bad[key])]
    for opt in ("--sminfo", "--pkeys", "--devices"):
        for key in ("missing", "binary", "empty"):
            yield "validate", ["validate", str(good), opt, str(bad[key])]


def test_every_command_answers_bad_input_with_one_error_line(files, capsys):
    good, dump, bad = files
    covered = set()
    for command, argv in _argv_cases(good, dump, bad):
        code = cli.main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        assert code != 0, (argv, err)
        assert err and err[-1].startswith("error: "), (argv, err)
        assert not any("Traceback" in line for line in err), (argv, err)
        covered.add(command)
    assert covered == set(cli.COMMANDS), f"commands without a bad-input case: {set(cli.COMMANDS) - covered}"


def test_errors_name_the_file_and_line(files, capsys):
    good, _, bad = files
    assert cli.main(["info", str(bad["gzip-cut"])]) == 2
    assert capsys.readouterr().err.strip() == f"error: {bad['gzip-cut']}: truncated gzip data " \
                                              "(the compressed stream ends early)"
    assert cli.main(["trace", str(good), "gpu0001", "gpu0005", "--lfts", str(bad["lfts-partial-entry"])]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad['lfts-partial-entry']}:") and "partial entry" in err


def test_gzip_inputs_work_in_every_reading_command(files, tmp_path, capsys):
    good, dump, _ = files
    gz, dgz = tmp_path / "fabric.ibnd.gz", tmp_path / "lfts.dump.gz"
    gz.write_bytes(gzip.compress(good.read_bytes()))
    dgz.write_bytes(gzip.compress(dump.read_bytes()))
    assert cli.main(["info", str(gz)]) == 0
    assert cli.main(["route", str(gz)]) == 0
    assert cli.main(["trace", str(gz), "gpu0001", "gpu0005", "--lfts", str(dgz)]) == 0
    assert cli.main(["routing-report", str(gz), "--lfts", str(dgz)]) == 0
    assert cli.main(["convert", str(gz), str(tmp_path / "f.json")]) == 0
    capsys.readouterr()


def test_no_traceback_through_python_dash_m(files):
    _, _, bad = files
    p = subprocess.run([sys.executable, "-m", "fabric_engine", "route", str(bad["binary"])],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1].startswith(f"error: {bad['binary']}:2: not UTF-8")
