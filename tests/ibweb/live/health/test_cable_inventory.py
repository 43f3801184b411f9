"""The inventory of every cable end (issue 37): which ends it lists, in which order, its text read back as written,
and when the leader must write it again."""

from __future__ import annotations

import numpy as np

from fabric_engine.health.records import empty
from ibweb.live.health.cables import SEP, TEXT, changed, columns, inventory, text


def readings():
    rec = empty(4, "test")
    rec.guid[:] = [0x10, 0x10, 0x20, 0x30]
    rec.port[:] = [2, 1, 1, 1]
    rec["vendor"][:] = ["Mellanox", "Mellanox", "", "Odd"]
    rec["sn"][:] = ["MT1", "MT0", "", f"A{SEP}B"]  # the third end has no module read
    rec["pn"][:] = ["MMA4Z00-NS", "MMA4Z00-NS", "", "X"]
    rec["length_m"][:] = [30.0, 30.0, np.nan, 2.0]
    return rec


def test_the_ends_with_a_module_in_node_and_port_order_their_text_as_read():
    rec = readings()
    inv = inventory(rec, np.array([5, 5, 6, -1]))  # the last end is on no node of the fabric
    assert inv["node"].tolist() == [5, 5] and inv["port"].tolist() == [1, 2]
    assert text(inv, "sn").tolist() == ["MT0", "MT1"] and text(inv, "vendor").tolist() == ["Mellanox"] * 2
    assert text(inv, "fw").tolist() == ["", ""] and inv["length_m"].tolist() == [30.0, 30.0]
    odd = inventory(rec, np.array([5, 5, 6, 7]))
    assert text(odd, "sn").tolist() == ["MT0", "MT1", "A B"]  # a separator in a string: one end still
    assert all(text(odd, f).size == 3 for f in TEXT)
    none = inventory(rec, np.full(4, -1))
    assert none["node"].size == 0 and text(none, "sn").size == 0


def test_it_is_written_again_only_when_a_column_changes():
    rec = readings()
    kept = columns(rec)
    assert not changed(rec, kept)
    same = readings()  # new arrays, equal values (NaN lengths included)
    assert not changed(same, kept)
    same["sn"][0] = "MT9"
    assert changed(same, kept) and changed(rec, None)
    other = readings()
    other.port[0] = 3
    assert changed(other, kept)
