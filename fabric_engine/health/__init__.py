"""Link health: bit error rates graded, optical modules against their thresholds, the cable inventory.

Readers (each returns :class:`~.records.HealthRecords`, one row per port, warnings appended to a list):

* :mod:`.perfquery_ext_speeds` - ``perfquery -T`` (PortExtendedSpeedsCounters, both layouts);
* :mod:`.mlxlink` - ``mlxlink`` text and ``--json``;
* :mod:`.cables` - ibdiagnet's ``ibdiagnet2.cables``;
* :mod:`.ibdiagnet_phy` - the PHY/BER, cable and port counter sections of ibdiagnet's ``ibdiagnet2.db_csv``;
* :mod:`.mlxcables` - ``mlxcables`` module pages (``-q``, ``--DDM``);
* :mod:`.ufm` - UFM Telemetry records (CSV or JSON).

:func:`read_file` tells them apart by content, and reads an ibdiagnet output folder or an archive of it
(:mod:`.ibdiagnet_bundle`: its ``ibdiagnet2.db_csv`` and ``ibdiagnet2.cables``); :mod:`.grade` grades the merged
rows against :mod:`.thresholds` (``thresholds.toml``, overridable per site).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import FormatError
from ..formats._input import read_bytes, to_text
from ..formats.ibdiagnet_archive import is_archive
from . import cables, ibdiagnet_bundle, ibdiagnet_phy, mlxcables, mlxlink, perfquery_ext_speeds, ufm
from .records import HealthRecords

__all__ = ["read_file", "read_text_as", "detect", "MAX_HEALTH_BYTES", "KINDS"]

#: Largest input read (a UFM telemetry CSV of a 200,000-port fabric is ~400 MB).
MAX_HEALTH_BYTES = 1 << 30
KINDS = ("perfquery -T", "mlxlink", "mlxlink --json", "ibdiagnet2.cables", "ibdiagnet2.db_csv", "mlxcables",
         "UFM telemetry CSV", "UFM telemetry JSON")


def detect(text: str) -> str | None:
    """Which of :data:`KINDS` ``text`` is, by its content; ``None`` if none."""
    if ufm.looks_like_json(text):
        return "UFM telemetry JSON"
    if mlxlink.looks_like_json(text):
        return "mlxlink --json"
    if ibdiagnet_phy.looks_like(text):
        return "ibdiagnet2.db_csv"
    if ufm.looks_like_csv(text):
        return "UFM telemetry CSV"
    if perfquery_ext_speeds.looks_like(text):
        return "perfquery -T"
    if cables.looks_like(text):
        return "ibdiagnet2.cables"
    if mlxcables.looks_like(text):
        return "mlxcables"
    if mlxlink.looks_like(text):
        return "mlxlink"
    return None


def read_text_as(text: str, source: str, warnings: list) -> tuple[str, HealthRecords]:
    """``text`` read by the reader its content calls for: (kind, rows)."""
    kind = detect(text)
    if kind is None:
        raise FormatError(source, None, "not a link health output this reader knows (perfquery -T, mlxlink "
                                        "[--json], mlxcables, ibdiagnet2.cables, ibdiagnet2.db_csv, UFM telemetry "
                                        "CSV/JSON)")
    read = {"perfquery -T": perfquery_ext_speeds.read, "mlxlink": mlxlink.read, "mlxlink --json": mlxlink.read_json,
            "ibdiagnet2.cables": cables.read, "ibdiagnet2.db_csv": ibdiagnet_phy.read, "mlxcables": mlxcables.read,
            "UFM telemetry CSV": ufm.read_csv,
            "UFM telemetry JSON": ufm.read_json}[kind]
    return kind, read(text, source, warnings)


def read_file(path: str | Path, warnings: list) -> tuple[str, HealthRecords]:
    """The file at ``path`` (gzip allowed, at most :data:`MAX_HEALTH_BYTES`), or ibdiagnet's output folder or an
    archive of it: (kind, rows)."""
    source = str(path)
    if Path(path).is_dir():
        kind, (rec, _) = "ibdiagnet folder", ibdiagnet_bundle.read_folder(path, warnings, MAX_HEALTH_BYTES)
    else:
        data = read_bytes(path, source)
        if not is_archive(data):
            return read_text_as(to_text(data, source, MAX_HEALTH_BYTES), source, warnings)
        kind, (rec, _) = "ibdiagnet archive", ibdiagnet_bundle.read_archive(data, source, warnings, MAX_HEALTH_BYTES)
    if rec is None:
        raise FormatError(source, None, "no link health in this ibdiagnet run: no ibdiagnet2.cables, and no "
                                        "PHY_DB16, CABLE_INFO or PM_INFO section in its ibdiagnet2.db_csv")
    return kind, rec
