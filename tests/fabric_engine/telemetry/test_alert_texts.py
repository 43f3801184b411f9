"""Alerts that name nodes carry them as parts: ``text`` with ``{0}``, ``{1}``... and ``nodes`` (issue 24).

Every telemetry alert that names a node (error rates, stale and reset links, held counters, counter
conditions, topology changes, cabling conditions) keeps its ``message`` as the view of every tenant reads
it, and carries the same text as a template whose names are the fabric's node indices, so that the feed
renders each view's names from data (``host-<i>``, ``hidden node``) instead of relabelling the message.
"""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.telemetry import CounterSamples, link_port_keys, observe
from fabric_engine.telemetry.alerts import named
from fabric_engine.telemetry.conditions import cabling_conditions
from fabric_engine.telemetry.counter_conditions import CounterConditions, PortSweep
from fabric_engine.telemetry.diff import diff_topology
from fabric_engine.topology import KIND_SWITCH
from fabric_engine.topology.generate import fat_tree

F = fat_tree(hosts=8, radix=4, speed="HDR")


def names_of(fabric, nodes: list[int], gone: list[str] = ()) -> list[str]:
    """The names ``nodes`` stand for: the fabric's, and ``gone`` in order for each -1."""
    rest = iter(gone)
    return [str(fabric.node_name[n]) if n >= 0 else next(rest) for n in nodes]


def assert_parts(alert: dict, fabric=F, gone: list[str] = ()) -> None:
    """``alert``'s template names no node itself and renders, with its nodes' names, its message."""
    assert isinstance(alert["text"], str) and isinstance(alert["nodes"], list), alert
    names = names_of(fabric, alert["nodes"], gone)
    assert alert["text"].format(*names) == alert["message"], alert
    for name in names:
        assert name not in alert["text"], alert
    assert alert["text"].format(*(f"<{k}>" for k in range(len(names)))).count("<") == len(names)


def switch_sweep(t: float, per_link: dict[str, np.ndarray]) -> CounterSamples:
    xkey, _ = link_port_keys(F)
    sw = F.kind[F.dl_src] == KIND_SWITCH
    return CounterSamples.from_records([{"lid": int(xkey[d] // 256), "port": int(xkey[d] % 256), "t": t,
                                         "extended": True, "counters": {k: int(v[d]) for k, v in per_link.items()}}
                                        for d in np.flatnonzero(sw)])


def test_named_renders_the_names_and_keeps_the_indices():
    parts = named("cable down: {0} port 1 - {1} port 3", [np.int64(4), -1], ["gpu0001", "gpu0099"])
    assert parts == {"text": "cable down: {0} port 1 - {1} port 3", "nodes": [4, -1],
                     "message": "cable down: gpu0001 port 1 - gpu0099 port 3"}
    assert all(type(n) is int for n in parts["nodes"])


def test_error_rate_stale_reset_and_held_counter_alerts_carry_their_nodes():
    n = 2 * F.num_links
    zero = np.zeros(n, np.int64)
    sym = zero.copy()
    sym[3] = 30_000
    big, small = np.full(n, 10**6, np.int64), np.full(n, 10, np.int64)
    alerts = observe(F, switch_sweep(0.0, {"SymbolErrorCounter": zero, "PortXmitData": big}),
                     switch_sweep(60.0, {"SymbolErrorCounter": sym, "PortXmitData": small}), seq=1).state.alerts
    kinds = {a["kind"] for a in alerts}
    assert {"errors", "counter_reset"} <= kinds
    for a in alerts:
        if a["kind"] == "errors":
            assert a["nodes"] == [int(F.dl_src[a["link"]])] and a["port"].startswith(f"{F.node_name[a['nodes'][0]]} ")
        if "text" in a or a["kind"] in ("errors", "counter_reset", "stale"):
            assert_parts(a)
    held = observe(F, switch_sweep(0.0, {"PortXmitData": zero}), switch_sweep(0.001, {"PortXmitData": big}), seq=1,
                   now=0.001).state.alerts
    suspect = [a for a in held if a["kind"] == "counter_suspect" and "port" in a]
    assert suspect
    for a in suspect:
        assert_parts(a)
        assert a["nodes"] == [int(F.dl_src[a["link"]])] or a["nodes"] == [int(F.dl_dst[a["link"]])]


def test_counter_conditions_name_a_gone_port_by_minus_one():
    ports = [(0x10, 1, 0), (0x11, 2, -1)]
    g, p, n = (np.array(c) for c in zip(*ports, strict=True))
    sweep = PortSweep(g.astype(np.uint64), p.astype(np.int64), n.astype(np.int64), np.array([2.0, 2.0]),
                      np.zeros(2), np.zeros(2), np.full(2, 3), ["h0"])
    found = {c["nodes"][0]: c for c in CounterConditions().update(sweep, 1.0)}
    assert set(found) == {0, -1}
    assert_parts(found[0], fabric=type("Names", (), {"node_name": ["h0"]}))
    assert found[-1]["message"].startswith("0x0000000000000011 port 2:")
    assert found[-1]["text"].startswith("{0} port 2:")


#: (reference or old fabric, current or new): a cable down, nodes gone (and their cables), a slower speed.
CHANGES = {"down": (F, F.without_links([int(F.out_link(int(F.hosts[0]), 1)) % F.num_links])),
           "gone": (F, fat_tree(hosts=7, radix=4, speed="HDR")),
           "slower": (fat_tree(hosts=8, radix=4, speed="NDR"), F)}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_topology_changes_and_cabling_conditions_index_their_ends_in_the_new_fabric(change):
    old, new = CHANGES[change]
    alerts = diff_topology(old, new) + cabling_conditions(old, new)
    assert alerts
    for alert in alerts:
        ends = [alert["node"]] if "node" in alert else [e.rsplit(" port ", 1)[0] for e in (alert["a"], alert["b"])]
        assert_parts(alert, fabric=new, gone=[e for e, k in zip(ends, alert["nodes"], strict=True) if k < 0])
        guids = [alert["guid"]] if "node" in alert else alert["guids"]
        for k, name, guid in zip(alert["nodes"], ends, guids, strict=True):  # -1: no node of that GUID any more
            assert (k >= 0 and str(new.node_name[k]) == name) or (k < 0 and int(guid, 16) not in set(new.guid.tolist()))


def test_the_thresholds_table_of_the_telemetry_guide_is_the_code_s():
    """docs/telemetry.md lists every error counter's default threshold as the code has it."""
    import re
    from pathlib import Path

    from fabric_engine.telemetry.alerts import DEFAULT_THRESHOLDS

    doc = (Path(__file__).resolve().parents[3] / "docs" / "telemetry.md").read_text()
    table = doc.split("### Error thresholds", 1)[1].split("\n\n")[2]
    documented = {}
    for names, value in re.findall(r"\| *([A-Za-z0-9, ]+?) *\| *(\d+) *(?=\|)", table):
        for name in names.split(","):
            documented[name.strip()] = float(value)
    assert documented == DEFAULT_THRESHOLDS
