"""mnemo's memory domain, as packages by subsystem, floors bottom-up (a package imports only lower floors):

0. shared leaves: `models`, `errors`, `keys` (every Redis key)
1. `redis_client` (one server or a cluster), `text` (zh/en rules), `embedding`
2. `locks`
3. `session` (short-term state in Redis), `outbox` (turns handed to the writers), `longterm` (Chroma
   store, routing over several servers, rebalance, versions, tombstones, shared vectors)
4. `recall` (keyword index, query plan, ranking, hybrid retriever)
5. `write` (write policy and scoring), `archive` (warm and cold tiers)
6. `relations` (relation memory: entities, the profile, links)
7. `service` (`MemoryService`: ingest, recall, list, delete, forget)
8. `chat` (the chat turn), `governance` (erasure, export, audit, compaction) and `corrections` (edit,
   restore)

The domain never imports `app`, FastAPI, httpx or the settings object: it gets configured objects through
constructors. `tests/unit/test_layering.py` checks these rules; `tests/unit/test_docs_match_tree.py`
checks that this list is the one it enforces.
"""

from memory.embedding.base import Embedder
from memory.embedding.sentence_transformer import SentenceTransformerEmbedder, bundled_model_path
from memory.errors import MemoryNotFound, StoreUnavailable
from memory.longterm.chroma import ChromaLongTermStore, LongTermStore, shard_of
from memory.longterm.routing import RoutingLongTermStore
from memory.models import Memory, MemoryPage, Message, ScoredMemory, SearchFilters
from memory.service import MemoryService

__all__ = [
    "ChromaLongTermStore",
    "Embedder",
    "LongTermStore",
    "Memory",
    "MemoryNotFound",
    "MemoryPage",
    "MemoryService",
    "Message",
    "RoutingLongTermStore",
    "ScoredMemory",
    "SearchFilters",
    "SentenceTransformerEmbedder",
    "StoreUnavailable",
    "bundled_model_path",
    "shard_of",
]
