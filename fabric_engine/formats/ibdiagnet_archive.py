"""The ibdiagnet files of an output folder or of an uploaded archive, found and read safely.

Operators send ibdiagnet's output folder (``/var/tmp/ibdiagnet2``) as a ``.tar.gz``/``.tgz`` (also
``.tar``, ``.tar.bz2``, ``.tar.xz``) or a ``.zip``, or one of its files alone, possibly gzipped. Only
the members named :data:`KNOWN` (optionally ``.gz``) are read, in whatever subfolder they are; the
rest is listed, never read. Before anything is decompressed into memory: at most :data:`MAX_MEMBERS`
members, member sizes summing to at most :data:`MAX_ARCHIVE_BYTES` (and ``max_bytes``), each file read at most
``max_bytes`` (:data:`~fabric_engine.formats._input.MAX_TEXT_BYTES`). A member whose name is absolute
or climbs out with ``..`` makes the whole archive refused, as does a known name that is a link, or
two members of one kind (two captures in one archive). Only the standard library reads archives.
"""

from __future__ import annotations

import io
import lzma
import os
import posixpath
import stat
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError
from ._input import MAX_TEXT_BYTES, is_gzip, read_text, to_text

__all__ = ["is_archive", "KNOWN", "KNOWN_NAMES", "MAX_MEMBERS", "MAX_ARCHIVE_BYTES", "MAX_TAR_HEADER_BYTES", "Member",
           "Bundle", "folder_bundle", "archive_bundle", "kind_of"]

#: File name -> kind, for the ibdiagnet files that are read.
KNOWN: dict[str, str] = {"ibdiagnet2.db_csv": "db_csv", "ibdiagnet2.lst": "lst", "ibdiagnet2.net_dump": "net_dump",
                         "ibdiagnet2.pm": "pm", "ibdiagnet2.cables": "cables"}
#: Kind -> file name.
KNOWN_NAMES: dict[str, str] = {kind: name for name, kind in KNOWN.items()}
#: Most members (files, folders, links) an archive or folder may have; an ibdiagnet run writes about 40 files.
MAX_MEMBERS = 10_000
#: Most bytes all members of an archive may declare together.
MAX_ARCHIVE_BYTES = MAX_TEXT_BYTES
#: Largest pax or GNU long-name header: ``tarfile`` reads these whole into memory (real ones are < 1 KiB).
MAX_TAR_HEADER_BYTES = 1 << 20
_ARCHIVE_ERRORS = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, zlib.error,
                   lzma.LZMAError, RuntimeError, NotImplementedError, ValueError)


class _BoundedTarInfo(tarfile.TarInfo):
    """A ``TarInfo`` that refuses, before ``tarfile`` reads them, oversized extended headers and sparse files."""

    def _proc_member(self, tf):  # tarfile's hook choosing how a header is processed
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise tarfile.HeaderError(f"sparse member {self.name[:100]!r}: ibdiagnet writes none")
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
                         tarfile.SOLARIS_XHDTYPE) and self.size > MAX_TAR_HEADER_BYTES:
            raise tarfile.HeaderError(f"extended header of {self.size:,} bytes (more than {MAX_TAR_HEADER_BYTES:,})")
        return super()._proc_member(tf)


def kind_of(name: str) -> str | None:
    """The kind of ibdiagnet file a member or file name stands for (``".../ibdiagnet2.lst.gz"`` -> ``"lst"``)."""
    base = posixpath.basename(name.replace("\\", "/"))
    return KNOWN.get(base[:-3] if base.endswith(".gz") else base)


@dataclass(frozen=True)
class Member:
    """One known file: its ``kind``, ``name`` (path inside the archive or folder), ``size`` and ``mtime``."""

    kind: str
    name: str
    size: int
    mtime: float | None


class Bundle:
    """The known files of one capture; :meth:`read` gives a file's text."""

    def __init__(self, source: str, members: dict[str, Member], reader, max_bytes: int) -> None:
        self.source = source
        self.members = members
        self._reader = reader
        self._max_bytes = max_bytes

    def member_source(self, kind: str) -> str:
        """Name used in error messages for the member of ``kind``."""
        return f"{self.source}:{self.members[kind].name}" if self.members[kind].name != self.source else self.source

    def read(self, kind: str) -> str:
        """The text of the member of ``kind`` (gunzipped when compressed)."""
        src = self.member_source(kind)
        try:
            raw = self._reader(self.members[kind])
        except FormatError:
            raise
        except _ARCHIVE_ERRORS as exc:
            raise FormatError(src, None, f"cannot read from the archive: {exc}") from None
        if isinstance(raw, str):
            return raw
        if len(raw) > self._max_bytes and not is_gzip(raw):
            raise FormatError(src, None, f"larger than {self._max_bytes:,} bytes")
        return to_text(raw, src, self._max_bytes)


def _add(found: dict[str, Member], source: str, name: str, size: int, mtime: float | None, max_bytes: int) -> None:
    kind = kind_of(name)
    if kind is None:
        return
    if kind in found:
        raise FormatError(source, None, f"two {KNOWN_NAMES[kind]} ({found[kind].name} and {name}): "
                                        f"send the files of one ibdiagnet run")
    if size > max_bytes:
        raise FormatError(source, None, f"{name} is {size:,} bytes, more than the {max_bytes:,} read")
    found[kind] = Member(kind, name, size, mtime)


def _check_name(source: str, name: str) -> None:
    n = name.replace("\\", "/")
    if n.startswith("/") or (len(n) > 1 and n[1] == ":") or ".." in n.split("/"):
        raise FormatError(source, None, f"archive member {name[:200]!r} points outside the archive (absolute "
                                        f"path or '..'); archive refused")


