"""Hidden names in a free text replaced by their labels: the one place a finished text is relabelled.

A name is replaced wherever it stands whole. Host names hold ``.`` and ``-`` (``gpu001.cluster``,
``dgx-01``), so those two end a name only when no letter or digit follows (before: precedes) them:
``gpu001.`` at the end of a sentence, ``gpu001->leaf01`` and ``(gpu001)`` show the name whole, while
``gpu001.cluster`` and ``gpu001-ib`` are other names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["names_pattern", "relabel", "candidates"]

_BEFORE = r"(?<!\w)(?<!\w[.-])"
_WORD = re.compile(r"\S+")
_AFTER = r"(?!\w)(?![.-]\w)"


def names_pattern(names: Iterable[str]) -> re.Pattern:
    """One pattern matching any of ``names`` standing whole (longest first, so a name inside another loses)."""
    alternatives = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True) if n)
    return re.compile(rf"{_BEFORE}(?:{alternatives}){_AFTER}" if alternatives else r"(?!)")


def relabel(text: str, labels: dict[str, str], pattern: re.Pattern | None = None) -> str:
    """``text`` with every whole occurrence of a name of ``labels`` replaced by its label.

    ``pattern``: :func:`names_pattern` of the labels' names, when the caller keeps one for many texts.

    >>> relabel("failed switch next to gpu001.", {"gpu001": "host-7"})
    'failed switch next to host-7.'
    >>> relabel("path gpu001->leaf01, not gpu001-ib", {"gpu001": "host-7"})
    'path host-7->leaf01, not gpu001-ib'
    """
    if not text or not labels:
        return text
    if pattern is None:
        found = [n for n in labels if n and n in text]  # a substring test per name before any pattern
        if not found:
            return text
        pattern = names_pattern(found)
    return pattern.sub(lambda m: labels[m.group(0)], text)


def candidates(text: str, words: int = 1, longest: int = 64) -> set[str]:
    """Every part of ``text`` that may be a whole name (or GUID): what a caller looks up to find the names a
    free text holds.

    Parts of at most ``words`` words and ``longest`` characters that begin and end at the edges of their
    words or next to a character that is not a letter or digit. A superset of the whole names
    (``gpu001`` of ``gpu001-ib`` is one): :func:`relabel` replaces only whole ones.

    >>> sorted(candidates("to gpu001."))
    ['gpu001', 'gpu001.', 'to']
    """
    spans = [m.span() for m in _WORD.finditer(text)]
    out: set[str] = set()
    for a in range(len(spans)):  # a message of a few dozen words, names of a few words
        for b in range(a, min(a + words, len(spans))):
            run = text[spans[a][0]:spans[b][1]]
            edges = [k for k, ch in enumerate(run) if not ch.isalnum()]
            starts, ends = [0, *(k + 1 for k in edges)], [*edges, len(run)]
            out |= {run[i:j] for i in starts for j in ends if 0 < j - i <= longest}
    return out
