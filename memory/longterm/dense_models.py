"""Which dense model embeds a user's memories, so that a deployment switches its dense model online.

The dense channel keeps its vectors in the record collections themselves (Chroma's embedding of each
record), so a second dense model means a second copy of every record. Each model has collections of
its own on every server, a *namespace*: the model a collection prefix was first started with keeps the
plain names (`<prefix>-mem-NNNN`), any other model gets `<prefix>-d<8 hex of its tag>-mem-NNNN`. The
routing store sees one store per (server, model) (`memory/longterm/routing.py`: a *virtual server*,
named `<server>` or `<server>~d<8 hex>`), and a user's placement names the one that holds them; the
model is therefore part of where a user is, recorded by the same placement, switched by the same
transaction, and cached by the same version.

A switch is a rebalance (`memory/longterm/rebalance.py`): users whose placement names the previous
model's store are moved, one at a time under their write lock, to the current model's store on the
same server, their records embedded again by the current model on the way; the switch transaction
also drops the user's change log and index snapshot, so every worker rebuilds their index from the new
vectors instead of following a log of the old ones. Until a user is moved, every read and write of that
user uses the previous model, after it the current one: a user's ranking never sees two models.

Each vector's model is checked where it meets stored vectors: the routing store refuses a query, a
nearest-neighbour search or an upsert whose vectors are of another model than the user's store holds
(`DenseModelChanged`: the user was switched between the embedding and the call); a search then ranks
by its other channels that once, a write is retried (the outbox) and embedded again by the user's model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from memory.embedding.base import Embedder
from memory.errors import StoreUnavailable

SEPARATOR = "~d"  # between a server's name and its model's namespace, in a virtual server's name


class DenseModelChanged(StoreUnavailable):
    """Vectors of one dense model met a store of another: the user was switched meanwhile."""

    def __init__(self, user_id: str, had: str, wanted: str) -> None:
        super().__init__("chroma", f"the user's dense model changed during the call ({had} -> {wanted})")
        self.user_id = user_id
        self.had = had
        self.wanted = wanted


def tag_hash(tag: str) -> str:
    """8 hex characters naming a model in collection and server names (every name of the bundled model
    gives the same)."""
    canonical = "bundled" if bundled(tag) else tag
    return hashlib.blake2b(canonical.encode(), digest_size=4).hexdigest()


def bundled(tag: str) -> bool:
    """The in-process MiniLM (ONNX or torch: the same vectors, cosine 0.999) under any of its names."""
    return not tag.startswith("http:")


def same_model(a: str, b: str) -> bool:
    """Whether vectors of `a` and `b` may be ranked together."""
    return a == b or (bundled(a) and bundled(b))


def other_model(a: str, b: str) -> bool:
    """Whether vectors of `a` must be made again for `b` (an empty tag is a store that does not say
    its model, as the bridge's: the same as any other)."""
    return bool(a and b) and not same_model(a, b)


def namespace(prefix: str, tag: str, first: str) -> str:
    """The collection prefix of model `tag`'s records, where `first` is the model the prefix was first
    started with (it keeps the plain names)."""
    return prefix if same_model(tag, first) else f"{prefix}-d{tag_hash(tag)}"


def virtual_name(server: str, tag: str, first: str) -> str:
    """The routing store's name of (server, model): the server's own for the first model."""
    return server if same_model(tag, first) else f"{server}{SEPARATOR}{tag_hash(tag)}"


def physical_name(name: str) -> str:
    """The server a virtual server's name is on (rendezvous hashes this, so a model switch never moves
    a user to another server)."""
    return name.split(SEPARATOR, 1)[0]


@dataclass(frozen=True, slots=True)
class DenseModel:
    tag: str  # what names the model: its vectors, its namespace, shared vectors, snapshots
    embedder: Embedder


Locate = Callable[[str, bool], Awaitable[str]]  # (user id, fresh) -> the tag of the user's store's model


class DenseModels:
    """The current dense model and, during a switch, the previous one, by tag; and which one embeds a
    given user (`locate`: the routing store's `dense_model_of`)."""

    def __init__(
        self, current: DenseModel, previous: DenseModel | None = None, *, locate: Locate | None = None
    ) -> None:
        self.current = current
        self.previous = previous
        self._locate = locate
        self._by_tag: dict[str, DenseModel] = {current.tag: current}
        if previous is not None:
            if same_model(previous.tag, current.tag):
                raise ValueError("the previous dense model is the current one")
            if previous.embedder.dimension <= 0:
                raise ValueError("the previous dense model has no dimension")
            self._by_tag[previous.tag] = previous

    @property
    def tags(self) -> Iterable[str]:
        return self._by_tag.keys()

    @property
    def switching(self) -> bool:
        """Whether users may be embedded by another model than the current one."""
        return self._locate is not None

    async def for_user(self, user_id: str, *, fresh: bool = False) -> DenseModel:
        """The model this user's memories are embedded by. Without a switch: the current one, no call.
        `fresh`: read where the user is from Redis (writes, under the user's lock), else as the user's
        reads are routed (searches, after reading the user's version)."""
        if self._locate is None:
            return self.current
        return self.get(await self._locate(user_id, fresh))

    def get(self, tag: str) -> DenseModel:
        """The loaded model whose vectors `tag` names (for the bundled model: any bundled name)."""
        found = self._by_tag.get(tag)
        if found is not None:
            return found
        for model in self._by_tag.values():
            if same_model(model.tag, tag):
                return model
        raise StoreUnavailable(
            "embeddings",
            f"the user's memories are embedded by {tag!r}, which is not configured here "
            "(a dense model switch: set PREVIOUS_EMBEDDINGS_* to it)",
        )
