"""perfquery and iblinkinfo as real clusters write them (tests/data/captures/{perfquery,iblinkinfo}).

The fixtures are written from infiniband-diags' print formats (perfquery.c, iblinkinfo.c,
libibmad's field dump: name, dots to column 33, value), with the terminal noise of real
captures: prompts, a PuTTY log banner, standard-error lines, a byte order mark, CR LF.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine import captured
from fabric_engine.errors import FormatError
from fabric_engine.telemetry import COLUMN, fabric_from_linkinfo, parse_iblinkinfo, parse_perfquery, read_discovery
from fabric_engine.telemetry import linkinfo as linkinfo_module
from fabric_engine.telemetry import perfquery as perfquery_module
from fabric_engine.telemetry.perfquery import noise_reason, parse_perfquery_many
from fabric_engine.topology import KIND_HOST, KIND_SWITCH, SPEEDS

CAPTURES = Path(__file__).parents[2] / "data" / "captures"
PQ = CAPTURES / "perfquery"
IB = CAPTURES / "iblinkinfo"
HDR, NDR, EDR, FDR, FDR10, QDR = (SPEEDS.index(s) for s in ("HDR", "NDR", "EDR", "FDR", "FDR10", "QDR"))


def pq(name: str) -> tuple:
    """Samples and warnings of a perfquery capture (read as bytes: CR LF and the byte order mark kept)."""
    warnings: list = []
    samples = parse_perfquery((PQ / name).read_bytes().decode("utf-8"), t=10.0, source=name, warnings=warnings)
    return samples, warnings


def ib(name: str) -> tuple:
    warnings: list = []
    info = parse_iblinkinfo((IB / name).read_bytes().decode("utf-8"), source=name, warnings=warnings)
    assert list(info.warnings) == warnings
    return info, warnings


def value(samples, row: int, name: str) -> int:
    return int(samples.values[row, COLUMN[name]])


def width(samples, row: int, name: str) -> int:
    return int(samples.bits[row, COLUMN[name]])


def lines(warnings: list) -> list[int]:
    return [w["line"] for w in warnings]


def port_row(info, port: int, node: str | None = None) -> int:
    sel = info.port == port
    if node is not None:
        sel &= info.node_name[info.node] == node
    (row,) = np.flatnonzero(sel)
    return int(row)


# ------------------------------------------------------------------------------------------ perfquery
DETAILS = ("PortLocalPhysicalErrors", "PortMalformedPktErrors", "PortBufferOverrunErrors", "PortDLIDMappingErrors",
           "PortVLMappingErrors", "PortLoopingErrors", "PortInactiveDiscards", "PortNeighborMTUDiscards",
           "PortSwLifetimeLimitDiscards", "PortSwHOQLifetimeLimitDiscards")


def details(samples, row: int) -> dict:
    return {name: value(samples, row, name) for name in DETAILS if width(samples, row, name)}


def test_rcv_error_details_of_one_port_are_read_as_16_bit_counters():
    """`perfquery -E 12 1` (issue 22): PortRcvErrorDetails' six counters become the port's detail columns."""
    s, warnings = pq("rcv_error_details.txt")
    assert (s.lid.tolist(), s.port.tolist(), warnings) == ([12], [1], [])
    assert details(s, 0) == {"PortLocalPhysicalErrors": 17, "PortMalformedPktErrors": 0, "PortBufferOverrunErrors": 3,
                             "PortDLIDMappingErrors": 0, "PortVLMappingErrors": 0, "PortLoopingErrors": 0}
    assert {width(s, 0, n) for n in DETAILS[:6]} == {16} and {width(s, 0, n) for n in DETAILS[6:]} == {0}
    assert width(s, 0, "PortRcvErrors") == 0 and width(s, 0, "PortXmitData") == 0


def test_detail_runs_of_several_lids_and_all_ports_with_prompts():
    """A loop of `perfquery -E LID 1`, `-E -a` (port 255) and `-D`, prompts between the runs."""
    s, warnings = pq("E_D_several_lids.txt")
    assert (s.lid.tolist(), s.port.tolist()) == ([12, 14, 17, 21, 12], [1, 1, 1, 255, 1])
    assert lines(warnings) == [1, 29, 39, 47] and {w["reason"] for w in warnings} == {"shell prompt"}
    assert details(s, 1)["PortDLIDMappingErrors"] == 5 and details(s, 1)["PortMalformedPktErrors"] == 2
    assert details(s, 2)["PortLocalPhysicalErrors"] == 65535  # the widest 16-bit value
    assert details(s, 3) == dict(zip(DETAILS[:6], (40, 1, 2, 3, 4, 5), strict=True))
    assert details(s, 4) == dict(zip(DETAILS[6:], (9, 0, 2, 7), strict=True))
    merged = s.merged()  # -E and -D of LID 12 port 1 are one port
    assert (merged.lid.tolist(), merged.port.tolist()) == ([12, 14, 17, 21], [1, 1, 1, 255])
    row = merged.lid.tolist().index(12)
    assert details(merged, row) == {**dict.fromkeys(DETAILS, 0), "PortLocalPhysicalErrors": 17,
                                    "PortBufferOverrunErrors": 3, "PortInactiveDiscards": 9,
                                    "PortSwLifetimeLimitDiscards": 2, "PortSwHOQLifetimeLimitDiscards": 7}


def test_extended_basic_and_detail_reads_of_one_port_merge_into_one_row():
    """`perfquery -x`, `perfquery`, `-E` and `-D` of one port, captured together: one row with every counter."""
    warnings: list = []
    text = (PQ / "x_basic_E_D_one_port.txt").read_text()
    s = parse_perfquery_many([(text, 10.0, "x_basic_E_D_one_port.txt")], warnings=warnings)
    assert (s.lid.tolist(), s.port.tolist(), lines(warnings)) == ([12], [1], [1, 13, 36, 46])
    assert (value(s, 0, "PortXmitData"), width(s, 0, "PortXmitData")) == (98765432109876, 64)
    assert [value(s, 0, n) for n in ("PortRcvErrors", "PortXmitDiscards", "PortXmitWait")] == [21, 9, 774411]
    assert details(s, 0) == {**dict.fromkeys(DETAILS, 0), "PortLocalPhysicalErrors": 17,
                             "PortBufferOverrunErrors": 3, "PortLoopingErrors": 1, "PortInactiveDiscards": 9}


def test_detail_counters_count_as_errors():
    from fabric_engine.telemetry import ERROR_COUNTERS
    assert set(DETAILS) <= set(ERROR_COUNTERS)


@pytest.mark.parametrize(("text", "line", "words"), [
    ("# PortRcvErrorDetails counters: Lid 2 port 3\nPortLoopingErrors:....65536\n", 2, "does not fit in 16 bits"),
    ("# Port counters: Lid 2 port 3\nPortLoopingErrors:....1\n", 2,
     "PortLoopingErrors: not a counter of a PortCounters block"),
    ("# PortRcvErrorDetails counters: Lid 2 port 3\nPortInactiveDiscards:....1\n", 2,
     "PortInactiveDiscards: not a counter of a PortRcvErrorDetails block"),
    ("# PortXmitDiscardDetails counters: Lid 0 port 3\nPortInactiveDiscards:....1\n", 1, "out of range"),
])
def test_misplaced_or_too_wide_detail_counters_name_their_line(text, line, words, monkeypatch):
    for lexer in (perfquery_module._perfquery, None):
        monkeypatch.setattr(perfquery_module, "_perfquery", lexer)
        with pytest.raises(FormatError) as err:
            parse_perfquery(text, 1.0, "pq")
        assert (err.value.line, words in err.value.message) == (line, True), err.value.message
        with pytest.raises(FormatError):
            parse_perfquery_many([(text, 1.0, "pq")])


def test_detail_blocks_between_port_counters_are_read_and_the_others_skipped():
    """-E and -D blocks after a basic block are read into the port; --oprcvcounters, --flowctlcounters and
    --vloppackets blocks are skipped, and nothing of them becomes a counter."""
    s, warnings = pq("basic_and_detail_blocks.txt")
    assert (s.lid.tolist(), s.port.tolist()) == ([12, 12, 12, 12], [1, 1, 1, 2])
    s = s.merged()
    assert (s.lid.tolist(), s.port.tolist()) == ([12, 12], [1, 2])
    expected = {"SymbolErrorCounter": 4, "LinkErrorRecoveryCounter": 1, "PortRcvErrors": 21, "PortXmitDiscards": 9,
                "PortXmitData": 2147483647, "PortRcvData": 1893441122, "PortXmitPkts": 41022311,
                "PortRcvPkts": 39876123, "PortXmitWait": 774411, "LocalLinkIntegrityErrors": 0}
    assert {name: value(s, 0, name) for name in expected} == expected
    assert details(s, 0) == {**dict.fromkeys(DETAILS, 0), "PortLocalPhysicalErrors": 17,
                             "PortBufferOverrunErrors": 3, "PortLoopingErrors": 1, "PortInactiveDiscards": 9}
    assert details(s, 1) == {}
    assert (value(s, 1, "PortXmitData"), value(s, 1, "PortXmitWait"), width(s, 1, "PortXmitWait")) == (1234, 0, 32)
    assert width(s, 0, "PortUnicastXmitPkts") == 0  # nothing of the skipped blocks became a counter
    assert lines(warnings) == [39, 44, 49]
    assert [w["text"].split()[1] for w in warnings] == ["PortOpRcvCounters", "PortFlowCtlCounters", "PortVLOpPackets"]


def test_extended_block_of_capmask2_hardware_reads_64_bit_error_counters():
    """`perfquery -x 5 1` with CapMask2 bit 1: CounterSelect2, the error counters and PortXmitWait, all 64-bit."""
    s, warnings = pq("x_capmask2.txt")
    assert (s.lid.tolist(), s.port.tolist(), warnings) == ([5], [1], [])
    expected = {"SymbolErrorCounter": 70000, "LinkErrorRecoveryCounter": 300, "LinkDownedCounter": 2,
                "PortRcvErrors": 5, "PortXmitDiscards": 65536, "LocalLinkIntegrityErrors": 16,
                "PortXmitWait": 8589934592, "PortXmitData": 98765432109876, "PortMulticastRcvPkts": 890000,
                "QP1Dropped": 0}
    assert {name: value(s, 0, name) for name in expected} == expected
    assert {width(s, 0, name) for name in expected} == {64}


def test_extended_error_counters_win_over_the_basic_read_of_the_same_port():
    basic = ("# Port counters: Lid 5 port 1 (CapMask: 0x5A00)\nSymbolErrorCounter:..............65535\n"
             "PortXmitWait:....................4294967295\n")
    merged = parse_perfquery_many([(basic, 1.0, "basic"), ((PQ / "x_capmask2.txt").read_text(), 2.0, "x")])
    assert len(merged) == 1
    assert (value(merged, 0, "SymbolErrorCounter"), width(merged, 0, "SymbolErrorCounter")) == (70000, 64)
    assert (value(merged, 0, "PortXmitWait"), float(merged.t[0, COLUMN["PortXmitWait"]])) == (8589934592, 2.0)


def test_loop_over_every_port_of_a_switch_with_enhanced_port_0():
    """`perfquery -l 3` of a 36-port switch: ports 0..36, one block each."""
    s, warnings = pq("l_switch_all_ports.txt")
    assert (set(s.lid.tolist()), s.port.tolist(), warnings) == ({3}, list(range(37)), [])
    assert [value(s, p, "PortXmitData") for p in (0, 1, 36)] == [0, 1007, 36007]
    assert [value(s, p, "PortXmitWait") for p in (0, 5, 36)] == [0, 25, 1296]
    assert (value(s, 17, "SymbolErrorCounter"), value(s, 17, "LinkDownedCounter")) == (65535, 3)
    assert width(s, 17, "SymbolErrorCounter") == 16 and width(s, 17, "PortXmitWait") == 32


def test_all_ports_emulated_by_perfquery_after_its_ibwarn():
    """`perfquery -a 5` on an HCA without AllPortSelect: ibwarn on standard error, then the sum as port 255."""
    s, warnings = pq("a_emulated_all_ports.txt")
    assert (s.lid.tolist(), s.port.tolist()) == ([5], [255])
    expected = {"SymbolErrorCounter": 3, "PortRcvErrors": 1, "PortXmitData": 4294967295, "PortRcvData": 3000000000,
                "PortXmitPkts": 81000000, "PortXmitWait": 123456, "QP1Dropped": 2}
    assert {name: value(s, 0, name) for name in expected} == expected
    assert lines(warnings) == [1] and warnings[0]["reason"] == "tool diagnostic (stderr)"
    assert warnings[0]["text"] == "ibwarn: [48213] main: Emulating AllPortSelect by iterating through all ports"


def test_extended_all_ports_aggregate_is_port_255():
    s, warnings = pq("x_a_all_ports.txt")
    assert (s.lid.tolist(), s.port.tolist(), warnings) == ([5], [255], [])
    assert (value(s, 0, "SymbolErrorCounter"), width(s, 0, "SymbolErrorCounter")) == (70003, 64)
    assert value(s, 0, "PortXmitData") == 197530864219752


def test_xmit_wait_is_not_read_where_capmask_says_the_port_has_none():
    """CapMask without bit 12: perfquery prints PortXmitWait as 0 without reading it, so it is not a value."""
    s, warnings = pq("basic_no_xmit_wait.txt")
    assert (s.lid.tolist(), s.port.tolist(), warnings) == ([9], [1], [])
    assert (value(s, 0, "PortXmitWait"), width(s, 0, "PortXmitWait"), float(s.t[0, COLUMN["PortXmitWait"]])) == \
        (0, 0, 0.0)
    assert (value(s, 0, "PortXmitData"), width(s, 0, "PortXmitData")) == (555, 32)
    merged = parse_perfquery_many([((PQ / "basic_no_xmit_wait.txt").read_text(), 1.0, "b")])
    assert width(merged, 0, "PortXmitWait") == 0 and width(merged, 0, "PortXmitData") == 32


def test_putty_session_log_with_crlf_banner_and_prompts():
    """A PuTTY log: banner, `[root@ufm01 ~]# perfquery -x ...` twice, a prompt with no newline at the end."""
    s, warnings = pq("putty_session.log")
    assert (s.lid.tolist(), s.port.tolist()) == ([5, 7], [1, 1])
    assert (value(s, 0, "PortXmitData"), value(s, 0, "PortUnicastRcvPkts")) == (31337, 12)
    assert (value(s, 1, "PortXmitData"), width(s, 1, "PortXmitData")) == (42000000000, 64)
    assert width(s, 1, "PortUnicastXmitPkts") == 64 and width(s, 0, "SymbolErrorCounter") == 0
    assert lines(warnings) == [1, 2, 14, 26]
    assert [w["reason"] for w in warnings] == ["terminal logger banner"] + ["shell prompt"] * 3
    assert warnings[1]["text"] == "[root@ufm01 ~]# perfquery -x 5 1" and warnings[3]["text"] == "[root@ufm01 ~]#"


def test_byte_order_mark_crlf_and_a_user_prompt():
    s, warnings = pq("bom_crlf_prompt.txt")
    assert (s.lid.tolist(), s.port.tolist()) == ([14], [1])
    assert (value(s, 0, "PortXmitData"), value(s, 0, "PortRcvData"), value(s, 0, "PortXmitWait")) == (808, 909, 77)
    source = "bom_crlf_prompt.txt"
    assert warnings == [
        {"line": 1, "text": "", "reason": "UTF-8 byte-order mark removed", "source": source},
        {"line": 1, "text": "user@login01:~$ perfquery 14 1", "reason": "shell prompt", "source": source}]


def test_loop_cut_short_by_a_timeout_keeps_the_ports_read_before_it():
    """`perfquery -l 12 1-4`, port 3 timed out: ibwarn lines and perfquery's iberror exit after ports 1 and 2."""
    s, warnings = pq("l_timeout_stderr.txt")
    assert (s.port.tolist(), [value(s, r, "PortXmitData") for r in (0, 1)]) == ([1, 2], [100, 200])
    assert lines(warnings) == [45, 46, 47]
    assert [w["reason"] for w in warnings] == ["tool diagnostic (stderr)"] * 2 + [
        "tool error message: the output stops there"]


