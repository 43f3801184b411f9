"""perfquery's congestion control blocks (``--rcvcc``, ``--slrcvfecn``, ``--slrcvbecn``, ``--xmitcc``,
``--swportvlcong``, ``--vlxmittimecc``), read by :mod:`fabric_engine.telemetry.perfquery_cc` (issue 41).

The fixtures (``fixtures/cc_*.txt``) are written from rdma-core's printing code: ``common_func`` of
``infiniband-diags/perfquery.c`` (``# <attribute> counters: Lid N port P``), libibmad's ``dump.c``
(``PortSelect``, ``CounterSelect``, then the attribute's fields) and ``fields.c`` (names, widths; name, dots to
column 33, value).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.telemetry import perfquery_cc as pcc
from fabric_engine.telemetry.perfquery import parse_perfquery, parse_perfquery_many
from fabric_engine.telemetry.perfquery_cc import CC_ATTRIBUTES, CC_COLUMN, CC_COLUMNS, CCSamples, parse_perfquery_cc

FIX = Path(__file__).parent / "fixtures"
PQ = Path(__file__).parents[2] / "data" / "captures" / "perfquery"


def text(name: str) -> str:
    return (FIX / name).read_bytes().decode("utf-8")  # CR LF kept


def field(name: str, value) -> str:
    return f"{name}:{'.' * (32 - len(name))}{value}\n"


def block(attr: str, lid: int, port: int, *fields: tuple[str, object]) -> str:
    return (f"# {attr} counters: Lid {lid} port {port}\n" + field("PortSelect", port)
            + field("CounterSelect", "0x0000") + "".join(field(n, v) for n, v in fields))


def test_columns_are_libibmad_names_and_widths():
    assert CC_ATTRIBUTES["PortRcvConCtrl"] == (("PortPktRcvFECN", "PortPktRcvBECN"), 32)
    assert CC_ATTRIBUTES["SwPortVLCongestion"][1] == 16 and len(CC_ATTRIBUTES["SwPortVLCongestion"][0]) == 16
    assert CC_ATTRIBUTES["PortVLXmitTimeCong"][0][-1] == "PortVLXmitTimeCong14"  # fields.c stops at VL 14
    assert len(CC_COLUMNS) == 2 + 16 + 16 + 1 + 16 + 15 == len(set(CC_COLUMNS))


def test_several_ports_one_block_per_run():
    warnings: list = []
    s = parse_perfquery_cc(text("cc_several_ports.txt"), t=5.0, source="cc", warnings=warnings)
    assert warnings == []
    assert s.lid.tolist() == [12, 12, 12, 7, 12, 12, 12] and s.port.tolist() == [1, 2, 5, 1, 1, 1, 2]
    assert s.fecn[:4].tolist() == [1234, 0, 4294967295, 9] and s.becn[:4].tolist() == [5, 0, 77, 0]
    assert np.isnan(s.fecn[4:]).all()  # the per-SL and PortXmitConCtrl blocks do not read PortPktRcvFECN
    m = s.merged()
    assert list(zip(m.lid.tolist(), m.port.tolist(), strict=True)) == [(7, 1), (12, 1), (12, 2), (12, 5)]
    p1 = 1
    assert m.fecn[p1] == 1234 and m.becn[p1] == 5
    assert m.sl_fecn[p1, [0, 3]].tolist() == [1200, 34] and m.sl_fecn[p1].sum() == 1234
    assert m.sl_becn[p1, 0] == 5 and m.sl_becn.shape == (4, 16)
    assert m.xmit_time_cong[2] == 8800 and np.isnan(m.xmit_time_cong[p1])
    assert (m.t == 5.0).all()
    assert m.bits[p1, CC_COLUMN["PortPktRcvFECN"]] == 32 and m.bits[0, CC_COLUMN["PortSLRcvFECN0"]] == 0


def test_all_ports_form_reads_every_attribute():
    s = pcc.parse_perfquery_cc_many([(text("cc_all_ports_a.txt"), 3.0, "a")])
    assert len(s) == 1 and int(s.lid[0]) == 12 and int(s.port[0]) == 255
    assert s.fecn[0] == 42 and s.becn[0] == 3 and s.xmit_time_cong[0] == 65536
    assert (s.sl_fecn[0] == 1).all() and (s.sl_becn[0] == 2).all()
    assert s.vl_congestion[0].tolist() == [10 * i for i in range(16)]
    assert s.vl_xmit_time_cong[0].tolist() == list(range(15))
    assert (s.bits[0] > 0).all()


def test_noisy_capture_skips_prompts_and_stderr_and_the_port_counter_block():
    warnings: list = []
    s = parse_perfquery_cc(text("cc_noisy_capture.txt"), t=1.0, source="cap", warnings=warnings)
    assert s.port.tolist() == [3, 4] and s.fecn.tolist() == [60, 1] and s.becn.tolist() == [6, 2]
    reasons = [w["reason"] for w in warnings]
    assert reasons.count("shell prompt") == 5 and any("stderr" in r for r in reasons)
    assert all(w["source"] == "cap" for w in warnings)
    assert [w["line"] for w in warnings][:2] == [1, 7]


def test_perfquery_reads_the_blocks_into_cc_instead_of_skipping_them():
    warnings, cc = [], []
    s = parse_perfquery(text("cc_noisy_capture.txt"), t=2.0, source="cap", warnings=warnings, cc=cc)
    assert len(s) == 1 and int(s.port[0]) == 3  # the basic block, still read
    assert s.values[0, 0] == 2  # SymbolErrorCounter
    assert len(cc) == 1 and cc[0].port.tolist() == [3, 4] and cc[0].fecn.tolist() == [60, 1]
    assert not any("congestion" in w["reason"] for w in warnings)
    assert sum(w["reason"] == "shell prompt" for w in warnings) == 5  # warned about once, not by both readers


def test_perfquery_without_cc_skips_them_with_a_warning_naming_the_reader():
    warnings: list = []
    s = parse_perfquery(text("cc_several_ports.txt"), t=1.0, source="cc", warnings=warnings)
    assert len(s) == 0
    assert len(warnings) == 7 and all("perfquery_cc" in w["reason"] for w in warnings)
    assert warnings[0]["line"] == 1 and warnings[0]["text"].startswith("# PortRcvConCtrl counters")


def test_many_with_cc_between_port_counter_outputs():
    basic = (PQ / "x_basic_E_D_one_port.txt").read_text()
    cc: list = []
    ref = parse_perfquery_many([(basic, 1.0, "b")])
    got = parse_perfquery_many([(basic, 1.0, "b"), (text("cc_all_ports_a.txt"), 1.0, "a")], cc=cc)
    assert np.array_equal(got.values, ref.values) and len(cc) == 1 and len(cc[0]) == 6


def test_other_blocks_fields_are_not_taken():
    t = (block("PortOpRcvCounters", 3, 1, ("PortOpRcvPkts", 9)) + block("PortRcvConCtrl", 3, 1, ("PortPktRcvFECN", 4),
                                                                       ("PortPktRcvBECN", 0)))
    s = parse_perfquery_cc(t, 1.0)
    assert len(s) == 1 and s.fecn[0] == 4
    assert parse_perfquery_cc("# Port counters: Lid 3 port 1\n" + field("SymbolErrorCounter", 1), 1.0).lid.size == 0
    assert not pcc.has_cc_blocks("# Port counters: Lid 3 port 1\n") and pcc.has_cc_blocks(t)


@pytest.mark.parametrize(("body", "line", "message"), [
    (block("PortRcvConCtrl", 3, 1, ("PortSLRcvFECN0", 1)), 4, "PortSLRcvFECN0: not a counter of a PortRcvConCtrl"),
    (block("PortRcvConCtrl", 3, 1, ("PortPktRcvFECN", 4294967296)), 4, "does not fit in 32 bits"),
    (block("SwPortVLCongestion", 3, 1, ("SWPortVLCongestion0", 65536)), 4, "does not fit in 16 bits"),
    (block("PortRcvConCtrl", 3, 1, ("PortPktRcvFECN", "-1")), 4, "is not a non-negative integer"),
    (block("PortRcvConCtrl", 3, 1, ("PortPktRcvFECN", "0x10")), 4, "is not a non-negative integer"),
    (block("PortRcvConCtrl", 0, 1), 1, "out of range"),
    (block("PortRcvConCtrl", 3, 300), 1, "out of range"),
    (block("PortRcvConCtrl", 3, 1) + "PortPktRcvFECN 3\n", 4, "not a perfquery counter line"),
])
def test_bad_input_names_its_line(body, line, message):
    with pytest.raises(FormatError, match=message) as exc:
        parse_perfquery_cc(body, 1.0, source="bad.txt")
    assert exc.value.line == line and "bad.txt" in str(exc.value)


def test_block_not_addressed_by_lid_is_skipped_with_a_warning():
    warnings: list = []
    t = "# PortRcvConCtrl counters: DR path slid 0; dlid 0; 0,1 port 1\n" + field("PortPktRcvFECN", 3)
    assert len(parse_perfquery_cc(t, 1.0, warnings=warnings)) == 0
    assert len(warnings) == 1 and "not addressed" in warnings[0]["reason"]


def test_empty_and_concat():
    assert len(CCSamples.concat([])) == 0 and len(parse_perfquery_cc("", 1.0).merged()) == 0
