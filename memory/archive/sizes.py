"""One user's archived vectors of several sizes, as one matrix an index can hold.

A dense model switch to a model of another size leaves a user's archive with vectors of two sizes until
`python -m app.cli.archive --reembed` embeds the old ones again: warm rows in two models' warm
collections, cold rows in files of either (memory/longterm/dense_models.py). An index
(`BM25Index`, memory/archive/search.py) holds one matrix, and ranks a row's vector only against a query
of the row's model. `stacked` keeps the vectors of one size, that of the user's model once switched
(the first model of `prefer`, the configured one, that has rows); the others get zeros and the tag
`UNRANKED`, which fits no query's model: those rows are found by their words alone, as any row of
another model is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from memory.embedding.base import Vectors
from memory.longterm.dense_models import same_model

UNRANKED = "http:unranked"  # the tag of a row whose vector is of another size than its index's


def stacked(
    vectors: Sequence[np.ndarray], models: Sequence[str | None], prefer: Sequence[str] = ()
) -> tuple[Vectors, list[str | None]]:
    """The rows' vectors as one float32 matrix and each row's model: as they are when all are of one
    size; else of the size of the first of `prefer` that has rows (none: the commonest size), a row of
    another size zero and tagged `UNRANKED`."""
    tags = list(models)
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32), tags
    sizes = [len(v) for v in vectors]
    if len(set(sizes)) == 1:
        return np.stack(vectors).astype(np.float32, copy=False), tags
    width = next(
        (
            size
            for model in prefer
            for size, tag in zip(sizes, tags, strict=True)
            if tag is not None and same_model(tag, model)
        ),
        Counter(sizes).most_common(1)[0][0],
    )
    matrix = np.zeros((len(vectors), width), dtype=np.float32)
    for row, (vector, size) in enumerate(zip(vectors, sizes, strict=True)):
        if size == width:
            matrix[row] = vector
        else:
            tags[row] = UNRANKED
    return matrix, tags
