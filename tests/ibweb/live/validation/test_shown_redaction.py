"""What a view below ``ALL`` reads of a validation report (:mod:`ibweb.live.validation.shown`): redacted by default
(a host gone from the fabric since the digest's older report, a GUID of no visible node), hidden names of any word
count, and no error text that quotes a file or a node (the inputs' notes, a failed what-if)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import numpy as np

from fabric_engine.scenario import build_fabric
from ibweb.access import Redaction
from ibweb.fabrics.analyses import AnalysisStatus
from ibweb.live.validation.build import build_report, host_names, hosts_named
from ibweb.live.validation.isolation import _whatif
from ibweb.live.validation.shown import Labels, shown_digest, shown_report
from tests.support.cluster_spec import PLANE

F = build_fabric(PLANE)
HOST = F.node("dgx0003")
LEAF = int(F.dl_dst[int(F.out_link(HOST, 1))])
LEAF_NAME, LEAF_GUID = str(F.node_name[LEAF]), f"0x{int(F.guid[LEAF]):016x}"
NOBODY = Redaction(frozenset(), frozenset())  # below ALL, no tenant: every host hidden
EVERYONE = Redaction(None, None)
GONE_GUID = "0x0002c90300aabbcc"  # no node of F


def _finding(subject: str, message: str, hosts: list[str] | None, evidence: dict | None = None) -> dict:
    f = {"check": "fan", "severity": "error", "subject": subject, "message": message, "evidence": evidence or {},
         "link": None}
    return f if hosts is None else {**f, "hosts": hosts}


def test_a_host_gone_from_the_fabric_keeps_neither_its_name_nor_its_guid_in_the_digest():
    gone = _finding("gone042/1", f"gone042/1 (GUID {GONE_GUID}) to {LEAF_NAME} ({LEAF_GUID})", ["gone042"],
                    {"peer": "gone042", "guid": GONE_GUID})
    legacy = _finding("old007/1", "old007/1 lost its cable", None)  # kept before findings recorded their hosts
    digest = {"since": 0.0, "new": [], "resolved": [gone, legacy], "changed": [], "kpis": {}}
    shown = shown_digest(digest, F, NOBODY, set())
    text = repr(shown)
    assert "gone042" not in text and GONE_GUID not in text and "old007" not in text
    first = shown["resolved"][0]
    assert first["subject"] == "hidden/1" and first["evidence"] == {"peer": "hidden", "guid": "hidden"}
    assert f"to {LEAF_NAME} ({LEAF_GUID})" in first["message"]  # a switch of the fabric: kept
    assert shown_digest(digest, F, EVERYONE, None)["resolved"][0]["subject"] == "gone042/1"  # ALL reads all


def test_a_finding_records_the_hosts_it_names_when_built():
    f = _finding(f"{LEAF_NAME}/1 - dgx0003/1", "cabled to dgx0003-ib, not dgx0003", None, {"peers": ["dgx0004"]})
    assert hosts_named(f, *host_names(F)) == ["dgx0003", "dgx0004"]
    stored = build_report(F, t=0.0)
    assert all("hosts" in x for x in stored["report"]["findings"])


def test_hidden_names_of_many_words_are_replaced_whole():
    names = np.array(["leaf01", "gpu001 mlx5_0 port one rail", "gpu002"], dtype=object)
    fabric = SimpleNamespace(node_name=names, node=lambda k: list(names).index(k) if k in list(names) else
                             (_ for _ in ()).throw(KeyError(k)))
    hidden = np.array([False, True, True])
    labels = Labels(fabric, hidden, None)
    assert labels.text("gpu001 mlx5_0 port one rail/1 down, peer leaf01") == "host-1/1 down, peer leaf01"


def test_the_inputs_notes_that_quote_files_or_nodes_are_for_operators():
    stored = build_report(F, t=0.0, inputs={"notes": ["cabling plan plan.csv: line 3: dgx0003 port 9 unknown"]})
    assert shown_report(stored, "pod", F, EVERYONE, None)["inputs"]["notes"] == stored["inputs"]["notes"]
    below = shown_report(stored, "pod", F, NOBODY, set())["inputs"]["notes"]
    assert len(below) == 1 and "dgx0003" not in below[0] and "plan.csv" not in below[0]


def test_a_failed_what_if_s_error_is_for_operators():
    failed = SimpleNamespace(pk=5, status=AnalysisStatus.FAILED, created=dt.datetime.now(dt.UTC), result=None,
                             error="dgx0003 of tenant acme cannot be rerouted")
    assert _whatif(failed, "pod", EVERYONE)["error"] == failed.error
    assert "dgx0003" not in _whatif(failed, "pod", NOBODY)["error"]