@pytest.mark.parametrize("name", sorted(p.name for p in PQ.iterdir() if not p.name.startswith("broken")))
def test_compiled_lexer_and_regular_expressions_read_captures_alike(name, monkeypatch):
    """Both readers (C lexer, Python regular expressions) give the same samples and warnings."""
    def run():
        s, warnings = pq(name)
        return s.lid.tolist(), s.port.tolist(), s.values.tolist(), s.bits.tolist(), s.t.tolist(), warnings

    first = run()
    monkeypatch.setattr(perfquery_module, "_perfquery", None)
    assert run() == first


def test_many_outputs_collect_the_warnings_of_each():
    outputs = [((PQ / name).read_bytes().decode(), 1.0, name) for name in ("putty_session.log",
                                                                         "basic_and_detail_blocks.txt")]
    warnings: list = []
    merged = parse_perfquery_many(outputs, warnings=warnings)
    assert sorted(zip(merged.lid.tolist(), merged.port.tolist(), strict=True)) == [(5, 1), (7, 1), (12, 1), (12, 2)]
    assert [(w["source"], w["line"]) for w in warnings] == [("putty_session.log", n) for n in (1, 2, 14, 26)] + [
        ("basic_and_detail_blocks.txt", n) for n in (39, 44, 49)]


@pytest.mark.parametrize(("line", "reason"), [
    ("Script started on 2026-01-10 10:00:00+00:00 [TERM=\"xterm\" TTY=\"/dev/pts/0\"]", "terminal logger banner"),
    ("$ perfquery -x 5 1", "shell prompt"),
    ("root@ufm01# iblinkinfo -l", "shell prompt"),
    ("(base) [hpc@login-02 work]$ perfquery -a 5", "shell prompt"),
    ("ibpanic: [3301] main: can't open UMAD port (mlx5_0:1): No such device", "tool diagnostic (stderr)"),
    ("Failed to find port: 0xb8599f0300a1b2c0", "tool diagnostic (stderr)"),
    ("iblinkinfo: iberror: failed: discover failed", "tool error message: the output stops there"),
    ("ibwarn: something odd", None),
    ("PortXmitData:....................123", None),
    ("           2    1[  ] ==( 4X  2.5 Gbps Active/  LinkUp)==>  1  1[  ] \"h\" ( )", None),
    ("# Port counters: Lid 2 port 3", None),
])
def test_noise_lines_and_their_reasons(line, reason):
    assert noise_reason(line) == reason


