"""The credit model's congestion tree and per-job spreading in the feed, as each access level sees them (issue 41):
the tree is fabric-wide like the per-link arrays (every view gets it whole, in v1 and v2), a job's spreading goes
with its job (only its tenants' views see it)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabric_engine.feed_v2 import decode_frame
from fabric_engine.routing import route
from fabric_engine.topology.generate import fat_tree
from fabric_engine.workload import Job
from fabric_engine.workload.patterns import PATTERNS, PatternFlows
from ibweb.live.feed.encodings import ENCODINGS
from ibweb.live.feed.view import FeedView

GB = 1e9


def _incast(job, fabric):
    h = np.asarray(job.hosts, dtype=np.int64)
    return PatternFlows(h[1:], np.full(len(h) - 1, h[0]), np.full(len(h) - 1, float(job.buffer_bytes)))


@pytest.fixture
def credit_state(monkeypatch):
    from fabric_engine.emulator import Emulator

    monkeypatch.setitem(PATTERNS, "incast", _incast)
    f = fat_tree(hosts=16, radix=8)
    h = f.hosts
    jobs = [Job("hot", "acme", h[[0, 1, 5, 6, 7, 9]], pattern="incast", buffer_bytes=GB, compute_s=0.01),
            Job("victim", "globex", h[[4, 8]], pattern="pipeline", buffer_bytes=GB, compute_s=0.01,
                params={"stages": 2})]
    return f, Emulator(route(f, "ftree"), jobs, congestion="credit").step(0.0)


def test_every_view_gets_the_tree_whole_and_only_its_jobs_spreading(credit_state):
    f, state = credit_state
    header = state.frame_header({})
    tree = header["congestion_tree"]
    assert tree["roots"] and tree["held"]
    views = {"all": FeedView("all", None, None),
             "tenant": FeedView("t-1", frozenset({"acme"}), np.zeros(f.num_nodes, bool), f),
             "fabric": FeedView("f", frozenset(), np.ones(f.num_nodes, bool), f)}
    seen = {name: v.header(header) for name, v in views.items()}
    for name, out in seen.items():
        assert out["congestion_tree"] == tree, name
    assert {j["id"]: j["spreading"] > 1 for j in seen["all"]["jobs"]} == {"hot": True, "victim": True}
    assert [j["id"] for j in seen["tenant"]["jobs"]] == ["hot"]
    assert seen["fabric"]["jobs"] == []
    assert "globex" not in json.dumps(seen["tenant"]) and "victim" not in json.dumps(seen["fabric"])


@pytest.mark.parametrize("name", ["v1", "v2"])
def test_both_encodings_carry_the_tree(credit_state, name):
    _, state = credit_state
    enc = ENCODINGS[name]
    message = enc.frame(state.frame_header({}), enc.shared(state))
    header = decode_frame(message)[0] if enc.binary else json.loads(message)
    assert header["congestion_tree"] == state.congestion_tree
