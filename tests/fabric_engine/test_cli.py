"""``python -m fabric_engine`` generate / convert / info, and the subcommand registry (issue 3)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fabric_engine import cli, formats


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_generate_fat_tree_as_ibsim(tmp_path, capsys):
    out = tmp_path / "fabric.net"
    code, _, err = run(capsys, "generate", "fat-tree", "--hosts", "2048", "--radix", "64", "--levels", "2",
                       "--speed", "NDR", "--format", "ibsim", "-o", str(out))
    assert code == 0 and "2048 hosts" in err
    f = formats.read(out, fmt="ibsim")
    assert (f.num_hosts, f.num_switches, f.num_links) == (2048, 96, 4096)


@pytest.mark.parametrize(("argv", "hosts"), [
    (["rail-optimized", "--nodes", "64"], 512),
    (["dragonfly-plus", "--groups", "3", "--radix", "8", "--leaves-per-group", "2", "--spines-per-group", "2",
      "--hosts-per-leaf", "4", "--storage-servers", "2", "--mgmt-nodes", "1"], 3 * 2 * 4 + 3),
    (["fat-tree", "--hosts", "100", "--radix", "16", "--levels", "3", "--storage-servers", "4"], 104),
])
def test_generate_each_design(tmp_path, capsys, argv, hosts):
    out = tmp_path / "f.ibnd"
    code, _, _ = run(capsys, "generate", *argv, "-o", str(out))
    assert code == 0
    assert formats.detect(out.read_text()) == "ibnetdiscover"
    assert formats.read(out).num_hosts == hosts


def test_generate_to_stdout_defaults_to_json(capsys):
    code, out, _ = run(capsys, "generate", "fat-tree", "--hosts", "4", "--radix", "4")
    assert code == 0 and json.loads(out)["format"] == "ibweb-fabric"


def test_convert_infers_formats_and_accepts_overrides(tmp_path, capsys):
    src = tmp_path / "a.net"
    run(capsys, "generate", "fat-tree", "--hosts", "8", "--radix", "4", "-o", str(src))
    assert run(capsys, "convert", str(src), str(tmp_path / "b.json"))[0] == 0
    assert run(capsys, "convert", str(tmp_path / "b.json"), str(tmp_path / "c.txt"), "--to", "ibnetdiscover")[0] == 0
    a, c = formats.read(src), formats.read(tmp_path / "c.txt")
    assert a.node_name.tolist() == c.node_name.tolist() and a.num_links == c.num_links
    code, _, err = run(capsys, "convert", str(src), str(tmp_path / "d.unknown"))
    assert code == 2 and "pass --to" in err


def test_info_reports_tiers_rates_bisection_and_oversubscription(tmp_path, capsys):
    src = tmp_path / "f.json"
    run(capsys, "generate", "fat-tree", "--hosts", "96", "--radix", "16", "--oversubscription", "3",
        "--speed", "HDR", "-o", str(src))
    code, out, _ = run(capsys, "info", str(src), "--json")
    d = json.loads(out)
    assert code == 0
    assert d["nodes"] == {"hosts": 96, "switches": 12} and d["switch_tiers"] == {"leaf": 8, "spine": 4}
    assert d["links"]["by_rate"] == {"4xHDR": {"links": 96 + 32, "gbps_each": 200.0}}
    assert d["oversubscription"] == {"leaf": 3.0}
    # 3:1 at the leaf: the cut between the two host halves is the halves' leaf up-links, 4 leaves x 4 x 200.
    assert d["bisection_gbps"] == 3200.0
    code, out, _ = run(capsys, "info", str(src))
    assert "oversubscription: leaf 3:1" in out and "4xHDR" in out


def test_info_on_a_broken_file_prints_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.ibnd"
    bad.write_text('Switch\t4 "S-01"\t# "a" lid 1\n[1]\t"S-02"[1]\t# "b" lid 2 4xZDR\n')
    code, _, err = run(capsys, "info", str(bad))
    assert code == 2 and f"error: {bad}:2: unknown link speed 'ZDR'" in err


def test_generator_errors_exit_2(capsys):
    code, _, err = run(capsys, "generate", "fat-tree", "--hosts", "65536", "--levels", "3")
    assert code == 2 and "49,151 unicast LIDs" in err


def test_registry_lets_modules_add_subcommands(capsys, monkeypatch):
    monkeypatch.setattr(cli, "COMMANDS", dict(cli.COMMANDS))

    def args(p):
        p.add_argument("--times", type=int, default=1)

    @cli.command("echo-test", help="test command", arguments=args)
    def echo(ns):
        print("hi" * ns.times)
        return 3

    assert run(capsys, "echo-test", "--times", "2")[:2] == (3, "hihi\n")
    with pytest.raises(ValueError, match="registered twice"):
        cli.command("echo-test", help="again")(lambda ns: 0)


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "fabric_engine", "--help"], capture_output=True, text=True,
                         check=True).stdout
    for name in ("generate", "convert", "info"):
        assert name in out