def test_escape_sequences_of_a_coloured_prompt_and_long_lines():
    title = "\x1b]0;root@ufm01:~\x07\x1b[01;32m[root@ufm01 ~]#\x1b[00m perfquery 2 3"
    assert noise_reason(title) == "shell prompt"
    long_warning = "ibwarn: [7] mad_rpc: " + "x" * 300
    warnings: list = []
    s = parse_perfquery(f"{title}\n# Port counters: Lid 2 port 3\nPortXmitData:....7\n{long_warning}\n", 1.0,
                        "pq", warnings)
    assert (value(s, 0, "PortXmitData"), lines(warnings)) == (7, [1, 4])
    assert warnings[1]["text"] == long_warning[:119] + "…" and len(warnings[1]["text"]) == 120


def test_port_counters_not_addressed_by_a_lid_alone_are_skipped():
    text = ("# Port counters: Lid 5 Gid fe80::2c9:300:ab:cd01 port 1 (CapMask: 0x5A00)\nPortXmitData:.....9\n"
            "# Port counters: Lid 6 port 1 (CapMask: 0x5A00)\nPortXmitData:.....8\n")
    warnings: list = []
    s = parse_perfquery(text, 1.0, "pq", warnings)
    assert (s.lid.tolist(), value(s, 0, "PortXmitData"), lines(warnings)) == ([6], 8, [1])
    assert "not addressed as 'Lid N port P'" in warnings[0]["reason"]


