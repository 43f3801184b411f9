"""The congestion control counters of the push API's sample records (issue 41):
:func:`fabric_engine.telemetry.perfquery_cc.split_cc_records` takes them out for the port counters' reader."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.errors import FormatError
from fabric_engine.telemetry import CounterSamples
from fabric_engine.telemetry.perfquery_cc import CC_COLUMN, CCSamples, parse_perfquery_cc, split_cc_records

RCV = ("PortPktRcvFECN", "PortPktRcvBECN")


def rec(lid: int = 2, port: int = 1, t: float = 10.0, **counters) -> dict:
    return {"lid": lid, "port": port, "t": t, "extended": True, "counters": {"PortXmitData": 5, **counters}}


def test_records_without_them_are_passed_on_as_they_are():
    records = [rec(), rec(port=2), "not a sample", {"lid": 2}, {"counters": 3}]
    out, cc, rows = split_cc_records(records, RCV)
    assert all(a is b for a, b in zip(out, records, strict=True)) and len(cc) == 0 and rows.size == 0


def test_they_are_taken_out_and_read_as_perfquery_reads_them():
    records = [rec(port=1), rec(port=2, t=12.5, PortPktRcvFECN=7, PortPktRcvBECN="4294967295"),
               {"lid": 3, "port": 4, "t": 13, "counters": {"PortPktRcvFECN": 1}}]
    out, cc, rows = split_cc_records(records, RCV)
    assert rows.tolist() == [1, 2]
    assert out[0] is records[0] and out[1]["counters"] == {"PortXmitData": 5} and out[2]["counters"] == {}
    assert records[1]["counters"]["PortPktRcvFECN"] == 7  # the caller's records untouched
    assert cc.lid.tolist() == [2, 3] and cc.port.tolist() == [2, 4] and cc.t.tolist() == [12.5, 13.0]
    assert cc.fecn.tolist() == [7.0, 1.0] and cc.becn[0] == 4294967295.0 and np.isnan(cc.becn[1])
    # the same counters as perfquery --rcvcc's block of that port
    block = parse_perfquery_cc("# PortRcvConCtrl counters: Lid 2 port 2\nPortSelect:....2\nCounterSelect:...0x0000\n"
                               "PortPktRcvFECN:....7\nPortPktRcvBECN:....4294967295\n", t=12.5)
    first = CCSamples(*(getattr(cc, f)[:1] for f in ("lid", "port", "values", "bits", "t")))
    for f in ("lid", "port", "values", "bits", "t"):
        assert np.array_equal(getattr(first, f), getattr(block, f)), f
    # what is left is for the port counters' reader
    assert len(CounterSamples.from_records(out)) == 3


def test_only_the_names_asked_for_are_taken():
    records = [rec(PortPktRcvFECN=1, PortSLRcvFECN0=2)]
    out, cc, _ = split_cc_records(records, RCV)
    assert out[0]["counters"] == {"PortXmitData": 5, "PortSLRcvFECN0": 2}  # left for from_records to refuse
    with pytest.raises(FormatError, match="unknown counter 'PortSLRcvFECN0'"):
        CounterSamples.from_records(out)
    assert int(cc.bits[0, CC_COLUMN["PortPktRcvFECN"]]) == 32 and not cc.bits[0, CC_COLUMN["PortSLRcvFECN0"]]
    with pytest.raises(ValueError, match="PortXmitData"):
        split_cc_records(records, ("PortXmitData",))


@pytest.mark.parametrize(("bad", "message"), [
    ({"PortPktRcvFECN": -1}, "PortPktRcvFECN: -1 does not fit in 32 bits"),
    ({"PortPktRcvBECN": 2**32}, "PortPktRcvBECN: 4294967296 does not fit in 32 bits"),
    ({"PortPktRcvFECN": 1.5}, "PortPktRcvFECN: '1.5' is not an integer"),
    ({"PortPktRcvFECN": True}, "PortPktRcvFECN: 'True' is not an integer"),
    ({"PortPktRcvBECN": "12x"}, "PortPktRcvBECN: '12x' is not an integer"),
    ({"PortPktRcvBECN": None}, "PortPktRcvBECN: 'None' is not an integer"),
])
def test_a_bad_value_names_the_record_and_the_counter(bad, message):
    with pytest.raises(FormatError) as exc:
        split_cc_records([rec(), rec(), rec(**bad)], RCV, source="samples")
    assert (exc.value.source, exc.value.line, exc.value.message) == ("samples", 3, message)


@pytest.mark.parametrize(("fields", "message"), [
    ({"lid": 0}, "lid 0 or port 1 out of range (LIDs 1..49151, ports 0..255)"),
    ({"lid": 0xC000}, "lid 49152 or port 1 out of range"),
    ({"port": 256}, "lid 2 or port 256 out of range"),
    ({"t": float("nan")}, "t: nan is not a time"),
    ({"t": "soon"}, "t: 'soon' is not a time"),
])
def test_a_record_holding_them_is_checked_as_the_port_counters_reader_checks_it(fields, message):
    bad = {**rec(PortPktRcvFECN=1), **fields}
    with pytest.raises(FormatError, match=message.replace("(", r"\(").replace(")", r"\)")) as exc:
        split_cc_records([rec(), bad], RCV)
    assert exc.value.line == 2
    with pytest.raises(FormatError, match="sample needs lid, port, t and counters"):
        split_cc_records([{"lid": 2, "port": 1, "counters": {"PortPktRcvFECN": 1}}], RCV)


def test_more_records_than_a_subnet_has_ports_are_refused_before_reading(monkeypatch):
    from fabric_engine.telemetry import perfquery_cc

    monkeypatch.setattr(perfquery_cc, "MAX_FABRIC_PORTS", 2)
    with pytest.raises(FormatError, match="3 samples: more ports than a subnet has"):
        split_cc_records([rec(), rec(), rec()], RCV)


def test_a_push_in_port_order_is_merged_as_one_in_any_order():
    fields = ("lid", "port", "values", "bits", "t")
    records = [rec(port=p, t=10.0 + p, PortPktRcvFECN=p * 10) for p in (1, 2, 5)]
    _, in_order, _ = split_cc_records(records, RCV)
    _, reversed_, _ = split_cc_records(records[::-1], RCV)
    a, b = in_order.merged(), reversed_.merged()
    for f in fields:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert CCSamples.concat([in_order]).merged().fecn.tolist() == [10.0, 20.0, 50.0]
    _, twice, _ = split_cc_records([*records, rec(port=1, t=20.0, PortPktRcvFECN=99)], RCV)
    m = twice.merged()  # a port pushed twice: its later sample wins
    assert m.port.tolist() == [1, 2, 5] and m.fecn.tolist() == [99.0, 20.0, 50.0] and m.t.tolist() == [20.0, 12.0, 15.0]
