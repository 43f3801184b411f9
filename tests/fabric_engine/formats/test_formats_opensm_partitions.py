"""partitions.conf reader and writer (issue 9)."""

import pytest

from fabric_engine.errors import FormatError
from fabric_engine.formats.opensm_partitions import parse, write

FULL_SYNTAX = """\
# every form OpenSM documents
Default=0x7fff,ipoib : ALL=limited, SELF=full ;   # default partition
acme=0x0001,ipoib,mtu=4,rate=21,sl=2,defmember=full :
    0xb83fd20300000011,            # full by defmember
    0xb83fd20300000021=limited,
    ALL_SWITCHES=full ;
acme = 0x0001 : 0xb83fd20300000031, 0xb83fd20300000011=limi ;
0x0003 : ALL_CAS=both ;
storage=0x8004,indx0 : NONE ;
noKey : 0xb83fd20300000041=full;
YetAnother = 0x300 : SELF=full ; YetAnother = 0x300 : ALL=limited ;
"""


def test_parses_every_documented_form():
    parts = parse(FULL_SYNTAX)
    by_name = {p.name: p for p in parts}
    assert [p.pkey for p in parts] == [0x7FFF, 0x0001, 0x0003, 0x0004, None, 0x300]
    acme = by_name["acme"]
    assert (acme.ipoib, acme.mtu, acme.rate, acme.sl, acme.defmember, acme.line) == (True, 4, 21, 2, "full", 3)
    members = {m.target: m.membership for m in acme.members}
    # defmember applies to its own statement only; a port listed twice gets both memberships
    assert members == {0xB83FD20300000011: "both", 0xB83FD20300000021: "limited", "ALL_SWITCHES": "full",
                       0xB83FD20300000031: "limited"}
    assert [m.line for m in acme.members] == [4, 5, 6, 7]
    assert by_name[""].members[0].target == "ALL_CAS" and by_name[""].members[0].membership == "both"
    assert by_name["storage"].indx0 and by_name["storage"].members == []  # 0x8004 -> low 15 bits
    assert by_name["noKey"].pkey is None
    assert {m.target: m.membership for m in by_name["YetAnother"].members} == {"SELF": "full", "ALL": "limited"}


@pytest.mark.parametrize("text, line, words", [
    ("a=0x1 : 0x12=ful ;\nb=0x2 : 0xzz ;", 2, "port GUID"),
    ("a=0x1,sl=16 : ALL ;", 1, "sl=16"),
    ("a=0x1,mtu=9 : ALL ;", 1, "mtu=9"),
    ("a=0x1,rate=1 : ALL ;", 1, "rate=1"),
    ("a=0x1,colour=red : ALL ;", 1, "unknown partition flag"),
    ("a=0x1 : 0x1=sometimes ;", 1, "membership"),
    ("\n\na=0x1 ALL ;", 3, "no ':'"),
    ("a=0x8000 : ALL ;", 1, "low 15 bits"),
    ("a=0x1 : ALL\n", 1, "not terminated"),
    ("bad name=0x1 : ALL ;", 1, "blanks"),
])
def test_errors_name_the_line(text, line, words):
    with pytest.raises(FormatError) as info:
        parse(text, "p.conf")
    assert info.value.line == line and words in info.value.message
    assert str(info.value).startswith(f"p.conf:{line}:")


def test_mgid_lines_are_kept_with_their_line():
    parts = parse("Default=0x7fff,ipoib:\n  mgid=ff12:401b::16,sl=1\n  ALL=full;")
    assert parts[0].mgroups == [("mgid=ff12:401b::16,sl=1", 2)]
    assert [(m.target, m.membership) for m in parts[0].members] == [("ALL", "full")]


def test_write_then_parse_round_trips():
    parts = [p for p in parse(FULL_SYNTAX) if p.pkey is not None]
    again = parse(write(parts, header_comment="generated\nby test"))
    assert [(p.name, p.pkey, p.ipoib, p.indx0, p.mtu, p.rate, p.sl) for p in again] == \
        [(p.name, p.pkey, p.ipoib, p.indx0, p.mtu, p.rate, p.sl) for p in parts]
    assert [{m.target: m.membership for m in p.members} for p in again] == \
        [{m.target: m.membership for m in p.members} for p in parts]


def test_write_is_explicit_and_canonical():
    text = write(parse("x=0x0002,defmember=full : 0x22, 0x11=limited, ALL_SWITCHES ;"))
    assert text == ("x=0x0002,defmember=full :\n    ALL_SWITCHES=full,\n    0x0000000000000011=limited,\n"
                    "    0x0000000000000022=full ;\n")
    assert write(parse("e=0x5 : ;")) == "e=0x0005 :\n    NONE ;\n"
