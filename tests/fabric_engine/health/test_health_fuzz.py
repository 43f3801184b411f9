"""The link health readers fuzzed with mutated fixtures: only the engine's errors come out, memory bounded."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given

from fabric_engine.health import read_text_as
from fabric_engine.health.grade import summary
from fabric_engine.health.thresholds import load
from tests.support.fuzz import FUZZ, check, mutated

DATA = Path(__file__).parents[2] / "data" / "health"
CORPUS = {p.name: p.read_text() for p in sorted(DATA.iterdir()) if p.is_file() and p.suffix != ".md"}
TABLE = load()


def _read_and_grade(text: str) -> None:
    _, rec = read_text_as(text, "fuzz", [])
    summary(rec, TABLE)


@FUZZ
@given(mutated(CORPUS))
def test_health_readers_take_mutated_outputs(text):
    check(lambda: _read_and_grade(text), 64 * 2**20)
