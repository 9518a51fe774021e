"""The query's vectors for a search: the dense model's (the user's: during a switch not every user is on
the current model) and the bridge model's when it takes part, published for the writer that will store
the same text (memory/longterm/shared_vectors.py)."""

from __future__ import annotations

import asyncio

import numpy as np

from memory.errors import EmbeddingUnavailable
from memory.longterm.dense_models import DenseModel, DenseModels
from memory.longterm.shared_vectors import SharedVectors
from memory.recall.channels import EarlyEmbedding
from memory.recall.crosslingual import BridgeChannel
from memory.recall.degraded import keyword_only
from monitoring import metrics


class QueryVectors:
    def __init__(self, dense: DenseModels, shared: SharedVectors | None) -> None:
        """`shared`: where the current dense model's query vectors are published."""
        self._dense = dense
        self._shared = shared

    async def vectors(
        self,
        user_id: str,
        text: str,
        early: EarlyEmbedding | None,
        bridge: BridgeChannel | None,
        use_bridge: bool,
        model: DenseModel,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The query's vector by the user's dense model (and the bridge's when it takes part), published
        for the writer; an embedding model that is down gives the keyword channel alone, flagged. A user
        not yet switched to the current model is embedded by theirs: the early embedding and the shared
        vectors are the current model's, so they are not used for that user."""
        bvec: np.ndarray | None = None
        current = model is self._dense.current
        if self._dense.switching:
            metrics.DENSE_MODEL_SEARCHES.labels("current" if current else "previous").inc()
        own_shared = self._shared if current else None
        embedder = model.embedder
        try:
            ready = await early.vectors(text) if early is not None else None
            if ready is not None and not current:  # the current model's vector: only the bridge's is good
                ready = None
            if ready is not None and (ready[1] is not None or not use_bridge):
                qvec, bvec = ready[0], ready[1] if use_bridge else None
                for shared, vector in ((own_shared, qvec), (bridge.shared if bridge else None, bvec)):
                    if shared is not None and vector is not None:
                        await shared.publish(user_id, text, vector)
            elif use_bridge and bridge is not None:
                # both models at once: each runs in its own worker thread on one core
                qvecs, bvecs = await asyncio.gather(embedder.embed([text]), bridge.embedder.embed([text]))
                qvec, bvec = qvecs[0], bvecs[0]
                await asyncio.gather(
                    *(
                        shared.publish(user_id, text, vector)
                        for shared, vector in ((own_shared, qvec), (bridge.shared, bvec))
                        if shared is not None
                    )
                )
            else:
                qvec = (await embedder.embed([text]))[0]
                if own_shared is not None:
                    await own_shared.publish(user_id, text, qvec)
        except EmbeddingUnavailable as exc:  # the model is down: the keyword channel alone, flagged
            qvec, bvec = keyword_only(embedder.dimension, exc)
        return qvec, bvec
