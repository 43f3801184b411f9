"""The reader loop ``ibstat`` and ``ibv_devinfo`` share (:mod:`fabric_engine.devices._adapters`): hosts named by
prompts, the open adapter closed by one, values and ports bounded, noise skipped, the rest an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_engine.devices import _adapters, ibstat, ibv_devinfo
from fabric_engine.devices._text import MAX_FIELD_CHARS
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"
IBSTAT = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
DEVINFO = ("hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tvendor_part_id:\t\t\t4129\n\t\tport:\t1\n"
           "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tphys_state:\t\t\tLINK_UP (5)\n")


@pytest.mark.parametrize(("reader", "text"), [(ibstat, IBSTAT), (ibv_devinfo, DEVINFO)])
def test_each_prompt_names_the_host_of_the_ports_after_it(reader, text):
    capture = f"[root@gpu0001 ~]# x\n{text}[root@gpu0002 ~]# x\n{text}{text}"
    warnings: list = []
    types: dict = {}
    ports = reader.read(capture, "c.txt", warnings, types)
    assert [(p.node, p.state, p.phys_state) for p in ports] == [
        ("gpu0001/mlx5_0", "Active", "LinkUp"), ("gpu0002/mlx5_0", "Active", "LinkUp"),
        ("gpu0002/mlx5_0", "Active", "LinkUp")]
    assert types == {"gpu0001/mlx5_0": "MT4129", "gpu0002/mlx5_0": "MT4129"}
    second = 7 if reader is ibstat else 8  # after one run of 5 or 6 lines
    assert [(w["line"], w["reason"]) for w in warnings] == [(1, "shell prompt"), (second, "shell prompt")]


@pytest.mark.parametrize(("reader", "text", "line"), [(ibstat, IBSTAT, 2), (ibv_devinfo, DEVINFO, 2)])
def test_a_value_too_long_names_its_line(reader, text, line):
    long = text.replace("MT4129", "M" * (MAX_FIELD_CHARS + 1)).replace("InfiniBand (0)", "I" * (MAX_FIELD_CHARS + 1))
    with pytest.raises(FormatError, match=rf"^c.txt:{line}: \w[\w ]*: value longer than {MAX_FIELD_CHARS}"):
        reader.read(long, "c.txt")


def test_the_loop_with_a_grammar_of_its_own(monkeypatch):
    """A toy tool: ``dev <name>`` opens an adapter, ``  port <n>`` a port, ``    k: v`` a port field."""

    def line(st: _adapters.Scan, lineno: int, ln: str, s: str) -> bool:
        if s.startswith("dev "):
            st.open(s[4:])
        elif st.adapter is not None and s.startswith("port "):
            st.port(s[5:], lineno)
        elif st.adapter is not None and st.in_port() and ": " in s:
            key, value = s.split(": ", 1)
            st.port_field(key, st.value(key, value, lineno), lineno)
        else:
            return False
        return True

    text = "dev a\n  port 1\n    k: v\n[root@gpu0003 ~]# next\ndev b\n  port 2\n"
    warnings: list = []
    ports = _adapters.scan(text, "t", "toy", warnings, 8, line)
    assert [(n, f) for _, n, _, f in ports] == [("a", {"#": ("1", 2), "k": ("v", 3)}),
                                                   ("gpu0003/b", {"#": ("2", 6)})]
    assert [w["line"] for w in warnings] == [4]
    with pytest.raises(FormatError, match=r"^t:3: more than 1 ports"):
        _adapters.scan("dev a\n port 1\n port 2\n port 3\n", "t", "toy", [], 1, line)
    with pytest.raises(FormatError, match=r"^t:2: not a line of toy output"):
        _adapters.scan("dev a\n  what is this\n", "t", "toy", [], 8, line, indented_inside=True)
