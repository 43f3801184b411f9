"""Readers and writers of fabric file formats.

=================  ======================================  =====================================
format             module                                  what it is
=================  ======================================  =====================================
``ibnetdiscover``  :mod:`.ibnetdiscover`                   output of infiniband-diags' ``ibnetdiscover`` (also
                                                          ibdiagnet's ``ibdiagnet2.ibnetdiscover`` and ``-g``)
``ibnetdiscover-ports`` :mod:`.ibnetdiscover_ports`        ``ibnetdiscover -p``: one line per port
``ibdiagnet``      :mod:`.ibdiagnet`                       ibdiagnet's output folder, an archive of it
                                                          (``.tar.gz``, ``.zip``), its ``ibdiagnet2.db_csv``
                                                          or ``ibdiagnet2.lst``
``ibsim``          :mod:`.ibsim`                           ibsim net file (starts a simulated subnet)
``json``           :mod:`.json_format`                     ibweb's versioned JSON (feed snapshot, REST API)
=================  ======================================  =====================================

:func:`read` infers the format from the content (JSON object; ``Switch``/``Ca`` records
with ``S-``/``H-`` GUID ids for ibnetdiscover; other ``Switch``/``Hca`` records for ibsim),
then from the file name's extension (a ``.gz`` suffix is looked through). Files and uploads may be
gzip-compressed: every reader gets its text from :mod:`._input`, which recognises gzip by its magic
number. Errors are :class:`~fabric_engine.errors.FormatError` naming the source and line; nothing is
returned half-built. Lines a terminal capture adds (prompts, banners, stderr; :mod:`fabric_engine.captured`) are
skipped, each listed in the fabric's ``meta["warnings"]`` as ``{line, text, reason}``.

>>> from fabric_engine.topology.generate import fat_tree
>>> text = write(fat_tree(hosts=4, radix=4), "ibnetdiscover")
>>> detect(text), read(text).num_hosts
('ibnetdiscover', 4)
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import FormatError
from ..topology import Fabric
from . import ibdiagnet, ibnetdiscover, ibnetdiscover_ports, ibsim, json_format
from ._common import HCA_SUFFIX
from ._input import MAX_TEXT_BYTES, gunzip, is_gzip, read_bytes, read_text, to_text
from .ibdiagnet_archive import is_archive

__all__ = ["FORMATS", "WRITABLE", "EXTENSIONS", "detect", "detect_bytes", "format_from_name", "read", "write",
           "read_text", "to_text", "gunzip", "is_gzip", "MAX_TEXT_BYTES", "HCA_SUFFIX"]

FORMATS: tuple[str, ...] = ("ibnetdiscover", "ibnetdiscover-ports", "ibdiagnet", "ibsim", "json")
#: Formats a fabric can be written in.
WRITABLE: tuple[str, ...] = ("ibnetdiscover", "ibsim", "json")
#: File name endings and the format they stand for.
EXTENSIONS: dict[str, str] = {
    ".json": "json", ".net": "ibsim", ".ibsim": "ibsim", ".ibnd": "ibnetdiscover",
    ".ibnetdiscover": "ibnetdiscover", ".topo": "ibnetdiscover",
}
# "\s*": a capture whose tabs a terminal logger dropped has "Switch41 ..." (read by .netfile, with a warning).
_IBND = re.compile(r'^(?:Switch|Ca)\s*\d+\s+"[SH]-[0-9A-Fa-f]+"', re.M)
_NET = re.compile(r'^(?:Switch|Hca|Ca)\s*\d+\s+"', re.M)


def format_from_name(name: str) -> str | None:
    """Format named by a file name's extension (``fabric.net``, ``fabric.net.gz`` -> ``"ibsim"``), or ``None``."""
    base = str(name)
    if base.lower().endswith(".gz"):
        base = base[:-3]
    return EXTENSIONS.get(os.path.splitext(base)[1].lower())


