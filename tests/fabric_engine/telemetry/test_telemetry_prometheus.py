"""Prometheus text from telemetry samples and from an emulated fabric's integrated rates."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fabric_engine.formats.json_format import to_json
from fabric_engine.state import FabricState
from fabric_engine.telemetry import (
    COLUMN,
    CounterIntegrator,
    fabric_from_linkinfo,
    parse_iblinkinfo,
    parse_perfquery_many,
    render_metrics,
    totals_from_samples,
)
from fabric_engine.topology.generate import fat_tree

DATA = Path(__file__).parents[2] / "data" / "telemetry"
LINE = re.compile(r'^(\w+)\{fabric="([^"]*)",guid="(0x[0-9a-f]{16})",port="(\d+)",name="([^"]*)",'
                  r'remote_guid="(0x[0-9a-f]{16})",remote_port="(\d+)",remote_name="([^"]*)"\} (\d+)$')


def samples_of(lines: str) -> dict[tuple[str, str, str], int]:
    out = {}
    for ln in lines.splitlines():
        if ln.startswith("#") or not ln:
            continue
        m = LINE.match(ln)
        assert m, ln
        out[(m.group(1), m.group(5), m.group(4))] = int(m.group(9))
    return out


def test_metrics_from_captured_perfquery_outputs():
    fabric = fabric_from_linkinfo(parse_iblinkinfo((DATA / "iblinkinfo.txt").read_text()))
    cur = parse_perfquery_many([((DATA / "perfquery_loop.txt").read_text(), 1.0, "b"),
                                ((DATA / "perfquery_ext_loop.txt").read_text(), 1.0, "x")])
    totals = totals_from_samples(fabric, cur)
    text = render_metrics(to_json(fabric), totals, "lab", extra={"infiniband_sweep_age_seconds": 1.5})
    got = samples_of(text.rsplit("# TYPE infiniband_sweep_age_seconds", 1)[0])
    ext = (DATA / "perfquery_ext_loop.txt").read_text()
    words = [int(v) for v in re.findall(r"^PortXmitData:\.+(\d+)$", ext, re.M)]
    for port, w in zip(range(1, 5), words, strict=True):
        assert got[("infiniband_port_transmit_data_bytes_total", "leaf01", str(port))] == 4 * w
    assert got[("infiniband_port_symbol_error_total", "leaf01", "1")] == 0
    # only leaf01 was read: no other port is exported
    assert {k[1] for k in got} == {"leaf01"}
    assert "# TYPE infiniband_port_transmit_wait_total counter" in text
    assert 'infiniband_sweep_age_seconds{fabric="lab"} 1.5' in text
    line = next(ln for ln in text.splitlines() if ln.startswith("infiniband_port_transmit_data_bytes_total")
                and 'port="3"' in ln)
    assert 'remote_name="spine01"' in line and 'remote_port="1"' in line


def test_emulated_rates_integrate_into_counters():
    f = fat_tree(hosts=8, radix=4, speed="NDR")
    n = 2 * f.num_links
    acc = CounterIntegrator(f)
    rate = np.zeros(n, np.float32)
    rate[0] = 80.0  # 10 GB/s
    wait = np.zeros(n, np.float32)
    wait[0] = 1000
    for _ in range(4):
        acc.add(FabricState(1, 0.0, 0.25, rate, rate / 400, xmit_wait=wait))
    assert acc.totals[0, COLUMN["PortXmitData"]] == pytest.approx(10e9)
    assert acc.totals[f.reverse(0), COLUMN["PortRcvData"]] == pytest.approx(10e9)
    assert acc.totals[0, COLUMN["PortXmitPkts"]] == pytest.approx(4 * np.ceil(2.5e9 / 4096))
    got = samples_of(render_metrics(to_json(f), acc.totals, "demo"))
    a, p = str(f.node_name[f.a_node[0]]), str(int(f.a_port[0]))
    assert got[("infiniband_port_transmit_data_bytes_total", a, p)] == 10_000_000_000
    assert got[("infiniband_port_transmit_wait_total", a, p)] == 4000
    assert got[("infiniband_port_link_downed_total", a, p)] == 0
    assert len([k for k in got if k[0] == "infiniband_port_receive_data_bytes_total"]) == n


def test_label_values_are_escaped_and_shapes_checked():
    f = fat_tree(hosts=8, radix=4)
    topo = to_json(f)
    topo["nodes"]["name"][0] = 'odd "leaf"\\1'
    text = render_metrics(topo, CounterIntegrator(f).totals, "x")
    assert 'name="odd \\"leaf\\"\\\\1"' in text
    with pytest.raises(ValueError):
        render_metrics(topo, np.zeros((3, len(COLUMN))), "x")
