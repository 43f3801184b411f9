"""The device readers fuzzed with mutated fixtures: only the engine's errors come out, memory bounded."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given

from fabric_engine.devices import DeviceReadings, read_text, summary
from tests.support.fuzz import FUZZ, check, mutated

DATA = Path(__file__).parents[2] / "data" / "devices"
CORPUS = {p.name: p.read_text() for p in sorted(DATA.iterdir()) if p.is_file() and p.suffix != ".md"}


def _read_and_sum(text: str) -> None:
    out = DeviceReadings()
    read_text(text, "fuzz", out, now=1.8e9)
    summary(out)


@FUZZ
@given(mutated(CORPUS))
def test_device_readers_take_mutated_outputs(text):
    check(lambda: _read_and_sum(text), 64 * 2**20)
