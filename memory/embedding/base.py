"""The embedding seam: every embedder maps texts to L2-normalised float32 vectors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol

import anyio.to_thread
import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
# One model call at a time per loaded model (a lock in each embedder): a call of many long texts is cut
# into slices of about this many tokens, each a call of its own, so that another caller's texts (a
# search's query) wait for one slice, not for all of it. Issue 39: the 83 segments of one 32,000-character
# Chinese message held MiniLM for 11 s and the bridge model for 2 s, and every search of the worker waited.
SLICE_TOKENS = 256
_TEXT_TOKENS_MAX = 256  # what a model reads of a text at most (MiniLM's limit)


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors (cosine similarity == dot product)."""

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Vectors: ...


Caller = Literal["query", "write", "reembed"]  # who calls a model (its metrics' label)


class NamedEmbedder(Embedder, Protocol):
    """An embedder whose vectors are recorded with `model_name` (the bridge channel's models: USE in
    process, or a model served over HTTP), with views of the same model labelled by caller."""

    @property
    def model_name(self) -> str: ...

    def for_caller(self, caller: Caller) -> NamedEmbedder: ...


def _tokens(text: str) -> int:
    """About the tokens a model reads of `text`: one per CJK character, one per four other characters."""
    head = text[: 4 * _TEXT_TOKENS_MAX]  # enough to reach the most a model reads, in either script
    cjk = sum(1 for ch in head if "\u3400" <= ch <= "\u9fff")
    return min(cjk + (len(head) - cjk + 3) // 4, _TEXT_TOKENS_MAX)


def slices(texts: Sequence[str], max_tokens: int = SLICE_TOKENS) -> list[list[int]]:
    """The positions of `texts`, longest first, in runs of at most about `max_tokens` tokens (a longer
    text alone): each run is texts of similar length, which batch well (little padding)."""
    sizes = [_tokens(t) for t in texts]
    out: list[list[int]] = []
    total = max_tokens  # the first text starts a run
    for i in sorted(range(len(texts)), key=lambda i: -sizes[i]):
        if total + sizes[i] > max_tokens:
            out.append([])
            total = 0
        out[-1].append(i)
        total += sizes[i]
    return out


async def embed_in_slices(
    embed_sync: Callable[[Sequence[str]], Vectors], texts: Sequence[str], slice_tokens: int = SLICE_TOKENS
) -> Vectors:
    """`embed_sync` in a worker thread, slice by slice (`slices`): the vectors of `texts`, in order.
    Measured on 2 cores (MiniLM int8, one thread, best of two): 256 chat turns of 10-40 characters
    0.95 s in one call, 0.88 s in slices; of 30-120 characters 2.98 s and 2.42 s; the 170 segments of a
    32,000-character Chinese and an English message 9.2 s and 6.5 s (slices of texts of one length pad
    less); a slice of a long Chinese segment holds the model about 0.1 s. `slice_tokens`: a model that
    reads a token faster takes longer slices for the same hold (a call of its own costs it more)."""
    runs = slices(texts, slice_tokens)
    if len(runs) <= 1:
        return await anyio.to_thread.run_sync(embed_sync, list(texts))
    out: Vectors | None = None
    for run in runs:
        vectors = await anyio.to_thread.run_sync(embed_sync, [texts[i] for i in run])
        if out is None:
            out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
        out[run] = vectors
    assert out is not None
    return out
