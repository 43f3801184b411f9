"""Fabrics from uploaded topology files (ibnetdiscover output, ibsim net files, ibweb JSON)."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from fabric_engine.errors import FabricEngineError
from fabric_engine.formats import detect, read
from fabric_engine.formats.json_format import to_json

#: Largest topology file accepted (a 20,000-host ibnetdiscover file is about 11 MB).
MAX_UPLOAD_BYTES = 64 * 2**20


def topology_from_upload(uploaded, field: str = "topology_file") -> dict:
    """The ``topology`` spec of an uploaded file, validated in full before anything is saved.

    Raises :class:`ValidationError` keyed by ``field`` with the file name and line of the first problem.
    """
    name = getattr(uploaded, "name", "upload")
    if uploaded.size > MAX_UPLOAD_BYTES:
        raise ValidationError({field: f"{name}: larger than {MAX_UPLOAD_BYTES // 2**20} MiB"})
    raw = uploaded.read()
    try:
        fmt = detect(raw.decode("utf-8", errors="replace"), name=name, source=name)
        fabric = read(raw, fmt=fmt, source=name)
    except FabricEngineError as exc:
        raise ValidationError({field: str(exc)}) from None
    return {"source": name, "format": fmt, "fabric": to_json(fabric)}
