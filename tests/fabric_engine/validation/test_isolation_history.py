"""Issue 38: a port isolated before and failing again is flagged with the isolation's time and advised for
replacement (cable or transceiver), ranked first, not disabled again."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.topology import KIND_SWITCH
from fabric_engine.topology.generate import fat_tree
from fabric_engine.validation.isolation import advise


def ends(f, c):
    return (f.port_offset[f.a_node[c]] + f.a_port[c] - 1, f.port_offset[f.b_node[c]] + f.b_port[c] - 1)


def _graded():
    f = fat_tree(hosts=32, radix=8, speed="HDR")
    P = int(f.nports.sum())
    grade, score = np.zeros(P, np.int8), np.full(P, np.nan)
    cables = np.flatnonzero(f.kind[f.a_node] != f.kind[f.b_node])[:3]
    for i, c in enumerate(cables.tolist()):
        grade[list(ends(f, c))] = 2
        score[ends(f, c)[0]] = 1e-10 * (i + 1)  # the last the worst
    return f, grade, score, cables


def test_failing_again_is_ranked_first_for_replacement_with_the_isolation_time():
    f, grade, score, cables = _graded()
    plain = advise(f, grade, score=score).advised
    assert [a.cable for a in plain] == cables[::-1].tolist() and not any(a.failing_again for a in plain)
    best = plain[-1]  # the least bad cable, isolated once before
    t = 1_764_000_000.0
    plan = advise(f, grade, score=score, history=[{"guid": best.guid, "port": best.port, "t": t}])
    first = plan.advised[0]
    assert first.cable == best.cable and first.failing_again and first.isolated_at == t
    assert first.action == "replace" and first.isolate is None and first.reenable is None
    assert "failing again" in first.note and "replace the cable or transceiver" in first.note
    assert "2025-11-24 16:00 UTC" in first.note
    assert [a.cable for a in plan.advised[1:]] == cables[::-1][:2].tolist()
    assert all(a.action == "isolate" and a.isolate for a in plan.advised[1:])
    d = first.as_dict()
    assert d["failing_again"] is True and d["isolated_at"] == t and d["action"] == "replace"
    assert d["commands"] == {"isolate": None, "reenable": None}


def test_history_by_port_guid_tuple_and_without_time():
    f, grade, score, cables = _graded()
    c = int(cables[0])
    a, b = ends(f, c)
    sw = a if f.kind[f.a_node[c]] == KIND_SWITCH else b
    (again,) = [x for x in advise(f, grade, history=[(int(f.guid[f.port_node[sw]]), int(f.port_num[sw]))]).advised
                if x.cable == c]
    assert again.failing_again and again.isolated_at is None and "isolated before and failing" in again.note


def test_a_bad_history_entry_names_itself():
    f, grade, _, _ = _graded()
    with pytest.raises(ValueError, match=r"history\[1\]"):
        advise(f, grade, history=[(1, 2), {"port": 3}])