@pytest.mark.parametrize(("name", "line", "words"), [
    ("broken_cut_line.txt", 7, "not a perfquery counter line: 'PortRcvPk'"),
    ("broken_inside_skipped_block.txt", 4, "not a perfquery counter line: 'PortBufferOverrunErrors 3'"),
    ("broken_detail_value.txt", 6, "PortBufferOverrunErrors: '3O' is not a non-negative integer"),
    ("broken_counter_of_another_block.txt", 5, "PortXmitDiscards: not a counter of a PortXmitDiscardDetails block"),
])
def test_a_broken_line_inside_a_block_is_still_an_error(name, line, words):
    with pytest.raises(FormatError) as err:
        pq(name)
    assert (err.value.source, err.value.line) == (name, line) and words in err.value.message


@pytest.mark.parametrize(("text", "line", "words"), [
    ("[root@ufm01 ~]# perfquery 2 3\n# Port counters: Lid 2 port 3\nPortXmitData:....12x\n", 3,
     "not a non-negative integer"),
    ("user@host:~$ perfquery 2 3\nPortXmitData:.......5\n", 2, "before any"),
    ("=~=~=~=~=~=~=~=~=~=~=~= PuTTY log 2026.01.10 10:00:00 =~=~=~=~=~=~=~=~=~=~=~=\r\n"
     "# Port counters: Lid 2 port 3\r\nSymbolErrorCounter:....70000\r\n", 3, "does not fit in 16 bits"),
    ("# Port counters: Lid 2 port 3\nPortXmitData:....1\nibwarn: something odd\n", 3, "not a perfquery"),
    ("# Port counters: Lid 2 port 3\nPortXmitData:....1\nroot@ufm01 ~# perfquery\n", 3, "not a perfquery"),
    ("# PortRcvErrorDetails counters: Lid 2 port 3\nPortLoopingErrors:....1\n\nsome text\n", 4, "not a perfquery"),
])
def test_noise_does_not_hide_broken_records(text, line, words, monkeypatch):
    for lexer in (perfquery_module._perfquery, None):
        monkeypatch.setattr(perfquery_module, "_perfquery", lexer)
        with pytest.raises(FormatError) as err:
            parse_perfquery(text, t=0.0, source="pq.txt")
        assert (err.value.source, err.value.line) == ("pq.txt", line) and words in err.value.message


