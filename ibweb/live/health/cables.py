"""The inventory of every cable end read: vendor, part number, serial, revision, firmware, length and module
identifier of each port of a node of the fabric whose reading names a module (any of vendor, part number or
serial given), as columns (``node`` int32 index on the fabric graded, ``port`` int16, ``length_m`` float32, each
text field one joined string).

A fabric's leader rewrites it (:func:`changed`) only when one of its columns or the fabric's record version
changed: the readers share unchanged columns between readings, so that check is mostly identity; it holds the
newest readings' columns only (never an older readings' arrays). At 196,608 cable ends (32,768 GPUs) the entry
is 10 bytes of arrays per end plus its strings (about 50 bytes): about 11 MB, written once per change, never
per tick.
"""

from __future__ import annotations

import numpy as np

from fabric_engine.health.records import HealthRecords

__all__ = ["TEXT", "SEP", "columns", "changed", "inventory", "text"]

#: The text fields of a cable end, in the order the API lists them.
TEXT = ("vendor", "pn", "sn", "rev", "fw", "identifier")
#: What joins a text field's strings (no reader's text holds it).
SEP = "\x00"


def columns(rec: HealthRecords) -> dict[str, np.ndarray]:
    """The columns of ``rec`` an inventory is made of (the arrays themselves, not copies)."""
    return {"guid": rec.guid, "port": rec.port, **{f: rec[f] for f in (*TEXT, "length_m")}}


def changed(rec: HealthRecords, last: dict[str, np.ndarray] | None) -> bool:
    """Whether the inventory of ``rec`` may differ from the one made of the :func:`columns` ``last`` (None: none
    made yet). Columns shared between readings compare by identity, others by value."""
    if last is None or last["port"].size != len(rec):
        return True
    for name, b in last.items():
        a = rec.guid if name == "guid" else rec.port if name == "port" else rec[name]
        if a is not b and not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            return True
    return False


def _joined(values: np.ndarray) -> str:
    """The strings of ``values`` joined by :data:`SEP` (one a separator would split is cleaned of it)."""
    items = values.tolist()
    try:
        joined = SEP.join(items)
    except TypeError:  # not a string: cleaned below
        joined = None
    if joined is None or joined.count(SEP) != max(len(items) - 1, 0):  # a string holding the separator
        joined = SEP.join(str(x).replace(SEP, " ") for x in items)
    return joined


def inventory(rec: HealthRecords, nodes: np.ndarray) -> dict:
    """The cable ends of ``rec`` (``nodes``: each row's node index on the fabric, -1: none) whose module was read,
    sorted by node and port: ``node``, ``port``, ``length_m`` arrays and each :data:`TEXT` field as one string
    joined by :data:`SEP` (pickled at memory speed; an object array of 200,000 strings pickles 20 times slower),
    read back by :func:`text`."""
    module = (rec["vendor"] != "") | (rec["pn"] != "") | (rec["sn"] != "")
    rows = np.flatnonzero(module & (nodes >= 0))
    rows = rows[np.lexsort((rec.port[rows], nodes[rows]))]
    out = {"node": nodes[rows].astype(np.int32), "port": rec.port[rows].astype(np.int16),
           "length_m": rec["length_m"][rows].astype(np.float32)}
    out.update({f: _joined(rec[f][rows]) for f in TEXT})
    return out


def text(inv: dict, field: str) -> np.ndarray:
    """One :data:`TEXT` field of an :func:`inventory` as an object array of strings, one per cable end."""
    n = int(inv["node"].size)
    return np.array(inv[field].split(SEP) if n else [], dtype=object)
