"""Slurm hostlist expressions (``dgx[001-032]``, ``dgx[001-004,010],gpu-a[1-2]``), counted before they are expanded.

Expansion is ClusterShell's :class:`~ClusterShell.NodeSet.NodeSet` (the CEA's node set
library, LGPLv2+), with group resolution off so an expression never reads a group
file or runs a group command. ClusterShell builds every name of a range as it
parses it, so an expression from outside is first checked against Slurm's grammar
and *counted* here, with arithmetic only: an expression naming more hosts than
``limit`` (the fabric's host count) is refused before anything is allocated.

Grammar accepted (Slurm's ``hostlist_create``): terms separated by commas outside
brackets; a term is literal characters (letters, digits, ``.``, ``_``, ``-``) and
bracket groups of comma-separated numbers or ``lo-hi`` ranges, zero padding kept
(``[001-010]``); several groups in a term multiply (``rack[1-2]-n[01-04]``: 8 hosts).

>>> expand_hostlist("dgx[001-003],gpu-a[1-2]", limit=10)
['dgx001', 'dgx002', 'dgx003', 'gpu-a1', 'gpu-a2']
>>> hostlist_size("rack[1-2]-n[01-04]")
8
"""

from __future__ import annotations

import re

from ..errors import FormatError

__all__ = ["hostlist_size", "expand_hostlist", "fold_hostlist", "MAX_EXPRESSION_CHARS"]

#: Longest expression read (a hostlist of 32,768 hosts written out in full is about 300 KB).
MAX_EXPRESSION_CHARS = 1 << 20
_LITERAL = re.compile(r"[A-Za-z0-9._-]+")
_RANGE = re.compile(r"(\d{1,18})(?:-(\d{1,18}))?")


def _terms(expr: str, source: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the top-level comma-separated terms; checks brackets balance."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch == "[":
            if depth:
                raise FormatError(source, None, f"hostlist {_short(expr)!r}: nested '[' at character {i + 1}")
            depth = 1
        elif ch == "]":
            if not depth:
                raise FormatError(source, None, f"hostlist {_short(expr)!r}: ']' without '[' at character {i + 1}")
            depth = 0
        elif ch == "," and not depth:
            out.append((start, i))
            start = i + 1
    if depth:
        raise FormatError(source, None, f"hostlist {_short(expr)!r}: '[' is not closed")
    out.append((start, len(expr)))
    return out


def _short(expr: str, most: int = 80) -> str:
    return expr if len(expr) <= most else expr[:most] + "..."


def _group_size(body: str, expr: str, source: str) -> int:
    """Number of values of one bracket group (``"001-004,010"`` -> 5)."""
    total = 0
    for part in body.split(","):
        m = _RANGE.fullmatch(part.strip())
        if m is None:
            raise FormatError(source, None, f"hostlist {_short(expr)!r}: {part!r} is not a number or a lo-hi range")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise FormatError(source, None, f"hostlist {_short(expr)!r}: range {part!r} runs backwards")
        total += hi - lo + 1
    return total


def hostlist_size(expr: str, *, source: str = "<text>", limit: int | None = None) -> int:
    """How many host names ``expr`` stands for (duplicates counted), without building any of them.

    Raises :class:`~fabric_engine.errors.FormatError` (naming ``source``) for an expression
    outside the grammar, longer than :data:`MAX_EXPRESSION_CHARS`, or, with ``limit``, naming
    more than ``limit`` hosts (counting stops as soon as it passes ``limit``).
    """
    if not isinstance(expr, str):
        raise FormatError(source, None, f"hostlist must be a string, not {type(expr).__name__}")
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise FormatError(source, None, f"hostlist is {len(expr)} characters, more than {MAX_EXPRESSION_CHARS}")
    expr = expr.strip()
    if not expr:
        return 0
    total = 0
    for start, end in _terms(expr, source):
        term = expr[start:end].strip()
        if not term:
            raise FormatError(source, None, f"hostlist {_short(expr)!r}: empty name at character {start + 1}")
        count, pos = 1, 0
        while pos < len(term):
            if term[pos] == "[":
                close = term.index("]", pos)
                count *= _group_size(term[pos + 1:close], expr, source)
                pos = close + 1
            else:
                m = _LITERAL.match(term, pos)
                if m is None:
                    raise FormatError(source, None, f"hostlist {_short(expr)!r}: character {term[pos]!r} is not "
                                                    "allowed in a host name")
                pos = m.end()
        total += count
        if limit is not None and total > limit:
            raise FormatError(source, None, f"hostlist {_short(expr)!r} names more than {limit} hosts")
    return total


def expand_hostlist(expr: str, *, limit: int, source: str = "<text>") -> list[str]:
    """The host names of ``expr``, sorted as Slurm and ClusterShell list them, each once.

    ``limit`` bounds the count (checked by :func:`hostlist_size` before expanding).

    >>> expand_hostlist("n[9-11]", limit=3)
    ['n9', 'n10', 'n11']
    """
    if hostlist_size(expr, source=source, limit=limit) == 0:
        return []
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet, NodeSetException

    try:
        return list(NodeSet(expr.strip(), resolver=RESOLVER_NOGROUP))
    except (NodeSetException, ValueError) as exc:
        raise FormatError(source, None, f"hostlist {_short(expr)!r}: {exc}") from None


def fold_hostlist(names) -> str:
    """The shortest Slurm hostlist of ``names`` (sorted as :func:`expand_hostlist` gives them back).

    >>> fold_hostlist(["gpu0003", "gpu0001", "gpu0002", "stor01"])
    'gpu[0001-0003],stor01'
    """
    from ClusterShell.NodeSet import RESOLVER_NOGROUP, NodeSet

    return str(NodeSet.fromlist([str(n) for n in names], resolver=RESOLVER_NOGROUP))