# ------------------------------------------------------------------------------------------ iblinkinfo
def test_one_hdr_switch_with_down_disabled_hints_and_an_unknown_speed():
    """`iblinkinfo -S GUID` of a 40-port HDR switch."""
    info, warnings = ib("switch_S_hdr.txt")
    assert (info.node_kind.tolist(), info.node_name.tolist()) == ([KIND_SWITCH], ["MF0;ib-leaf07:MQM8700/U1"])
    assert int(info.node_guid[0]) == 0xB8599F0300A1B2C0 and info.port.tolist() == list(range(1, 41))
    assert set(info.lid.tolist()) == {23}

    def link(port):
        r = port_row(info, port)
        return (int(info.width[r]), int(info.speed[r]), info.state[r], info.phys[r], int(info.remote_lid[r]),
                int(info.remote_port[r]), info.remote_name[r])

    assert link(1) == (4, HDR, "Active", "LinkUp", 101, 1, "gpu0001 mlx5_0")
    assert link(17) == (4, EDR, "Active", "LinkUp", 117, 1, "gpu0017 mlx5_0")  # ( Could be 53.125 Gbps)
    assert link(18) == (2, HDR, "Active", "LinkUp", 118, 1, "gpu0018 mlx5_0")  # (Could be 4X )
    assert link(19) == (0, -1, "Down", "Polling", 0, 0, "")
    assert link(20) == (0, -1, "Down", "Disabled", 0, 0, "")
    assert link(21) == (4, -1, "Active", "LinkUp", 121, 1, "gpu0021 mlx5_0")
    assert link(23) == (4, HDR, "Active", "LinkUp", 1, 22, "MF0;ib-spine01:MQM8700/U1")
    assert link(40) == (0, -1, "Down", "Polling", 0, 0, "")
    assert lines(warnings) == [22] and "'undefined (64)'" in warnings[0]["reason"]
    assert int(info.up.sum()) == 34  # ports 1-18, 21, 22-36


