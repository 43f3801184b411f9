"""Compressed uploads inflated once, within limits, before anything reads them (issue 26).

A gzip upload (a ``.gz`` file, or a ``.tar.gz`` of ibdiagnet's folder) is inflated here, a megabyte at a
time (:func:`fabric_engine.formats.gunzip`), and refused as soon as its output passes the file's
limit (the same as for the file uncompressed: a compressed file may hold no more) or it expands more than
:data:`MAX_RATIO`-fold: a 260 KB gzip that inflates to 256 MiB is refused after its first megabyte, in
milliseconds, instead of being inflated, decoded and parsed (12 s, +500 MB). Readers then get the plain
bytes, so the file is inflated once, not once per look at it.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from fabric_engine.errors import FormatError
from fabric_engine.formats import gunzip, is_gzip

__all__ = ["MAX_RATIO", "inflated"]

#: Most bytes out per compressed byte in: topology files, partitions.conf and GUID lists deflate 8-11:1
#: (``gzip -9`` of a 2,048-host fat tree's ibnetdiscover, ibsim and JSON files); a gzip bomb 1,000:1.
MAX_RATIO = 100


def inflated(raw: bytes, name: str, field: str, max_bytes: int) -> bytes:
    """``raw`` gunzipped when it is gzip data, else as it is; at most ``max_bytes`` either way.

    Raises :class:`ValidationError` keyed by ``field``, naming the file and the limit it passed.
    """
    if not is_gzip(raw):
        if len(raw) > max_bytes:
            raise ValidationError({field: f"{name}: larger than {max_bytes:,} bytes"})
        return raw
    try:
        return gunzip(raw, name, max_bytes, MAX_RATIO)
    except FormatError as exc:  # names the file and the limit it passed
        raise ValidationError({field: str(exc)}) from None
