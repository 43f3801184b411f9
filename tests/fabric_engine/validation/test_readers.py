"""Readers of sminfo and smpquery pkeys (issue 38): real ibsim captures, terminal noise, errors naming lines."""

from __future__ import annotations

import pytest

from fabric_engine.errors import FormatError
from fabric_engine.validation.pkeys import read_pkeys
from fabric_engine.validation.sminfo import read_sminfo

from .conftest import DATA


def test_sminfo_of_ibsim_names_the_master():
    cap = read_sminfo((DATA / "ibsim_sminfo.txt").read_text(), "ibsim_sminfo.txt")
    (sm,) = cap.sms
    assert (sm.lid, sm.guid, sm.priority, sm.state_name, sm.master) == (8, 0xB83FD20300000041, 0, "MASTER", True)
    assert not cap.warnings


def test_sminfo_capture_skips_prompts_with_warnings():
    cap = read_sminfo((DATA / "sminfo_two_masters.txt").read_bytes(), "two.txt")
    assert [(s.lid, s.priority, s.state_name) for s in cap.sms] == [(1, 14, "MASTER"), (12, 15, "MASTER"),
                                                                      (40, 1, "STANDBY")]
    assert [w["line"] for w in cap.warnings] == [1, 5] and {w["reason"] for w in cap.warnings} == {"shell prompt"}


def test_sminfo_unknown_state_is_kept_as_a_number():
    cap = read_sminfo("sminfo: sm lid 3 sm guid 0x1, activity count 0 priority 0 state 7 ???\n")
    assert cap.sms[0].state_name == "state 7" and not cap.sms[0].master


@pytest.mark.parametrize(("text", "where", "what"), [
    ("sminfo: sm lid 1 sm guid 0x1, activity count 1 priority 0 state 3 SMINFO_MASTER\nsm lid 2\n", 2,
     "not an sminfo line"),
    ("sminfo: sm lid 0 sm guid 0x1, activity count 1 priority 0 state 3 SMINFO_MASTER\n", 1, "unicast"),
    ("sminfo: sm lid 4 sm guid 0x1, activity count 1 priority 16 state 3 SMINFO_MASTER\n", 1, "priority 16"),
    ("\n", None, "no sminfo line"),
])
def test_sminfo_errors_name_file_and_line(text, where, what):
    with pytest.raises(FormatError) as exc:
        read_sminfo(text, "sm.txt")
    assert exc.value.line == where and what in str(exc.value) and str(exc.value).startswith("sm.txt")


def test_pkeys_of_ibsim_give_each_port_its_table():
    cap = read_pkeys((DATA / "ibsim_pkeys.txt").read_text(), "ibsim_pkeys.txt")
    got = [(t.lid, t.guid, t.port, [hex(k) for k in t.keys], t.capacity) for t in cap.tables]
    assert got == [(5, None, 1, ["0x7fff", "0x8001"], 64), (1, None, 1, ["0xffff"], 64),
                   (6, None, 1, ["0x7fff"], 64), (1, None, 2, ["0xffff"], 64),
                   (None, 0xB83FD20300000031, 1, ["0x7fff"], 64)]
    assert all(w["reason"] == "shell prompt" for w in cap.warnings)


def test_pkeys_command_forms():
    row = "   0: 0xffff 0x8002 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n8 pkeys capacity for this port\n"
    text = ("[root@ufm01 ~]# smpquery -C mlx5_0 -P 1 PKeyTable 0x12 3\n" + row
            + "# /usr/sbin/smpquery --Guid pkeys 0xb83fd20300000011\n" + row)
    a, b = read_pkeys(text).tables
    assert (a.lid, a.port, a.keys) == (0x12, 3, (0xFFFF, 0x8002)) and (b.guid, b.lid, b.port) == (
        0xB83FD20300000011, None, 0)


@pytest.mark.parametrize(("text", "where", "what"), [
    ("   0: 0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n", 1, "before any"),
    ("$ smpquery pkeys 5 1\n   0: 0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n", 1, "cut off"),
    ("$ smpquery pkeys 5 1\n   8: 0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n", 2, "row 8 where"),
    ("$ smpquery pkeys 5 1\n   0: 0xffff 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000\n"
     "16 pkeys capacity for this port\n", 3, "the table is cut"),
    ("$ smpquery pkeys 0 1\n", 1, "unicast"),
    ("$ smpquery -D pkeys 0,1,3 1\n", 1, "directed route"),
    ("$ smpquery pkeys 5 1\n   0: 0xffff 0xzz00\n", 2, "not a line of"),
])
def test_pkeys_errors_name_file_and_line(text, where, what):
    with pytest.raises(FormatError) as exc:
        read_pkeys(text, "pk.txt")
    assert exc.value.line == where and what in str(exc.value)


@pytest.mark.timeout(60)
def test_reader_lines_are_linear_in_their_length():
    """Pumped lines (50,000 repeats at token boundaries) are read or refused quickly: no backtracking."""
    line = "sminfo: sm lid 8 sm guid 0xb83fd20300000041, activity count 159 priority 0 state 3 SMINFO_MASTER"
    row = "   0: 0x7fff 0x8001 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000"
    for base, reader in ((line, read_sminfo), (row, read_pkeys), ("$ smpquery pkeys 5 1", read_pkeys)):
        for i in [j for j, ch in enumerate(base) if ch in " :x,"][:12]:
            for pump in (" ", "0", "-", "a"):
                text = base[:i] + pump * 50_000 + base[i:] + "\n"
                with pytest.raises(FormatError):
                    reader(text)
