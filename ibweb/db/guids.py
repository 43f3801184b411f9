"""A 64-bit GUID as the database stores it: a signed 64-bit integer (the two's complement of the unsigned GUID),
since ``BigIntegerField`` holds no value past ``2**63 - 1``."""

from __future__ import annotations

__all__ = ["signed", "unsigned"]


def signed(guid: int) -> int:
    """An unsigned 64-bit GUID as the signed integer the database stores."""
    return guid - (1 << 64) if guid >= 1 << 63 else guid


def unsigned(value: int) -> int:
    """The GUID a stored signed integer is."""
    return value & ((1 << 64) - 1)