def folder_bundle(path: str | os.PathLike, max_bytes: int = MAX_TEXT_BYTES) -> Bundle:
    """The known files under folder ``path`` (in any subfolder; links to folders are not followed)."""
    root = Path(path)
    source = str(root)
    if not root.is_dir():
        raise FormatError(source, None, "not a folder")
    found: dict[str, Member] = {}
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        seen += len(dirnames) + len(filenames)
        if seen > MAX_MEMBERS:
            raise FormatError(source, None, f"more than {MAX_MEMBERS:,} files: not an ibdiagnet output folder")
        for fn in filenames:
            if kind_of(fn) is None:
                continue
            p = Path(dirpath) / fn
            try:
                st = p.stat()
            except OSError as exc:
                raise FormatError(str(p), None, f"cannot read: {exc.strerror or exc}") from None
            _add(found, source, str(p.relative_to(root)), st.st_size, st.st_mtime, max_bytes)
    return Bundle(source, found, lambda m: read_text(root / m.name, f"{source}:{m.name}", max_bytes), max_bytes)


def is_archive(data: bytes) -> bool:
    """True if ``data`` is a zip or a tar (plain or gzip-, bzip2- or xz-compressed), by magic numbers only.

    A compressed file is looked into for its first tar header (``ustar`` at offset 257, POSIX.1-1988),
    inflating at most 512 bytes.
    """
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return True
    head = data[:512]
    try:
        if is_gzip(data):
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[:65536], 512)
        elif data[:6] == b"\xfd7zXZ\x00":
            head = lzma.LZMADecompressor().decompress(data[:65536], 512)
        elif data[:3] == b"BZh":
            import bz2

            head = bz2.BZ2Decompressor().decompress(data[:65536], 512)
    except (zlib.error, lzma.LZMAError, OSError, EOFError):
        return False
    return head[257:262] == b"ustar"


def archive_bundle(data: bytes, source: str, max_bytes: int = MAX_TEXT_BYTES,
                   detect: Callable[[str], str | None] | None = None) -> Bundle:
    """The known files of an uploaded archive (zip, tar, compressed tar) or of one uploaded file.

    A lone file's kind comes from its name, else from ``detect(text)``.
    """
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return _zip(data, source, max_bytes)
    try:
        # The archive is in memory and its members are read later: the TarFile stays open.
        tf = tarfile.open(fileobj=io.BytesIO(data), mode="r:*", tarinfo=_BoundedTarInfo)  # noqa: SIM115
    except tarfile.HeaderError as exc:
        raise FormatError(source, None, f"archive refused: {exc}") from None
    except tarfile.ReadError:
        tf = None  # not a tar: one file, perhaps gzipped
    except _ARCHIVE_ERRORS as exc:
        raise FormatError(source, None, f"corrupt archive: {exc}") from None
    if tf is not None:
        return _tar(tf, source, max_bytes)
    text = to_text(data, source, max_bytes)
    kind = kind_of(source) or (detect(text) if detect else None)
    found = {kind: Member(kind, source, len(text), None)} if kind else {}
    return Bundle(source, found, lambda m: text, max_bytes)


def _zip(data: bytes, source: str, max_bytes: int) -> Bundle:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except _ARCHIVE_ERRORS as exc:
        raise FormatError(source, None, f"corrupt zip archive: {exc}") from None
    if len(infos) > MAX_MEMBERS:
        raise FormatError(source, None, f"more than {MAX_MEMBERS:,} members: not an ibdiagnet output archive")
    found: dict[str, Member] = {}
    for info in infos:
        _check_name(source, info.filename)
        if info.is_dir() or kind_of(info.filename) is None:
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            raise FormatError(source, None, f"archive member {info.filename!r} is a link, not a file")
        mtime = time.mktime((*info.date_time, 0, 0, -1))
        _add(found, source, info.filename, info.file_size, mtime, max_bytes)

    def read(m: Member) -> bytes:
        with zf.open(m.name) as f:
            raw = f.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise FormatError(f"{source}:{m.name}", None, f"larger than {max_bytes:,} bytes")
        return raw

    return Bundle(source, found, read, max_bytes)


def _tar(tf: tarfile.TarFile, source: str, max_bytes: int) -> Bundle:
    found: dict[str, Member] = {}
    infos: dict[str, tarfile.TarInfo] = {}
    count = total = 0
    try:
        while (info := tf.next()) is not None:
            count += 1
            total += max(info.size, 0)
            if count > MAX_MEMBERS:
                raise FormatError(source, None, f"more than {MAX_MEMBERS:,} members: not an ibdiagnet output archive")
            if total > MAX_ARCHIVE_BYTES:
                raise FormatError(source, None, f"members of more than {MAX_ARCHIVE_BYTES:,} bytes in all")
            _check_name(source, info.name)
            known = kind_of(info.name) is not None and not info.isdir()
            if known and not info.isfile():
                raise FormatError(source, None, f"archive member {info.name!r} is a link or device, not a file")
            if known:
                _add(found, source, info.name, info.size, float(info.mtime), max_bytes)
            if total > max_bytes:  # walking a compressed tar inflates all of it
                raise FormatError(source, None, f"members of more than {max_bytes:,} bytes in all")
            if not known:
                continue
            infos[info.name] = info
    except FormatError:
        raise
    except _ARCHIVE_ERRORS as exc:
        raise FormatError(source, None, f"corrupt archive: {exc}") from None

    def read(m: Member) -> bytes:
        f = tf.extractfile(infos[m.name])
        return f.read(max_bytes + 1) if f is not None else b""

    return Bundle(source, found, read, max_bytes)
