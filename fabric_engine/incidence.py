""":class:`Incidence`: a flows x columns matrix kept in the form the solver walks, built once per flow set.

The solver needs, for every flow, the links it crosses (CSR rows) and, for every
link, the flows that cross it (the transpose's pattern). Transposing a matrix of
10 million entries (the flows of 32,768 loaded GPUs) takes longer than solving
it, and the flows of the jobs do not change from one tick to the next. So an
:class:`Incidence` holds the rows as two blocks: a *fixed* block, normalized and
transposed once and kept for as long as the job set stands, and a small *extra*
block of the rows that change every tick (background load, storage traffic),
stacked below it by :meth:`Incidence.stack` without copying the fixed block.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .errors import SolverError

try:
    from . import _maxmin
except ImportError:  # pragma: no cover - see fabric_engine.flows
    _maxmin = None

__all__ = ["Incidence", "Block"]


@dataclass(frozen=True)
class Block:
    """One block of rows: CSR arrays and the transpose's pattern, in the dtypes the compiled fill takes.

    ``indptr`` int64 ``(R + 1,)``; ``indices`` int32 ``(nnz,)``; ``data`` float64 ``(nnz,)`` or ``None``
    when every share is 1 (static routing); ``t_indptr`` int64 ``(E + 1,)`` and ``t_rows`` int32 ``(nnz,)``:
    the rows of every column, ascending; ``t_data`` float64 ``(nnz,)`` their shares (``None`` with ``data``).
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray | None
    t_indptr: np.ndarray
    t_rows: np.ndarray
    t_data: np.ndarray | None
    columns: int
    longest: int = 0  #: entries of its longest row
    _scratch: list = field(default_factory=lambda: [None, threading.Lock()], repr=False, compare=False)

    @property
    def rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return len(self.indices)

    @staticmethod
    def of(matrix: sp.spmatrix | sp.sparray, columns: int | None = None) -> Block:
        """Validate and normalize ``matrix`` (no negative or duplicate entries, zeros dropped) and transpose it."""
        a = sp.csr_matrix(matrix, dtype=np.float64)
        if columns is not None and a.shape[1] != columns:
            raise SolverError(f"incidence has {a.shape[1]} columns, expected {columns}")
        if a.nnz and (a.data <= 0).any() or not a.has_canonical_format:
            a = a.copy()
            if (a.data < 0).any():
                raise SolverError("incidence has negative entries")
            a.eliminate_zeros()
            a.sum_duplicates()
        e = a.shape[1]
        if e >= 2**31 - 1 or a.shape[0] >= 2**62:
            raise SolverError(f"incidence has {e} columns, more than the solver indexes")
        if a.nnz and (a.indices.min() < 0 or a.indices.max() >= e):  # the compiled fill trusts them from here on
            raise SolverError("incidence has a column index outside its shape")
        indices = a.indices.astype(np.int32, copy=False)
        data = None if a.nnz == 0 or (a.data == 1.0).all() else a.data
        # scipy's CSR -> CSC conversion is a counting sort: rows stay ascending within a column.
        t = (a if data is not None else sp.csr_matrix((np.ones(a.nnz, np.int8), a.indices, a.indptr), a.shape)).tocsc()
        longest = int(np.diff(a.indptr).max(initial=0))
        return Block(a.indptr.astype(np.int64, copy=False), indices, data, t.indptr.astype(np.int64, copy=False),
                     t.indices.astype(np.int32, copy=False), t.data if data is not None else None, e, longest)

    @staticmethod
    def empty(columns: int) -> Block:
        z = np.zeros(0, dtype=np.int32)
        return Block(np.zeros(1, np.int64), z, None, np.zeros(columns + 1, np.int64), z, None, columns)

    @contextmanager
    def scratch(self, nbytes: int):
        """A work array of at least ``nbytes`` bytes, kept for the next fill of this block (one user at a time)."""
        cache, lock = self._scratch
        if not lock.acquire(blocking=False):  # another thread fills with this block: a fresh one
            yield np.empty(-(-nbytes // 8))
            return
        try:
            if cache is None or cache.nbytes < nbytes:
                cache = self._scratch[0] = np.empty(-(-nbytes * 5 // 32))  # a quarter more, for growing extras
            yield cache
        finally:
            lock.release()

    def shares(self) -> np.ndarray:
        """The share of every entry, float64 ``(nnz,)`` (ones for a block without ``data``)."""
        return np.ones(self.nnz) if self.data is None else self.data

    def csr(self) -> sp.csr_matrix:
        return sp.csr_matrix((self.shares(), self.indices, self.indptr), shape=(self.rows, self.columns))

    def rmatvec(self, x: np.ndarray, out: np.ndarray | None = None, offset: int = 0) -> np.ndarray:
        """``A.T @ x[..., offset:offset + rows]`` (added to ``out`` when given): per column, sum of share x ``x[row]``.

        ``x`` is ``(n,)`` or ``(k, n)`` for up to 8 vectors at once (one pass over the entries); the
        result float64 ``(E,)`` or ``(k, E)``. ``offset`` lets a block read its rows of a longer ``x`` in place.
        """
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.zeros(x.shape[:-1] + (self.columns,)) if out is None else out
        if self.nnz == 0:
            return out
        if _maxmin is not None and x.ndim <= 2 and (x.ndim == 1 or x.shape[0] <= 8):
            # no array of ones for a data-less block; the column indices were checked by Block.of
            _maxmin.rmatvec(self.indptr, self.indices, self.data, x, offset, out, True)
        else:
            out += np.asarray(self.csr().T @ x[..., offset:offset + self.rows].T).T
        return out

    def group_sums(self, group: np.ndarray, x: np.ndarray, n_groups: int) -> sp.csr_matrix:
        """Per group, the rows of the group weighted by ``x`` and summed: CSR ``(n_groups, E)``.

        ``G[g, e] = sum of x[i] * A[i, e]`` over the rows ``i`` with ``group[i] == g``; ``group`` and ``x``
        cover the first ``len(group)`` rows (rows of group -1 left out). With ``x`` a row's gigabits per
        collective and its group's collective taking ``T_g`` seconds, ``G.T @ (1 / T)`` is the load of
        the paced rows on every column, without a pass over the entries.
        """
        g = np.asarray(group, dtype=np.int64)
        r = len(g)
        keep = g >= 0
        pick = sp.csr_matrix((np.ones(int(keep.sum())), (g[keep], np.flatnonzero(keep))), shape=(n_groups, r))
        p1 = int(self.indptr[r])
        weighted = self.shares()[:p1] * np.repeat(np.asarray(x, dtype=np.float64), np.diff(self.indptr[:r + 1]))
        rows = sp.csr_matrix((weighted, self.indices[:p1], self.indptr[:r + 1]), shape=(r, self.columns))
        out = (pick @ rows).tocsr()
        out.sum_duplicates()
        return out

    def rmatvec_columns(self, x: np.ndarray, cols: np.ndarray, out: np.ndarray, offset: int = 0,
                        group: np.ndarray | None = None) -> np.ndarray:
        """Add ``(A.T @ x[offset:offset + rows])[cols]`` to ``out`` (float64 ``(len(cols),)``), walking those columns.

        With ``group`` (as long as ``x``), the rows whose ``group[offset + row] < 0`` are left out.
        """
        if self.nnz == 0 or len(cols) == 0:
            return out
        x = np.ascontiguousarray(x, dtype=np.float64)
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        if _maxmin is not None:
            g = None if group is None else np.ascontiguousarray(group, dtype=np.int64)
            _maxmin.rmatvec_columns(self.t_indptr, self.t_rows, self.t_data, x, offset, self.rows, g, cols, out, True)
        else:
            start, stop = self.t_indptr[cols], self.t_indptr[cols + 1]
            length = stop - start
            pos = np.arange(int(length.sum())) + np.repeat(start - (np.cumsum(length) - length), length)
            rows = self.t_rows[pos].astype(np.int64) + offset
            w = x[rows] * (1.0 if self.t_data is None else self.t_data[pos])
            if group is not None:
                w = np.where(np.asarray(group)[rows] >= 0, w, 0.0)
            out += np.bincount(np.repeat(np.arange(len(cols)), length), weights=w, minlength=len(cols))
        return out


class Incidence:
    """A flows x columns incidence (``A[i, e]``: share of flow ``i`` on column ``e``) as a fixed and an extra block.

    Parameters
    ----------
    matrix : scipy sparse matrix, shape ``(F, E)``
        The fixed rows (validated, normalized and transposed here, once).

    Examples
    --------
    >>> inc = Incidence(sp.csr_matrix([[1, 1], [1, 0]]))
    >>> both = inc.stack(sp.csr_matrix([[0, 1]]))
    >>> both.shape, both.rmatvec(np.array([1.0, 2.0, 4.0])).tolist()
    ((3, 2), [3.0, 5.0])
    """

    def __init__(self, matrix, extra=None, *, _fixed: Block | None = None) -> None:
        self.fixed = _fixed if _fixed is not None else Block.of(matrix)
        e = self.fixed.columns
        self.extra = Block.empty(e) if extra is None else Block.of(extra, e)

    @classmethod
    def of(cls, matrix) -> Incidence:
        """``matrix`` itself if it is an :class:`Incidence`, else a new one built from it."""
        return matrix if isinstance(matrix, Incidence) else cls(matrix)

    def stack(self, extra) -> Incidence:
        """The fixed rows of this incidence, then the rows of ``extra`` (the fixed block is shared, not copied)."""
        return Incidence(None, extra, _fixed=self.fixed)

    @property
    def shape(self) -> tuple[int, int]:
        return self.fixed.rows + self.extra.rows, self.fixed.columns

    @property
    def nnz(self) -> int:
        return self.fixed.nnz + self.extra.nnz

    def blocks(self) -> tuple[Block, Block]:
        return self.fixed, self.extra

    def row_lengths(self) -> np.ndarray:
        """Number of columns every row crosses, int64 ``(F,)``."""
        return np.concatenate([np.diff(self.fixed.indptr), np.diff(self.extra.indptr)])

    def rmatvec(self, x: np.ndarray) -> np.ndarray:
        """``A.T @ x``: float64 ``(E,)`` for ``x`` of shape ``(F,)``, ``(k, E)`` for ``(k, F)`` (k <= 8, one pass)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape[-1] != self.shape[0]:
            raise SolverError(f"rmatvec: x has {x.shape[-1]} rows, the incidence {self.shape[0]}")
        return self.extra.rmatvec(x, self.fixed.rmatvec(x), offset=self.fixed.rows)

    def rmatvec_columns(self, x: np.ndarray, cols: np.ndarray, group: np.ndarray | None = None) -> np.ndarray:
        """``(A.T @ x)[cols]``, float64 ``(len(cols),)``: for a few columns, cheaper than :meth:`rmatvec`.

        With ``group`` (int, ``(F,)``), only the rows whose group is not negative count.
        """
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.zeros(len(cols))
        self.fixed.rmatvec_columns(x, cols, out, 0, group)
        return self.extra.rmatvec_columns(x, cols, out, self.fixed.rows, group)

    def rows(self, rows: np.ndarray) -> sp.csr_matrix:
        """The rows ``rows`` (index array or mask, in order) as a CSR matrix (a copy)."""
        rows = np.flatnonzero(rows) if np.asarray(rows).dtype == bool else np.asarray(rows, dtype=np.int64)
        n = self.fixed.rows
        if rows.size and rows.min() >= n:
            return self.extra.csr()[rows - n]
        if rows.size and rows.max() < n:
            return self.fixed.csr()[rows]
        return self.tocsr()[rows]

    def tocsr(self) -> sp.csr_matrix:
        """The whole matrix as one CSR matrix (a copy of every entry: for small problems and tests)."""
        if self.extra.rows == 0:
            return self.fixed.csr()
        return sp.vstack([self.fixed.csr(), self.extra.csr()], format="csr")

    def columns(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Entries of the columns ``cols``: ``(k, row, share)`` int64, int64, float64, ``k`` indexing ``cols``."""
        out_k, out_row, out_share = [], [], []
        for base, b in ((0, self.fixed), (self.fixed.rows, self.extra)):
            start, stop = b.t_indptr[cols], b.t_indptr[np.asarray(cols) + 1]
            length = stop - start
            k = np.repeat(np.arange(len(cols)), length)
            pos = np.arange(int(length.sum())) + np.repeat(start - (np.cumsum(length) - length), length)
            out_k.append(k)
            out_row.append(base + b.t_rows[pos].astype(np.int64))
            out_share.append(np.ones(len(pos)) if b.t_data is None else b.t_data[pos])
        return np.concatenate(out_k), np.concatenate(out_row), np.concatenate(out_share)
