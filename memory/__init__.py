"""mnemo's memory domain: stores, embeddings, ranking. Never imports the HTTP layer or settings."""

from memory.embeddings import Embedder, SentenceTransformerEmbedder, bundled_model_path
from memory.errors import MemoryNotFound, StoreUnavailable
from memory.long_term_store import ChromaLongTermStore, LongTermStore, shard_of
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
    "ScoredMemory",
    "SearchFilters",
    "SentenceTransformerEmbedder",
    "StoreUnavailable",
    "bundled_model_path",
    "shard_of",
]
