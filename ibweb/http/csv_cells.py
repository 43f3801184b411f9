"""CSV cells a spreadsheet will not run: text it would read as a formula (``=``, ``+``, ``-``, ``@``, a tab or a
carriage return first) is quoted with a leading ``'`` (OWASP's CSV injection advice)."""

from __future__ import annotations

__all__ = ["csv_cell"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value) -> object:
    """``value`` as a CSV cell: None empty, formula-like text quoted, anything else as it is."""
    if value is None:
        return ""
    return "'" + value if isinstance(value, str) and value[:1] in _FORMULA_START else value
