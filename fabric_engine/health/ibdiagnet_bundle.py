"""Link health of one ibdiagnet run: its output folder or an uploaded archive of it.

Of the folder's files (found and read safely by :mod:`fabric_engine.formats.ibdiagnet_archive`) two carry
link health: ``ibdiagnet2.db_csv``, whose PHY/BER, cable and port counter sections :mod:`.ibdiagnet_phy`
reads, and ``ibdiagnet2.cables`` (``--get_cable_info``, :mod:`.cables`). Their rows are merged per port, the
db_csv's values first. A run without either has no link health (``None``), which is not an error; a file
that is present but that a reader refuses is a :class:`~fabric_engine.errors.FormatError` naming the archive
member and its line.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..formats._input import MAX_TEXT_BYTES
from ..formats.ibdiagnet import is_ibdiagnet
from ..formats.ibdiagnet_archive import Bundle, archive_bundle, folder_bundle
from . import cables, ibdiagnet_phy
from .records import HealthRecords, merge

__all__ = ["read_bundle", "read_archive", "read_folder"]

_ROW_MARKERS = tuple(f"\nSTART_{name}" for name in ibdiagnet_phy.ROW_SECTIONS)


def read_bundle(bundle: Bundle, warnings: list) -> tuple[HealthRecords | None, dict[str, str]]:
    """The link health of ``bundle``'s files and the files it came from (kind -> name in the folder/archive).

    ``warnings`` gets the readers' warnings, each with its ``source`` (the member).
    """
    parts, files = [], {}
    if "db_csv" in bundle.members:
        text = bundle.read("db_csv")
        if any(m in text for m in _ROW_MARKERS) or text.startswith(tuple(m[1:] for m in _ROW_MARKERS)):
            parts.append(_read(ibdiagnet_phy.read, text, bundle.member_source("db_csv"), warnings))
            files["db_csv"] = bundle.members["db_csv"].name
    if "cables" in bundle.members:
        parts.append(_read(cables.read, bundle.read("cables"), bundle.member_source("cables"), warnings))
        files["cables"] = bundle.members["cables"].name
    return (merge(parts) if parts else None), files


def _read(reader, text: str, source: str, warnings: list) -> HealthRecords:
    found: list = []
    rec = reader(text, source, found)
    warnings.extend({**w, "source": source} for w in found)
    return rec


def read_archive(data: bytes, source: str, warnings: list,
                 max_bytes: int = MAX_TEXT_BYTES) -> tuple[HealthRecords | None, dict[str, str]]:
    """The link health of an uploaded archive of ibdiagnet's folder (or one of its files)."""
    return read_bundle(archive_bundle(data, source, max_bytes, is_ibdiagnet), warnings)


def read_folder(path: str | os.PathLike, warnings: list,
                max_bytes: int = MAX_TEXT_BYTES) -> tuple[HealthRecords | None, dict[str, str]]:
    """The link health of ibdiagnet's output folder ``path``."""
    return read_bundle(folder_bundle(Path(path), max_bytes), warnings)
