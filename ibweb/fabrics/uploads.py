"""Fabrics from uploaded topology files (ibnetdiscover output and its dialects, ibsim net files, ibweb JSON;
gzip or not).

An upload is its bytes, read as they came (:func:`fabric_engine.formats.read` of ``bytes``): nothing from a
request names a file on the server (issue 26). A ``topology_file`` (or GUID file) that is a text field
instead of a file, such as ``/etc/passwd``, is refused with :data:`NOT_A_PATH` at its field; a fabric's
``spec`` holds the topology itself, never a file name.

A gzip upload is inflated once, checked as it inflates (:mod:`ibweb.http.inflate`): at most as much text as the
file's limit allows uncompressed, and no more than 100-fold.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import detect_bytes, ibdiagnet, read, to_text
from fabric_engine.formats.ibdiagnet_archive import is_archive
from fabric_engine.formats.json_format import to_json
from fabric_engine.routing.guid_files import MAX_GUID_FILE_BYTES, parse_guids

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
    return fabric_from_upload(uploaded, field)[1]


def fabric_from_upload(uploaded, field: str = "topology_file"):
    """``(engine Fabric, topology spec)`` of an uploaded file; see :func:`topology_from_upload`."""
    name = getattr(uploaded, "name", "upload")
    if uploaded.size > MAX_UPLOAD_BYTES:
        raise ValidationError({field: f"{name}: larger than {MAX_UPLOAD_BYTES // 2**20} MiB"})
    raw = inflated(uploaded.read(), name, field, MAX_UPLOAD_BYTES)
    counters = None
    try:
        fmt = detect_bytes(raw, name, name, MAX_UPLOAD_BYTES)
        if fmt == "ibdiagnet" and is_archive(raw):  # ibdiagnet's folder: its port counters come along
            capture = ibdiagnet.load_archive(raw, name, max_bytes=MAX_UPLOAD_BYTES)
            fabric, counters = capture.fabric, capture.counter_summary()
        else:
            fabric = read(raw, fmt=fmt, source=name, max_bytes=MAX_UPLOAD_BYTES)
    except FabricEngineError as exc:
        raise ValidationError({field: str(exc)}) from None
    warnings = fabric.meta.get("warnings") or []
    return fabric, {"source": name, "format": fmt, **({"warnings": warnings} if warnings else {}),
                    **({"counters": counters} if counters is not None else {}), "fabric": to_json(fabric)}


def guid_list(uploaded, field: str) -> list[int]:
    """The GUIDs of an uploaded OpenSM guid file (root, cn or io); :class:`ValidationError` keyed by ``field``."""
    name = getattr(uploaded, "name", "upload")
    if uploaded.size > MAX_GUID_FILE_BYTES:
        raise ValidationError({field: f"{name}: larger than {MAX_GUID_FILE_BYTES // 2**20} MiB"})
    try:
        return parse_guids(to_text(inflated(uploaded.read(), name, field, MAX_GUID_FILE_BYTES), name), name)
    except FabricEngineError as exc:
        raise ValidationError({field: str(exc)}) from None
