"""The twin's readers fuzzed (issue 17, as issue 14 asks of every reader): Slurm JSON, hostlists, cabling plans.

Random and mutated inputs give a result or the engine's own error (``FormatError``), never another
exception; hostlists naming more hosts than the limit are refused before anything is expanded.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import write
from fabric_engine.topology.generate import fat_tree
from fabric_engine.twin import expand_hostlist, hostlist_size, parse_slurm_jobs, read_plan

SLURM = [p.read_text() for p in sorted((Path(__file__).parents[2] / "data" / "slurm").glob("*.json"))]
DESIGN = fat_tree(hosts=8, radix=4)
PLANS = [write(DESIGN, "ibnetdiscover"), write(DESIGN, "ibsim"),
         "\n".join(f"{DESIGN.node_name[a]},{pa},{DESIGN.node_name[b]},{pb},HDR,4x"
                   for a, pa, b, pb in zip(DESIGN.a_node, DESIGN.a_port, DESIGN.b_node, DESIGN.b_port, strict=True))]
FUZZ = settings(max_examples=150, deadline=None)


@st.composite
def mutated(draw, seeds: list[str]) -> str:
    """A seed with a few random cuts, insertions and replacements."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 40)))
        text = text[:i] + draw(st.text(max_size=12)) + text[j:]
    return text


def _only_engine_errors(call) -> None:
    with contextlib.suppress(FabricEngineError):
        call()


@FUZZ
@given(st.one_of(mutated(SLURM), st.text(max_size=300)))
def test_slurm_json_reader(text):
    _only_engine_errors(lambda: parse_slurm_jobs(text, max_hosts=16, source="fuzz"))


@st.composite
def slurm_records(draw) -> str:
    """Valid JSON in Slurm's shape with values of any type where Slurm puts numbers, strings and lists."""
    anything = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3), max_leaves=6)
    job = {key: draw(anything) for key in draw(st.sets(st.sampled_from(
        ["job_id", "job_state", "nodes", "account", "user_name", "start_time", "end_time", "job_resources"]),
        max_size=8))}
    job.setdefault("job_state", "RUNNING")
    return json.dumps({"jobs": [job], "errors": draw(st.one_of(st.just([]), anything))})


@FUZZ
@given(slurm_records())
def test_slurm_json_of_any_shape(text):
    _only_engine_errors(lambda: parse_slurm_jobs(text, max_hosts=16, source="fuzz"))


@FUZZ
@given(st.one_of(st.text(alphabet="abn0123456789[]-,.", max_size=60), st.text(max_size=40)))
def test_hostlists(expr):
    try:
        n = hostlist_size(expr, limit=1000)
    except FabricEngineError:
        return
    try:
        names = expand_hostlist(expr, limit=1000)
    except FabricEngineError:
        return
    assert len(names) <= n <= 1000


@FUZZ
@given(st.one_of(mutated(PLANS), st.text(alphabet="leafgpu0123456789,x \n#HDRNDR", max_size=300),
                 st.text(max_size=200)))
def test_plan_readers(text):
    _only_engine_errors(lambda: read_plan(text, "fuzz.csv"))
    _only_engine_errors(lambda: read_plan(text, "fuzz.topo"))
