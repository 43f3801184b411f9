"""Downs of a telemetry-fed fabric from its sweeps (ibweb.live.health.swept, HealthKeeper.observe_sweep): a cable cut
between two sweeps is one down per end, each end of its interval one sweep wide, carrying the jobs of the catalog
in use before the cut; the report lists those ends, and a fabric with neither readings nor downs has none."""

from __future__ import annotations

import numpy as np

from fabric_engine.health.thresholds import load
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin.attribution import job_links
from ibweb.live.engine.health_publisher import HealthKeeper
from ibweb.live.health.swept import swept_ports, with_swept

F = fat_tree(hosts=8, radix=4)


def _down(d: int) -> dict:
    """The ``link_down`` condition of directed link ``d`` of :data:`F` (as the telemetry source raises it)."""
    a, b = int(F.dl_src[d]), int(F.dl_dst[d])
    pa, pb = int(F.dl_src_port[d]), int(F.dl_dst_port[d])
    return {"kind": "link_down", "a": f"{F.node_name[a]} port {pa}", "b": f"{F.node_name[b]} port {pb}",
            "guids": [f"0x{int(F.guid[a]):016x}", f"0x{int(F.guid[b]):016x}"], "ports": [pa, pb]}


def test_a_cut_cable_seen_by_sweeps_is_one_down_per_end_with_its_jobs():
    hosts = np.asarray(F.hosts)
    inc = job_links(route(F), [{1: hosts[[0, 7]]}])
    d = next(int(x) for x in inc[0].indices if F.kind[F.dl_src[x]] == 1 and F.kind[F.dl_dst[x]] == 1)
    link = d % F.num_links
    cut = F.without_links([link])
    keeper = HealthKeeper(critical_s=5.0)
    keeper.set_catalog(F, [{"id": "j1", "tenant": "acme", "hosts": hosts[[0, 7]].tolist(),
                            "links": inc[0].indices.tolist()}])
    keeper.observe_sweep(F, [], 0.0, None)
    assert with_swept(None, keeper.swept, keeper.swept_with_downs()) is None  # nothing down: no report
    keeper.observe_sweep(F, [], 5.0, None)  # the same sweep's state, seen again
    keeper.observe_sweep(cut, [_down(d)], 10.0, None)
    keeper.set_catalog(cut, [])  # the catalog after the cut, taken after its downs (as the publisher does)
    keeper.observe_sweep(cut, [_down(d)], 20.0, None)
    keeper.observe_sweep(F, [], 30.0, None)
    e = keeper.downs.episodes()
    ends = {(int(F.guid[F.dl_src[d]]), int(F.dl_src_port[d])), (int(F.guid[F.dl_dst[d]]), int(F.dl_dst_port[d]))}
    assert {(int(g), int(p)) for g, p in zip(e["guid"], e["port"], strict=True)} == ends and e["guid"].size == 2
    assert e["start_lo"].tolist() == [5.0, 5.0] and e["start_hi"].tolist() == [10.0, 10.0]
    assert e["end_lo"].tolist() == [20.0, 20.0] and e["end_hi"].tolist() == [30.0, 30.0]
    assert e["critical"].all() and (e["duration_lo"] == 10).all() and (e["duration_hi"] == 25).all()
    assert keeper.jobs.jobs(e["tag"]) == [[{"id": "j1", "tenant": "acme"}]] * 2

    rec = with_swept(None, keeper.swept, keeper.swept_with_downs())
    assert len(rec) == 2 and (rec["up"] == 1).all()  # the cable's ends only: back up, with their downs
    report, ports, alerts = keeper.report(rec, F, load(), 30.0)
    listed = {(p["node"], p["port"]): p for p in report["worst"]}
    assert len(listed) == 2
    for p in listed.values():
        [ep] = p["downs"]["episodes"]
        assert ep["jobs"] == [{"id": "j1", "tenant": "acme"}] and ep["critical"] and not ep["open"]
    assert sorted(a["kind"] for a in alerts) == ["link_down_long", "link_down_long"]
    assert ports["downs_total"].tolist() == [1, 1] and ports["downs_fabric_total"] == 2


def test_swept_ports_are_the_cabled_ends_up_and_the_ends_of_cables_down_down():
    cut = F.without_links([0])
    down = _down(0)
    sw = swept_ports(cut, [down, down], 7.0)  # an alert twice: each end once
    assert len(sw) == 2 * cut.num_links + 2 and sw.t == 7.0
    assert sw.up[-2:].tolist() == [0, 0] and (sw.up[:-2] == 1).all()
    assert sw.name[-2:].tolist() == [down["a"].rsplit(" port ")[0], down["b"].rsplit(" port ")[0]]
    # a port of a cable down that is cabled again (to another peer) is up, not down
    assert len(swept_ports(F, [down], 7.0)) == 2 * F.num_links
