"""Small shared helpers of the device readers: numbers and GUIDs as the tools print them, checked."""

from __future__ import annotations

import re

from ..errors import FormatError

__all__ = ["guid_of", "int_of", "float_of", "MAX_FIELD_CHARS", "device_type", "firmware", "prompt_host"]

#: Longest value a device reader keeps (a part number, a PSID, a description): longer is an error.
MAX_FIELD_CHARS = 256
_GUID = re.compile(r"(?:0x)?([0-9A-Fa-f]{1,16})")
_GUID_COLONS = re.compile(r"([0-9A-Fa-f]{4}):([0-9A-Fa-f]{4}):([0-9A-Fa-f]{4}):([0-9A-Fa-f]{4})")


def guid_of(text: str, source: str, line: int | None) -> int:
    """A GUID as ``0x0002c90300001234`` (ibstat, ibdiagnet) or ``0002:c903:0000:1234`` (ibv_devinfo)."""
    t = text.strip()
    m = _GUID_COLONS.fullmatch(t)
    if m is not None:
        return int("".join(m.groups()), 16)
    m = _GUID.fullmatch(t)
    if m is None or not t.lower().startswith("0x") and len(t) != 16:
        raise FormatError(source, line, f"{t[:40]!r} is not a GUID")
    return int(m.group(1), 16)


def int_of(text: str, source: str, line: int | None, what: str, hi: int = (1 << 63) - 1) -> int:
    """A decimal or ``0x`` hex integer in ``0..hi``."""
    t = text.strip()
    if len(t) > 40:  # checked before converting: Python's int() of a long digit string is quadratic
        raise FormatError(source, line, f"{what}: {t[:40]!r}... is not a number of at most 40 characters")
    try:
        value = int(t, 16) if t[:2] in ("0x", "0X") else int(t)
    except ValueError:
        raise FormatError(source, line, f"{what}: {t!r} is not a number") from None
    if not 0 <= value <= hi:
        raise FormatError(source, line, f"{what} {t} is outside 0..{hi}")
    return value


def float_of(text: str, source: str, line: int | None, what: str, lo: float = -1e6, hi: float = 1e6) -> float:
    """A decimal number in ``lo..hi``."""
    t = text.strip()
    if len(t) > 40:
        raise FormatError(source, line, f"{what}: {t[:40]!r}... is not a number of at most 40 characters")
    try:
        value = float(t)
    except ValueError:
        raise FormatError(source, line, f"{what}: {t[:40]!r} is not a number") from None
    if not lo <= value <= hi:
        raise FormatError(source, line, f"{what} {t[:40]} is outside {lo:g}..{hi:g}")
    return value


def device_type(device_id: int) -> str:
    """The device type as ``ibstat`` prints a CA type: ``MT`` and the PCI device ID in decimal (``MT4123``)."""
    return f"MT{device_id}"


_FW = re.compile(r"(\d{1,5})\.(\d{1,5})\.(\d{1,5})")


def firmware(text: str) -> str:
    """A firmware version as ``major.minor.subminor`` with the sub-minor on four digits (``20.31.1014``), so
    ibswinfo's ``%d.%04d.%04d``, ibstat's and ibdiagnet's forms of one version compare equal; else as given."""
    m = _FW.fullmatch(text.strip())
    if m is None:
        return text.strip()
    return f"{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3)):04d}"


_PROMPT_HOST = re.compile(r"(?:\([\w.-]+\) )?\[?[\w.-]+@([\w.-]+)[\s:\]]")


def prompt_host(line: str) -> str | None:
    """The host of a shell prompt (``[root@gpu0042 ~]#`` -> ``gpu0042``), if the line starts with one."""
    m = _PROMPT_HOST.match(line.strip())
    return m.group(1) if m else None
