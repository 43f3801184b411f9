"""The one way in for every input file: bytes from a path or an upload, gunzipped, decoded.

Which one is decided by the caller, never guessed from a string: text from a request is only ever
passed to :func:`to_text`; only trusted callers name a file (``pathlib.Path``) to :func:`read_text`.

Every reader (fabric files, OpenSM LFT dumps, partitions.conf, uploads, the CLI) gets its
text from :func:`read_text` (a file that a trusted caller names: the CLI, settings, a collector's
configured path) or :func:`to_text` (content: an upload, a request's text), so a gzip-compressed
file (``.gz`` from a log collector, ``ibdiagnet`` archives, ``opensm-lfts.dump.gz``) is read
transparently wherever a plain one is. Compression is recognised by the gzip magic number (RFC 1952,
``1f 8b``), never by the file name. Decompression is streamed and stops at ``max_bytes``, or (content
from a request) as soon as it expands more than ``max_ratio``-fold: a gzip bomb is refused before it is
inflated (issue 26). A truncated or corrupt stream is a
:class:`~fabric_engine.errors.FormatError` naming the source, and so is binary data
(NUL bytes) or text that is not UTF-8, with the line where it starts.

>>> import gzip
>>> to_text(gzip.compress(b"Switch 4"), "f.gz")
'Switch 4'
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from ..errors import FormatError

__all__ = ["GZIP_MAGIC", "MAX_TEXT_BYTES", "RATIO_FLOOR", "is_gzip", "gunzip", "to_text", "read_bytes", "read_text"]

#: The first two bytes of every gzip member (RFC 1952, section 2.3.1).
GZIP_MAGIC = b"\x1f\x8b"
#: Largest text accepted after decompression, in bytes (an LFT dump of a 2,048-host tree is about 15 MB).
MAX_TEXT_BYTES = 4 * 2**30
_CHUNK = 1 << 20
#: Output below which the ratio of :func:`gunzip` is not checked: a small file may deflate well.
RATIO_FLOOR = 1 << 20


def is_gzip(data: bytes) -> bool:
    """True if ``data`` starts with the gzip magic number."""
    return data[:2] == GZIP_MAGIC


def gunzip(data: bytes, source: str, max_bytes: int = MAX_TEXT_BYTES, max_ratio: float | None = None) -> bytes:
    """Inflate every gzip member of ``data``; raises :class:`FormatError` when corrupt, truncated or too large.

    Checked as it inflates, a megabyte at a time, before the output is held: at most ``max_bytes`` out, and
    (``max_ratio``, for content from a request) at most ``max_ratio`` bytes out per byte in once the output
    passes :data:`RATIO_FLOOR` (text deflates about 10:1, a gzip bomb 1,000:1).
    """
    out: list[bytes] = []
    total = 0
    done = 0  # bytes of ``data`` before the current member
    rest = data

    def account(chunk: bytes, d) -> None:
        nonlocal total
        total += len(chunk)
        if total > max_bytes:
            raise FormatError(source, None, f"more than {max_bytes:,} bytes once decompressed")
        if max_ratio is not None and total > RATIO_FLOOR:
            consumed = done + len(rest) - len(d.unconsumed_tail) - len(d.unused_data)
            if total > max_ratio * max(consumed, 1):
                raise FormatError(source, None, f"expands more than {max_ratio:g}-fold once decompressed "
                                                f"(a decompression bomb?): refused")
        out.append(chunk)

    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        buf = rest
        try:
            while buf:
                account(d.decompress(buf, _CHUNK), d)
                buf = d.unconsumed_tail
            while not d.eof:  # output still buffered inside the decompressor
                chunk = d.decompress(b"", _CHUNK)
                if not chunk:
                    break
                account(chunk, d)
        except zlib.error as exc:
            raise FormatError(source, None, f"corrupt gzip data ({exc})") from None
        if not d.eof:
            raise FormatError(source, None, "truncated gzip data (the compressed stream ends early)")
        done += len(rest) - len(d.unused_data)
        rest = d.unused_data.lstrip(b"\x00")  # members may be concatenated (and padded with zeros)
        done += len(d.unused_data) - len(rest)
        if rest and not is_gzip(rest):
            raise FormatError(source, None, "trailing bytes after the gzip data")
    return b"".join(out)


def to_text(data: bytes | str, source: str, max_bytes: int = MAX_TEXT_BYTES, max_ratio: float | None = None) -> str:
    """The UTF-8 text of ``data`` (gunzipped when compressed, see :func:`gunzip`); binary or non-UTF-8 data is a
    :class:`FormatError`."""
    if isinstance(data, str):
        text = data
    else:
        if is_gzip(data):
            data = gunzip(data, source, max_bytes, max_ratio)
        elif len(data) > max_bytes:
            raise FormatError(source, None, f"larger than {max_bytes:,} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise FormatError(source, line, "not UTF-8 text (a binary file?)") from None
    nul = text.find("\x00")
    if nul >= 0:
        raise FormatError(source, text.count("\n", 0, nul) + 1, "binary data (NUL bytes), not text")
    return text


def read_bytes(path: str | os.PathLike, source: str | None = None) -> bytes:
    """The bytes of the file at ``path``; a :class:`FormatError` naming it when it cannot be read."""
    p = Path(path)
    try:
        return p.read_bytes()
    except IsADirectoryError:
        raise FormatError(source or str(p), None, "is a directory, not a file") from None
    except OSError as exc:
        raise FormatError(source or str(p), None, f"cannot read: {exc.strerror or exc}") from None


def read_text(path: str | os.PathLike, source: str | None = None, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The text of the file at ``path``, gunzipped when compressed (see module doc)."""
    source = source or str(path)
    return to_text(read_bytes(path, source), source, max_bytes)
