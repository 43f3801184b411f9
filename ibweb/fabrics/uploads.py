"""Fabrics from uploaded topology files (ibnetdiscover output and its dialects, ibsim net files, ibweb JSON;
gzip or not).

An upload is its bytes, read as they came (:func:`fabric_engine.formats.read` of ``bytes``): nothing from a
request names a file on the server (issue 26). A ``topology_file`` (or GUID file) that is a text field
instead of a file, such as ``/etc/passwd``, is refused with :data:`NOT_A_PATH` at its field; a fabric's
``spec`` holds the topology itself, never a file name.

A gzip upload is inflated once, checked as it inflates (:mod:`ibweb.http.inflate`): at most as much text as the
file's limit allows uncompressed, and no more than 100-fold.

An ibdiagnet archive keeps its link health too (issue 37): the PHY/BER, cable and port counter sections of its
``ibdiagnet2.db_csv`` and its ``ibdiagnet2.cables`` (:mod:`fabric_engine.health.ibdiagnet_bundle`), matched to
the uploaded fabric's ports (:func:`ibweb.runtime.health_ports.match_ports`). The spec says what was found
(``topology.health``: ports, unknown ports, files; ``refused`` when a reader refused a health file: the
topology stands without its health), the lines skipped and the refusal with its file and line among the
topology's ``warnings`` (shown to operators only); the readings go to the fabric's health readings once it is saved
(:func:`keep_health`, :mod:`ibweb.runtime.health_readings`), as a push of the same captures would.
"""

from __future__ import annotations

import time

from django.core.exceptions import ValidationError

from fabric_engine.captured import capped
from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import detect_bytes, ibdiagnet, read, to_text
from fabric_engine.formats.ibdiagnet_archive import is_archive
from fabric_engine.formats.json_format import to_json
from fabric_engine.health import ibdiagnet_bundle
from fabric_engine.health.records import HealthRecords
from fabric_engine.routing.guid_files import MAX_GUID_FILE_BYTES, parse_guids
from fabric_engine.topology import Fabric

from ..http.inflate import inflated

#: Largest topology file accepted: the ibnetdiscover output of the largest radix-64 subnet (45,248 hosts,
#: 3,878 switches) is 24 MiB; real NodeDescriptions are longer, so the limit leaves more than twice that.
MAX_UPLOAD_BYTES = 64 * 2**20
#: The answer to a file field sent as text (a file name or path): the server reads only what is uploaded.
NOT_A_PATH = "upload the file itself (multipart/form-data): a file name or path is never read on the server"


def topology_from_upload(uploaded, field: str = "topology_file") -> dict:
    """The ``topology`` spec of an uploaded file, validated in full before anything is saved.

    Raises :class:`ValidationError` keyed by ``field`` with the file name and line of the first problem.
    Lines the reader skipped (a capture's prompts, banners, stderr) are the spec's ``warnings``:
    ``[{line, text, reason}]``.
    """
    return upload_with_health(uploaded, field)[1]


def fabric_from_upload(uploaded, field: str = "topology_file"):
    """``(engine Fabric, topology spec)`` of an uploaded file; see :func:`topology_from_upload`."""
    return upload_with_health(uploaded, field)[:2]


def upload_with_health(uploaded, field: str = "topology_file") -> tuple[Fabric, dict, HealthRecords | None]:
    """``(engine Fabric, topology spec, link health rows or None)`` of an uploaded file (see the module doc)."""
    name = getattr(uploaded, "name", "upload")
    if uploaded.size > MAX_UPLOAD_BYTES:
        raise ValidationError({field: f"{name}: larger than {MAX_UPLOAD_BYTES // 2**20} MiB"})
    raw = inflated(uploaded.read(), name, field, MAX_UPLOAD_BYTES)
    counters = health = rows = None
    health_warnings: list[dict] = []
    try:
        fmt = detect_bytes(raw, name, name, MAX_UPLOAD_BYTES)
        if fmt == "ibdiagnet" and is_archive(raw):  # ibdiagnet's folder: its port counters and link health come along
            capture = ibdiagnet.load_archive(raw, name, max_bytes=MAX_UPLOAD_BYTES)
            fabric, counters = capture.fabric, capture.counter_summary()
            rows, health, health_warnings = _health(raw, name, fabric)
        else:
            fabric = read(raw, fmt=fmt, source=name, max_bytes=MAX_UPLOAD_BYTES)
    except FabricEngineError as exc:
        raise ValidationError({field: str(exc)}) from None
    warnings = [*capped(fabric.meta.get("warnings") or []), *capped(health_warnings)]
    return fabric, {"source": name, "format": fmt, **({"warnings": warnings} if warnings else {}),
                    **({"counters": counters} if counters is not None else {}),
                    **({"health": health} if health is not None else {}), "fabric": to_json(fabric)}, rows


def _health(raw: bytes, name: str, fabric: Fabric) -> tuple[HealthRecords | None, dict | None, list[dict]]:
    """The archive's link health matched to ``fabric``'s ports, what the spec says of it (None: none) and the
    warnings for the spec's operator-only ``warnings`` (skipped lines, a refused file: they may name hosts)."""
    from ibweb.runtime.health_ports import match_ports

    found: list[dict] = []
    try:
        rec, files = ibdiagnet_bundle.read_archive(raw, name, found, MAX_UPLOAD_BYTES)
    except FabricEngineError as exc:
        return None, {"ports": 0, "refused": True}, [{"line": None, "text": "", "reason":
                                                      f"link health not kept: {exc}"}]
    if rec is None:
        return None, None, []
    rows, dropped = match_ports(fabric, rec)
    rows.data["t"][:] = time.time()  # read now, as a pushed capture is
    warnings = [{"line": w["line"], "text": w["text"], "reason": f"{w['source']}: {w['reason']}"} for w in found]
    return rows, {"ports": len(rows), "unknown_ports": int(dropped.size), "files": files}, warnings


def keep_health(fabric_id: int, rows: HealthRecords | None) -> int:
    """Add an upload's link health rows to the saved fabric's readings; the ports kept (0: none to keep)."""
    if rows is None or not len(rows):
        return 0
    from ibweb.runtime import health_readings

    return health_readings.put(fabric_id, rows)


def guid_list(uploaded, field: str) -> list[int]:
    """The GUIDs of an uploaded OpenSM guid file (root, cn or io); :class:`ValidationError` keyed by ``field``."""
    name = getattr(uploaded, "name", "upload")
    if uploaded.size > MAX_GUID_FILE_BYTES:
        raise ValidationError({field: f"{name}: larger than {MAX_GUID_FILE_BYTES // 2**20} MiB"})
    try:
        return parse_guids(to_text(inflated(uploaded.read(), name, field, MAX_GUID_FILE_BYTES), name), name)
    except FabricEngineError as exc:
        raise ValidationError({field: str(exc)}) from None
