"""Where each finding opens the map (:func:`ibweb.live.validation.build.finding_focus`), a viewer's relabelling of
free texts (:class:`ibweb.live.validation.shown.Labels`) and the daily digest's two slots (:mod:`.store`)."""

from __future__ import annotations

import numpy as np
import pytest

from fabric_engine.scenario import build_fabric
from ibweb.live.validation import store
from ibweb.live.validation.build import finding_focus
from ibweb.live.validation.shown import Labels
from tests.support.cluster_spec import PLANE

F = build_fabric(PLANE)
HOST = F.node("dgx0003")
D = int(F.out_link(HOST, 1))
LEAF, LEAF_PORT = int(F.dl_dst[D]), int(F.dl_dst_port[D])
LEAF_NAME = str(F.node_name[LEAF])


def test_a_finding_opens_the_map_on_its_cable_its_port_or_its_node():
    assert finding_focus(F, f"{LEAF_NAME}/{LEAF_PORT} - dgx0003/1", D % F.num_links) == (
        {"link": D % F.num_links}, [LEAF, HOST])
    # a port: the cable it sends on; a fan of a switch: the switch; a GUID of the fabric: its node
    assert finding_focus(F, "dgx0003/1", None) == ({"link": D}, [HOST])
    assert finding_focus(F, f"{LEAF_NAME} fan 2", None) == ({"node": LEAF}, [LEAF])
    assert finding_focus(F, f"0x{int(F.guid[LEAF]):016x} ASIC", None) == ({"node": LEAF}, [LEAF])
    # nothing of the fabric: no focus
    assert finding_focus(F, "subnet", None) == (None, [])
    assert finding_focus(F, "GUID 0x0000000000000001", None) == (None, [])
    assert finding_focus(F, "dgx0003/99", None) == ({"node": HOST}, [HOST])  # no such port: the node


def test_labels_hide_hosts_their_guids_and_p_keys_the_view_does_not_see():
    hidden = np.zeros(F.num_nodes, bool)
    hidden[HOST] = True
    labels = Labels(F, hidden, {0x0002})
    guid = f"0x{int(F.guid[HOST]):016x}"
    text = f"dgx0003/1 has 0x0001, 0x8002 and 0x7fff that {LEAF_NAME}/{LEAF_PORT} lacks (GUID {guid})"
    assert labels.text(text) == (f"host-{HOST}/1 has hidden, 0x8002 and 0x7fff that {LEAF_NAME}/{LEAF_PORT} lacks "
                                 "(GUID hidden)")
    assert labels.value({"holders": ["dgx0003", "dgx0003-ib"], "n": 2}) == {"holders": [f"host-{HOST}", "dgx0003-ib"],
                                                                           "n": 2}
    everything = Labels(F, np.zeros(F.num_nodes, bool), None)
    assert everything.text(text) == text


@pytest.mark.django_db
def test_the_digest_compares_with_a_report_one_to_two_days_old():
    fid = 987654
    store.forget(fid)

    def report(t: float, subjects: list[str]) -> dict:
        return {"t": t, "report": {"fabric": "x", "kpis": {"healthy_links": {"share": len(subjects) / 10}},
                                   "findings": [{"check": "fan", "subject": s, "severity": "error", "message": s}
                                                for s in subjects]}}

    try:
        first = report(0.0, ["a"])
        store._kept_for_digest(fid, first)
        assert store.digest(fid, first) is None  # nothing older to compare with
        later = report(3600.0, ["a", "b"])
        store._kept_for_digest(fid, later)
        d = store.digest(fid, later)
        assert d["since"] == 0.0 and [x["subject"] for x in d["new"]] == ["b"] and d["resolved"] == []
        assert d["kpis"]["healthy_links"] == {"was": 0.1, "now": 0.2}
        day = report(store.DAY_S + 60.0, ["b"])  # a day after the next slot's report: that one becomes the baseline
        store._kept_for_digest(fid, day)
        d = store.digest(fid, day)
        assert d["since"] == 0.0 and [x["subject"] for x in d["resolved"]] == ["a"]
        two = report(2 * store.DAY_S + 120.0, [])
        store._kept_for_digest(fid, two)
        assert store.digest(fid, two)["since"] == store.DAY_S + 60.0
    finally:
        store.forget(fid)
