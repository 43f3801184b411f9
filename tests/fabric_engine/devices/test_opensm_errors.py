"""OpenSM log ERR entries against a fixture written from OpenSM's ``osm_log`` format and its ERR format strings."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from fabric_engine.devices import opensm_errors
from fabric_engine.errors import FormatError

DATA = Path(__file__).parents[2] / "data" / "devices"
NOW = datetime(2026, 12, 1, tzinfo=UTC).timestamp()


def test_err_entries_with_their_continuation_lines():
    warnings: list = []
    found = opensm_errors.read((DATA / "opensm_errors.log").read_text(), "log", warnings, now=NOW, tz=UTC)
    assert [(e.code, e.source) for e in found] == [("3111", "log:3"), ("3120", "log:5"), ("3A04", "log:8"),
                                                   ("0F10", "log:9")]
    assert found[0].t == datetime(2026, 3, 3, 8, 14, 23, 17455, tzinfo=UTC).timestamp()
    assert found[0].text == "Received MAD with error status = 0x1C SubnGetResp(PortInfo), attr_mod 0x11, TID 0x2f41"
    assert found[3].text == "Received error status for SetResp()"  # after a log prefix and the function
    assert [(w["line"], w["reason"]) for w in warnings] == [(1, "shell prompt"), (11, "shell prompt")]


def test_a_december_entry_read_in_january_is_last_year():
    (e,) = opensm_errors.read("Dec 31 23:59:59 000001 [1] 0x01 -> f: ERR 0101: x\n", "log",
                              now=datetime(2027, 1, 1, 0, 0, 5, tzinfo=UTC).timestamp(), tz=UTC)
    assert e.t == datetime(2026, 12, 31, 23, 59, 59, 1, tzinfo=UTC).timestamp()


def test_impossible_date_names_the_line():
    text = "Mar 03 08:14:22 412907 [1] 0x02 -> ok\nFeb 30 08:14:22 412907 [1] 0x01 -> f: ERR 0101: x\n"
    with pytest.raises(FormatError, match=r"log:2: entry time"):
        opensm_errors.read(text, "log", now=NOW, tz=UTC)


def test_cap_on_listed_entries(monkeypatch):
    monkeypatch.setattr(opensm_errors, "MAX_ERRORS", 2)
    text = "".join(f"Mar 03 08:14:2{i} 000000 [1] 0x01 -> f: ERR 010{i}: x\n" for i in range(5))
    warnings: list = []
    assert len(opensm_errors.read(text, "log", warnings, now=NOW, tz=UTC)) == 2
    assert warnings[-1]["reason"] == "3 more ERR entries not listed (at most 2)"
