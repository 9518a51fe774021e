"""A user's dense vectors in process as int8 codes with a scale per row, and exact top-k over them.

The in-process dense channel (`BM25Index.nearest`) used to keep the vectors as float16 and convert the
whole matrix to float32 on every search: 22 of the pass's 27 ms of CPU at 20,000 memories (issue 45),
as numpy has no float16 matrix product. Here each row is quantised to int8 with its own scale (the row's
largest magnitude / 127), 388 bytes a MiniLM row instead of float16's 768, and a pass converts 1,024 rows
at a time into a small float32 buffer that stays in cache and multiplies it there (one BLAS call per
block): 1.4 ms at 20,000 x 384, 4.2 ms at 46,000 x 512, against 2.6 and 7.8 ms for a float32 matrix four
times the size (numpy 1.26, one thread).

What it costs: a cosine off by at most half a step per component (`error_bound`; measured on random
unit vectors of 384 and 512 dimensions at most 1.7e-3, typically 5e-4); ranks differ from float32's only between vectors that close. Every cosine a
user's memory gets in process (the dense pass, the cosine of a candidate another channel found, the
writer's duplicate checks) is of the same codes, so one memory never has two cosines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BLOCK = 1024  # rows converted at a time: 1.5-2 MB of float32, in cache


class QuantisedRows:
    """Unit vectors as int8 `codes` (rows x dim) and float32 `scales` (one per row): row i is
    `codes[i] * scales[i]`. Immutable once made (updates make new ones)."""

    __slots__ = ("codes", "scales")

    def __init__(self, codes: np.ndarray, scales: np.ndarray) -> None:
        if codes.ndim != 2 or codes.dtype != np.int8 or scales.shape != (codes.shape[0],):
            raise ValueError("codes must be int8 rows x dim and scales one float per row")
        self.codes = codes
        self.scales = np.asarray(scales, dtype=np.float32)

    @classmethod
    def of(cls, vectors: np.ndarray | Sequence[Sequence[float]]) -> QuantisedRows:
        """The rows of a float matrix (float16, float32 or float64), each quantised to int8 by its own
        largest magnitude; a zero row stays zero. Quantised from the float16 rounding of the values: a
        vector the change log carries (float16) and the same vector read from the store (float32) get
        the same codes, so an index brought forward through the log ranks exactly as a fresh build."""
        source = vectors if isinstance(vectors, np.ndarray) else np.asarray(vectors, dtype=np.float32)
        if source.ndim != 2:  # no rows (an empty user's `[]`): no columns either
            source = source.reshape(len(source), -1) if source.size else source.reshape(len(source), 0)
        n, dim = source.shape
        codes = np.empty((n, dim), dtype=np.int8)
        scales = np.ones(n, dtype=np.float32)
        for start in range(0, n, BLOCK):  # a block at a time: no float32 copies of the whole matrix
            end = min(n, start + BLOCK)
            block = np.asarray(np.asarray(source[start:end], dtype=np.float16), dtype=np.float32)
            if dim:
                peak = np.abs(block).max(axis=1)
                scales[start:end] = np.where(peak > 0, peak / 127.0, 1.0)
            block /= scales[start:end, None]
            np.clip(np.rint(block, out=block), -127, 127, out=block)
            codes[start:end] = block
        return cls(codes, scales)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def dim(self) -> int:
        return int(self.codes.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scales.nbytes)

    def rows(self, at: Sequence[int] | np.ndarray) -> np.ndarray:
        """The float32 vectors of rows `at` (dequantised), in that order."""
        picked = np.asarray(at, dtype=np.int64)
        return np.asarray(self.codes[picked], dtype=np.float32) * self.scales[picked, None]

    def select(self, at: Sequence[int] | np.ndarray) -> QuantisedRows:
        """Rows `at`, in that order, as codes (no re-quantising: the same values)."""
        picked = np.asarray(at, dtype=np.int64)
        return QuantisedRows(self.codes[picked], self.scales[picked])

    def concat(self, other: QuantisedRows) -> QuantisedRows:
        return QuantisedRows(
            np.concatenate([self.codes, other.codes]), np.concatenate([self.scales, other.scales])
        )

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Dot products of `query` (float, dim) with every row: float32, one per row."""
        scores: np.ndarray = self.scores_many(np.asarray(query, dtype=np.float32).reshape(1, -1))[0]
        return scores

    def scores_many(self, queries: np.ndarray) -> np.ndarray:
        """Dot products of each of `queries` (q x dim) with every row: float32 (q x rows). A block of
        rows at a time is converted into a buffer of this call's own (callers may be in threads)."""
        q = np.ascontiguousarray(np.asarray(queries, dtype=np.float32).T)  # dim x q
        n = len(self)
        out = np.empty((n, q.shape[1]), dtype=np.float32)
        buffer = np.empty((min(BLOCK, n), self.dim), dtype=np.float32)
        for start in range(0, n, BLOCK):
            end = min(n, start + BLOCK)
            block = buffer[: end - start]
            np.copyto(block, self.codes[start:end], casting="unsafe")
            np.matmul(block, q, out=out[start:end])
        out *= self.scales[:, None]
        return np.ascontiguousarray(out.T)

    def error_bound(self, query: np.ndarray) -> np.ndarray:
        """For each row, how far `scores(query)` can be from the float row's dot product: half a step
        (the row's scale) on each component, against the query's components: scale / 2 x |query|_1."""
        return np.asarray(
            self.scales * (0.5 * float(np.abs(np.asarray(query, np.float32)).sum())), np.float32
        )


def ranked(sims: np.ndarray, limit: int) -> np.ndarray:
    """The positions of the `limit` largest of `sims`, best first, ties in position order: exactly
    `np.argsort(-sims, kind="stable")[:limit]`, without sorting the rest (`argpartition`'s pass)."""
    n = len(sims)
    if limit <= 0 or not n:
        return np.zeros(0, dtype=np.int64)
    if limit >= n:
        return np.argsort(-sims, kind="stable")
    kth = np.partition(sims, n - limit)[n - limit]  # the limit-th largest value
    picked = np.flatnonzero(sims >= kth)  # every tie of it too, in position order
    return picked[np.argsort(-sims[picked], kind="stable")][:limit]


__all__ = ["BLOCK", "QuantisedRows", "ranked"]