def detect(text: str, name: str | None = None, source: str = "<text>") -> str:
    """The format of ``text``: by content first, then by ``name``'s extension."""
    head = text.lstrip().lstrip("\ufeff")
    if head.startswith("{"):
        return "json"
    if _IBND.search(text):
        return "ibnetdiscover"
    if ibnetdiscover_ports.looks_like(text):
        return "ibnetdiscover-ports"
    if ibdiagnet.is_ibdiagnet(text) in ("db_csv", "lst"):
        return "ibdiagnet"
    if _NET.search(text):
        return "ibsim"
    by_name = format_from_name(name) if name else None
    if by_name:
        return by_name
    raise FormatError(source, None, f"cannot tell the format (one of {', '.join(FORMATS)}); name it explicitly")


def _check_fmt(fmt: str, source: str) -> str:
    if fmt not in FORMATS:
        raise FormatError(source, None, f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return fmt


def detect_bytes(data: bytes, name: str, source: str | None = None, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """The format of an upload's bytes: an archive is ibdiagnet's folder, else :func:`detect` on its text."""
    if is_archive(data):
        return "ibdiagnet"
    return detect(to_text(data, source or name, max_bytes), name, source or name)


def read(data: str | bytes | Path, fmt: str | None = None, source: str | None = None,
         node_name_map: dict[int, str] | None = None, max_bytes: int = MAX_TEXT_BYTES) -> Fabric:
    """Read a fabric from a file (a ``Path``) or from the file's content (``str`` or ``bytes``).

    What ``data`` is is decided by its type alone: a ``str`` is always the text, never a file name,
    whatever it looks like (``"/etc/passwd"`` is one line of text that no format reads). Only trusted
    callers (the CLI, settings, a collector's configured paths) pass a ``Path``; what comes from a
    request is ``bytes`` or ``str``.

    Parameters
    ----------
    data : Path, str or bytes
        A ``Path`` of a file or of ibdiagnet's output folder; or the content (``bytes`` are decoded as
        UTF-8, e.g. an upload). Files and bytes may be gzip-compressed, or an archive of ibdiagnet's folder.
    fmt : {"ibnetdiscover", "ibnetdiscover-ports", "ibdiagnet", "ibsim", "json"}, optional
        The format; inferred when omitted (see :func:`detect`).
    source : str, optional
        Name used in error messages and to infer the format by extension (default: the path, or ``"<text>"``).
    node_name_map : dict, optional
        Node GUID -> name (:func:`.node_name_map.read`), replacing NodeDescriptions of ``ibnetdiscover`` text.
    max_bytes : int, optional
        The most text ``data`` may hold once decompressed (an archive: each file, and all its members together).

    >>> read("/etc/passwd", "json")  # one line of text, never the file
    Traceback (most recent call last):
    ...
    fabric_engine.errors.FormatError: <text>:1: invalid JSON: Expecting value
    """
    name = None
    if isinstance(data, os.PathLike):
        path = Path(data)
        if path.is_dir():
            return ibdiagnet.read_folder(path)
        name = str(path)
        source = source or name
        data = read_bytes(path, source)
    elif isinstance(data, str | bytes):
        source = source or "<text>"
    else:
        raise TypeError(f"read() takes a Path, str or bytes, not {type(data).__name__}")
    if isinstance(data, bytes) and fmt in (None, "ibdiagnet") and is_archive(data):
        return ibdiagnet.read_archive(data, source, max_bytes)
    data = to_text(data, source, max_bytes)
    fmt = _check_fmt(fmt, source) if fmt else detect(data, name or source, source)
    if fmt == "json":
        return json_format.from_json(data, source)
    if fmt == "ibnetdiscover-ports":
        return ibnetdiscover_ports.read(data, source)
    if fmt == "ibdiagnet":
        return ibdiagnet.read(data, source)
    if fmt == "ibnetdiscover":
        return ibnetdiscover.read(data, source, node_name_map)
    return ibsim.read(data, source)


def write(fabric: Fabric, fmt: str) -> str:
    """The text of ``fabric`` in format ``fmt``."""
    if fmt not in WRITABLE:
        raise FormatError("write", None, f"cannot write {fmt!r}; writable: {', '.join(WRITABLE)}")
    if fmt == "json":
        return json.dumps(json_format.to_json(fabric), separators=(",", ":")) + "\n"
    return (ibnetdiscover if fmt == "ibnetdiscover" else ibsim).write(fabric)
