"""Issue 14: every line pattern of the readers matches in time linear in the line (no catastrophic backtracking).

Each pattern is tried on "pumped" forms of a real line: at every token boundary a run
of 50,000 copies of one character (or of the next two or three characters of the
line) is inserted, followed by the rest of the line, by a character nothing accepts,
or by a blank and such a character -- the shapes that make an ambiguous repetition
backtrack. A linear pattern gets through them all in about a second; one that
backtracks quadratically needs minutes for a single line, so the per-test timeout
(far above the linear time) is a hang detector, not a speed target.
"""

from __future__ import annotations

import re

import pytest

from fabric_engine import formats
from fabric_engine.formats import (
    _common,
    ibnetdiscover_ports,
    netfile,
    node_name_map,
    opensm_partitions,
    opensm_qos,
)
from fabric_engine.telemetry import linkinfo, perfquery

RUN = 50_000
PUMPS = ' ."(:/0a'

IBLINK_PORT = ('      0xb83fd20300000081     14    1[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>       5    2[  ]'
               ' "leaf04" (Could be 12X Could be 10.0 Gbps)')
IBND_PORT = '[1](b83fd20300000011) \t"S-98039b0300000001"[1]\t\t# lid 49 lmc 0 "leaf01" lid 1 4xNDR'
IBND_HDR = 'Switch\t64 "S-98039b0300000001"\t\t# "leaf01" enhanced port 0 lid 1 lmc 0'
NET_PORT = '[3] "spine01"[1] w=0x2 s=0x1 e=0x8 # "spine01" lid 17 4xHDR'
IBDIAG_PORT = '[1](1/1/1)\t"H-0c42a10300000010"[1](c42a10300000011)\t\t# "dgx01 mlx5_0" lid 10 4xNDR'
GROUP_PORT = '[11][ext 11]\t"H-0c42a10300001001"[1] (c42a10300001002) \t\t# "node01 HCA-1" lid 30 4x???'
PORTS_P = ("CA   134  1 0xb83fd20300000011 4x EDR - SW  1719 10 0x7cfe900300a5a2c0 "
           "( 'node01 HCA-1' - 'leaf-01' )")

# (name, pattern, how it is applied, a real line)
CASES = [
    ("linkinfo port", linkinfo._PORT, "match", IBLINK_PORT),
    ("linkinfo node", linkinfo._NODE, "match", "Switch: 0x98039b0300000005 spine01:"),
    ("perfquery line", perfquery._LINE, "findall", "PortXmitData:....................12345"),
    ("perfquery header", perfquery._LINE, "findall", "# Port extended counters: Lid 2 port 3 (CapMask: 0x1300)"),
    ("perfquery field", perfquery._FIELD, "match", "PortXmitData:....................12345"),
    ("perfquery header only", perfquery._HEADER, "search", "# Port counters: Lid 2 port 3 (CapMask: 0x1300)"),
    ("netfile header", netfile._HDR, "match", IBND_HDR),
    ("netfile port", netfile._PORT, "match", IBND_PORT),
    ("netfile ibsim port", netfile._PORT, "match", NET_PORT),
    ("netfile link", netfile._LINK, "search", IBND_PORT),
    ("netfile lid", netfile._LID, "search", IBND_PORT),
    ("netfile options", netfile._OPT, "findall", NET_PORT),
    ("netfile description", netfile._HDR_DESC, "match", '\t\t# "leaf01" enhanced port 0 lid 1 lmc 0'),
    ("netfile guid line", netfile._GUIDLINE, "match", "switchguid=0x98039b0300000001(98039b0300000001)"),
    ("netfile default", netfile._DEFAULT, "match", "width = 0x3"),
    ("netfile ibdiagnet port", netfile._PORT, "match", IBDIAG_PORT),
    ("netfile grouped port", netfile._PORT, "match", GROUP_PORT),
    ("netfile unknown rate", netfile._LINK, "search", GROUP_PORT),
    ("netfile port label", netfile._LABEL, "findall", "(1/1/1)(c42a10300000011)"),
    ("netfile director guid", netfile._GUIDLINE, "match", "switchguid=0x2c90300c0ffee(2c90300c00001)"),
    ("netfile grouping", netfile._GROUPING, "match", "Chassis 1 (guid 0x2c90300c0ffee)"),
    ("netfile sysimgguid", netfile._SYSIMG, "match", "sysimgguid=0x0002c90300c0ffee\t\t# Chassis 1 (cs7500-01)"),
    ("ports -p line", ibnetdiscover_ports._LINE, "match", PORTS_P),
    ("ports -p detect", ibnetdiscover_ports._DETECT, "search", PORTS_P),
    ("node name map line", node_name_map._LINE, "match", '0x0002c90300a1b2c4 "leaf01" # row 3'),
    ("detect ibnetdiscover", formats._IBND, "search", IBND_HDR),
    ("detect net file", formats._NET, "search", 'Hca\t1 "gpu0001"\t\t# "gpu0001 HCA-1"'),
    ("host description suffix", _common.HCA_SUFFIX, "search", "gpu0001 mlx5_0"),
    *[(f"role {role}", re.compile(rx, re.I), "search", line)
      for (role, rx), line in zip(_common.ROLE_PATTERNS, ("lustre-oss01", "ufm01 Aggregation Node"), strict=True)],
    ("partition name", opensm_partitions._NAME_RE, "match", "acme-prod.storage_1"),
    ("qos option", opensm_qos._OPT_RE, "match", "qos_ca_vlarb_high"),
]


def _kind(c: str) -> tuple[bool, bool]:
    return c.isalnum(), c.isspace()


def pumped(line: str, run: int = RUN):
    """Every pumped form of ``line`` (see the module docstring)."""
    cuts = [i for i in range(len(line) + 1)
            if i in (0, len(line)) or _kind(line[i - 1]) != _kind(line[i]) or not line[i].isalnum()]
    for i in cuts:
        for c in PUMPS:
            for tail in (line[i:], "\x01", " \x01"):
                yield line[:i] + c * run + tail
        for k in (2, 3):
            if i + k <= len(line):
                yield line[:i] + line[i:i + k] * (run // k) + "\x01"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("name", "pattern", "how", "line"), CASES, ids=[c[0] for c in CASES])
def test_pattern_is_linear_on_pumped_lines(name, pattern, how, line):
    apply = getattr(pattern, how)
    assert apply(line), f"{name}: the real line must match, or the pumps test nothing"
    count = 0
    for text in pumped(line):
        apply(text)
        count += 1
    assert count > 20