def test_line_mode_ndr_fabric_builds_the_same_cables():
    """`iblinkinfo -l`: no headers; switches share one GUID over their ports; a dual-port CA stays one node."""
    info, warnings = ib("line_mode_ndr.txt")
    assert warnings == []
    assert info.node_name.tolist() == ["leaf01", "spine01", "gpu0001 mlx5_0", "gpu0002 mlx5_0", "stor01 HCA-1"]
    assert info.node_kind.tolist() == [KIND_SWITCH] * 2 + [KIND_HOST] * 3
    assert [hex(int(g)) for g in info.node_guid] == ["0xfc6a1c0300e3f100", "0xfc6a1c0300e3f200",
                                                     "0x946dae0300f00001", "0x946dae0300f00002", "0x946dae0300f00031"]
    stor = np.flatnonzero(info.node_name[info.node] == "stor01 HCA-1")
    assert info.port[stor].tolist() == [1, 2] and info.lid[stor].tolist() == [13, 14]
    assert [hex(int(g)) for g in info.port_guid[stor]] == ["0x946dae0300f00031", "0x946dae0300f00032"]
    assert int(info.port_guid[port_row(info, 3, "leaf01")]) == 0  # switch ports: 0, as in the grouped form
    r = port_row(info, 1, "gpu0002 mlx5_0")
    assert (int(info.width[r]), int(info.speed[r]), int(info.remote_lid[r]), int(info.remote_port[r])) == (2, NDR, 1, 2)
    r = port_row(info, 7, "leaf01")
    assert (info.state[r], info.phys[r], int(info.speed[r])) == ("Down", "Polling", -1)
    assert info.phys[port_row(info, 3, "spine01")] == "Disabled"
    f = fabric_from_linkinfo(info, "ndr")
    assert (f.num_hosts, f.num_switches, f.num_links) == (3, 2, 6)
    assert set(f.speed.tolist()) == {NDR} and sorted(f.width.tolist()) == [2, 4, 4, 4, 4, 4]
    stor = f.node("stor01 HCA-1")
    assert int(f.nports[stor]) == 2 and int(f.lid[stor]) == 13
    d = f.out_link(f.node("leaf01"), 5)
    assert f.node_name[f.dl_dst[d]] == "spine01" and int(f.dl_dst_port[d]) == 1


def test_hdr_port_trained_down_to_sdr_and_hosts_sharing_a_factory_description():
    """iblinkinfo of an HDR switch: one HCA up at 2.5 Gbps (SDR) with the `( Could be 53.125 Gbps)` hint, three
    hosts still called `ubuntu mlx5_0` (issue 22): display names unique by GUID, NodeDescriptions kept."""
    info, warnings = ib("sdr_trained_down.txt")
    assert warnings == [] and info.node_kind.tolist() == [KIND_SWITCH] + [KIND_HOST] * 4
    r = port_row(info, 4, "MF0;lab-sw1:MQM8700/U1")
    assert (int(info.width[r]), int(info.speed[r]), int(info.remote_lid[r])) == (4, SPEEDS.index("SDR"), 34)
    assert int(info.speed[port_row(info, 1, "MF0;lab-sw1:MQM8700/U1")]) == HDR
    f = fabric_from_linkinfo(info, "lab")
    assert (f.num_switches, f.num_hosts, f.num_links) == (1, 4, 4)
    names = f.node_name.tolist()
    assert len(set(names)) == len(names)
    assert sorted(n for n in names if n.startswith("ubuntu")) == [
        f"ubuntu mlx5_0 0x{0x0C42A10300E00001 + 0x100 * i:016x}" for i in range(3)]
    assert sorted(f.meta["node_desc"].values()) == ["ubuntu mlx5_0"] * 3
    gpu04 = f.node("gpu04 mlx5_0")
    d = f.out_link(gpu04, 1)
    assert SPEEDS[f.speed[d % f.num_links]] == "SDR" and sorted(SPEEDS[s] for s in f.speed) == ["HDR"] * 3 + ["SDR"]


