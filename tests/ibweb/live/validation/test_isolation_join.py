"""The isolation advice joined with the jobs and the what-ifs (:mod:`ibweb.live.validation.isolation`): the jobs on
each advised cable in one join, kept per (fabric, record version, report t) until a what-if is added, each what-if's
status read fresh."""

from __future__ import annotations

import pytest

from fabric_engine.scenario import build_fabric
from ibweb.access import Redaction
from ibweb.fabrics.analyses import AnalysisKind, AnalysisStatus
from ibweb.fabrics.models import Analysis, Fabric
from ibweb.live.validation import isolation
from ibweb.live.validation.isolation import jobs_on_cables, joined
from tests.support.cluster_spec import PLANE

F = build_fabric(PLANE)
L = F.num_links
EVERYONE = Redaction(None, None)


def test_jobs_on_cables_cross_either_direction_once_each_in_catalog_order():
    catalog = [{"id": 1, "tenant": "acme", "links": [3, 3 + L, 7]},  # cable 3 both ways: once
               {"id": "b", "tenant": "globex", "links": [7 + L, -1, 2 * L, 10 * L]},  # out of range: ignored
               {"id": "c", "tenant": None, "links": []}, {"id": "d", "tenant": "acme"}]
    on = jobs_on_cables(catalog, [7, 3, 7, 5], L)  # cable 7 advised twice (both its ends)
    acme, globex = {"id": "1", "tenant": "acme"}, {"id": "b", "tenant": "globex"}
    assert on == [[acme, globex], [acme], [acme, globex], []]
    assert jobs_on_cables(None, [3], L) == [[]] and jobs_on_cables(catalog, [], L) == []


@pytest.mark.django_db
def test_the_join_is_kept_per_report_until_a_what_if_is_added(monkeypatch):
    row = Fabric.objects.create(name="Join", slug="join", spec={"topology": PLANE}, tick_s=1.0)
    iso = {"advised": [{"cable": 3}, {"cable": 9}], "held_back": []}
    catalog = [{"id": "j", "tenant": "acme", "links": [3 + L]}]
    calls = []
    real = isolation.jobs_on_cables
    monkeypatch.setattr(isolation, "jobs_on_cables", lambda *a: calls.append(1) or real(*a))
    key = (row.pk, "v1", 100.0)
    first = joined(iso, row, F, catalog, EVERYONE, key=key)
    assert [a["jobs"] for a in first["advised"]] == [[{"id": "j", "tenant": "acme"}], []]
    assert joined(iso, row, F, catalog, EVERYONE, key=key) == first and len(calls) == 1  # kept
    w = Analysis.objects.create(fabric=row, kind=AnalysisKind.WHATIF_LINKS, status=AnalysisStatus.RUNNING,
                                params={"failed_cables": [9], "ebb_patterns": 0})
    again = joined(iso, row, F, catalog, EVERYONE, key=key)  # a what-if added: joined again
    assert len(calls) == 2 and again["advised"][1]["whatif"]["status"] == "running"
    Analysis.objects.filter(pk=w.pk).update(status=AnalysisStatus.FAILED, error="out of memory")
    done = joined(iso, row, F, catalog, EVERYONE, key=key)
    assert len(calls) == 2 and done["advised"][1]["whatif"]["error"] == "out of memory"  # its status read fresh
    joined(iso, row, F, catalog, EVERYONE, key=(row.pk, "v1", 160.0))  # a newer report: joined again
    assert len(calls) == 3