def test_putty_session_with_stderr_fdr10_switch_settings_and_a_port_not_available():
    """PuTTY log of `iblinkinfo -p`: banner, prompt, libibnetdisc and ibwarn lines, a last prompt without newline."""
    info, warnings = ib("putty_session.log")
    assert info.node_name.tolist() == ["SwitchX -  Mellanox Technologies", "node01 HCA-1", "node02 HCA-1"]
    sw = "SwitchX -  Mellanox Technologies"
    speeds = [int(info.speed[port_row(info, p, sw)]) for p in (1, 2, 3, 4)]
    assert speeds == [FDR10, QDR, FDR, -1]
    r = port_row(info, 3, sw)
    assert (info.state[r], info.phys[r], int(info.remote_lid[r]), bool(info.up[r])) == ("Active", "LinkUp", 0, False)
    assert int(info.speed[port_row(info, 1, "node01 HCA-1")]) == FDR10
    assert int(info.port_guid[port_row(info, 1, "node02 HCA-1")]) == 0x0002C90300ABCD11
    assert lines(warnings) == [1, 2, 3, 4, 8, 14]
    assert [w["reason"] for w in warnings[:4]] == ["terminal logger banner", "shell prompt",
                                                   "tool diagnostic (stderr)", "tool diagnostic (stderr)"]
    assert "Port not available" in warnings[4]["reason"] and warnings[5]["text"] == "user@login01:~$"
    assert warnings[2]["text"] == ("src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,3) bad status 110; "
                                   "Connection timed out")
    f = fabric_from_linkinfo(info)
    assert (f.num_hosts, f.num_switches, f.num_links) == (2, 1, 2)
    assert sorted(f.speed.tolist()) == [QDR, FDR10]


def test_byte_order_mark_crlf_and_root_prompts_around_one_switch():
    info, warnings = ib("bom_crlf_prompts.txt")
    assert info.node_name.tolist() == ["spine01"] and info.port.tolist() == [1, 2, 3]
    assert info.state.tolist() == ["Active", "Armed", "Down"] and info.phys.tolist() == ["LinkUp"] * 2 + ["Disabled"]
    assert info.speed.tolist() == [NDR, NDR, -1] and info.line.tolist() == [3, 4, 5]
    source = "bom_crlf_prompts.txt"
    assert warnings == [
        {"line": 1, "text": "", "reason": "UTF-8 byte-order mark removed", "source": source},
        {"line": 1, "text": "[root@ufm01 ~]# iblinkinfo -S 0xfc6a1c0300e3f200", "reason": "shell prompt",
         "source": source},
        {"line": 6, "text": "[root@ufm01 ~]#", "reason": "shell prompt", "source": source}]


def test_read_discovery_passes_the_warnings_on():
    warnings: list = []
    f = read_discovery((IB / "putty_session.log").read_text(), source="push", warnings=warnings)
    assert f.num_links == 2 and lines(warnings) == [1, 2, 3, 4, 8, 14] and {w["source"] for w in warnings} == {"push"}


def test_a_line_cut_inside_a_switch_is_an_error_naming_it():
    with pytest.raises(FormatError) as err:
        ib("broken_cut_line.txt")
    assert (err.value.source, err.value.line) == ("broken_cut_line.txt", 4)
    assert "not an iblinkinfo line" in err.value.message


LINE_MODE = ('0xfc6a1c0300e3f100 "                        leaf01"      1    1[  ] ==( 4X        106.25 Gbps '
             'Active/  LinkUp)==>  0x946dae0300f00001     11    1[  ] "gpu0001 mlx5_0" ( )')


@pytest.mark.parametrize(("text", "line", "words"), [
    ("Switch: 0x01 sw:\n" + LINE_MODE + "\n", 2, "line-mode (-l) port line in output with node headers"),
    (LINE_MODE + "\nSwitch: 0x01 sw:\n", 2, "node header in line-mode (-l) output"),
    ('user@host:~$ iblinkinfo\nSwitch: 0x01 sw:\n           1    1[  ] ==( 4X  7.7 Gbps Active/  LinkUp)==>  2  1[  ]'
     ' "h" ( )\n', 3, "unknown lane speed 7.7 Gbps"),
    ("Switch: 0x01 sw:\nibwarn: mad_rpc failed\n", 2, "not an iblinkinfo line"),
    ('0x0 "  x"      1    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )\n', 1, "GUID 0x0"),
    ('0x01 "   "      1    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )\n', 1, "node name"),
])
def test_broken_iblinkinfo_lines_name_the_line(text, line, words):
    with pytest.raises(FormatError) as err:
        parse_iblinkinfo(text, source="lab")
    assert (err.value.source, err.value.line) == ("lab", line) and words in err.value.message


# ------------------------------------------------------------------------------------------ linear patterns
_NOISE_LINES = ("=~=~=~=~=~=~=~=~=~=~=~= PuTTY log 2026.01.10 10:00:00 =~=~=~=~=~=~=~=~=~=~=~=",
                "(base) [root@ufm01 ~]# perfquery -x 5 1", "user@host:~$ iblinkinfo",
                "ibwarn: [12345] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1,3)",
                "src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,3) bad status 110; Connection timed out",
                "Failed to find port: 0x1234", "perfquery: iberror: failed: perfquery")
_PATTERNS = [
    ("line-mode port", linkinfo_module._LINE_PORT, "match", LINE_MODE),
    ("port not available", linkinfo_module._PORT, "match",
     '           4    3[  ] ==( 4X  10.0 Gbps (FDR10) Active/  LinkUp) (HOQ:18 VL_Stall:7)==>'
     '      "Port not available"'),
    ("undefined width and speed", linkinfo_module._PORT, "match",
     '          23   21[  ] ==(undefined (3)     undefined (64) Active/  LinkUp)==>     121    1[  ] "gpu0021 mlx5_0"'
     ' ( Could be FDR10 (Found link at QDR))'),
    ("other counter set header", perfquery_module._OTHER_HEADER, "fullmatch",
     "# PortXmitDiscardDetails counters: Lid 12 port 1"),
    *[(f"noise {i}", pattern, "fullmatch", line)
      for i, ((pattern, _), line) in enumerate(zip(captured._NOISE, _NOISE_LINES, strict=True))],
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("name", "pattern", "how", "line"), _PATTERNS, ids=[c[0] for c in _PATTERNS])
def test_new_line_patterns_are_linear(name, pattern, how, line):
    """The new patterns, pumped as in test_linear_regexes: a quadratic one needs minutes, past the timeout."""
    from tests.fabric_engine.test_linear_regexes import pumped

    apply = getattr(pattern, how)
    assert apply(line), f"{name}: the real line must match, or the pumps test nothing"
    for text in pumped(line):
        apply(text)


# ------------------------------------------------------------------ issue 34: a terminal session of several tools
def test_iblinkinfo_S_after_ibstat_sminfo_ibswitches_and_ibhosts_skips_each_tool_with_one_warning():
    info, warnings = ib("session_several_tools.txt")
    assert info.node_name.tolist() == ["Quantum Mellanox Technologies"] and info.port.tolist() == list(range(1, 42))
    assert int(info.up.sum()) == 18 and info.line.tolist() == list(range(30, 71))
    tools = [(w["line"], w["reason"]) for w in warnings if "shell prompt" not in w["reason"]]
    assert tools == [(2, "ibstat output skipped (lines 2-18)"), (20, "sminfo output skipped (line 20)"),
                     (22, "ibswitches output skipped (lines 22-24)"), (26, "ibhosts output skipped (lines 26-27)"),
                     (72, "ibnetdiscover -p output skipped (lines 72-73)"),
                     (75, "ibstatus output skipped (lines 75-82)")]
    assert lines([w for w in warnings if w["reason"] == "shell prompt"]) == [1, 19, 21, 25, 28, 71, 74, 84]
    assert lines(warnings) == sorted(lines(warnings))
    assert warnings[1]["text"] == "CA 'mlx5_0'" and {w["source"] for w in warnings} == {"session_several_tools.txt"}


def test_another_tools_line_inside_a_node_is_an_error_naming_it():
    text = (IB / "session_several_tools.txt").read_text().splitlines()
    text.insert(40, 'Switch\t: 0x08c0eb0300add06e ports 41 "Quantum Mellanox Technologies" base port 0 lid 11 lmc 0')
    with pytest.raises(FormatError) as err:
        parse_iblinkinfo("\n".join(text), source="s")
    assert err.value.line == 41 and "ibswitches output inside a node's port lines" in err.value.message
    # An ibstat field line outside an ibstat block is no tool's line.
    with pytest.raises(FormatError, match="not an iblinkinfo line"):
        parse_iblinkinfo("\tState: Active\n", source="s")


def test_perfquery_reads_a_session_of_several_tools_alike():
    text = ("[root@mgmt ~]# ibswitches\n"
            'Switch\t: 0x08c0eb0300add04e ports 41 "Quantum Mellanox Technologies" base port 0 lid 10 lmc 0\n'
            "[root@mgmt ~]# sminfo\n"
            "sminfo: sm lid 1 sm guid 0x08c0eb0300f1e2a0, activity count 228810 priority 15 state 3 SMINFO_MASTER\n"
            "[root@mgmt ~]# perfquery 10 1\n"
            + (PQ / "basic_no_xmit_wait.txt").read_text())
    warnings: list = []
    samples = parse_perfquery(text, t=1.0, source="s", warnings=warnings)
    assert len(samples.lid) >= 1 and int(samples.lid[0]) > 0
    assert [(w["line"], w["reason"]) for w in warnings if "output" in w["reason"]] == [
        (2, "ibswitches output skipped (line 2)"), (4, "sminfo output skipped (line 4)")]
    inside = text.replace("[root@mgmt ~]# perfquery 10 1\n", "")
    inside = inside.splitlines()
    inside.insert(6, "sminfo: sm lid 1 sm guid 0x08c0eb0300f1e2a0, activity count 1 priority 15 state 3 SMINFO_MASTER")
    with pytest.raises(FormatError, match="sminfo output inside a counter block") as err:
        parse_perfquery("\n".join(inside), t=1.0, source="s")
    assert err.value.line == 7
