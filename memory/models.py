"""Domain types shared by the memory layer. Frozen dataclasses: no I/O, no framework."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import Literal

Role = Literal["user", "assistant"]
SortOrder = Literal["recent", "importance"]
Tier = Literal["fact", "episodic"]
ArchiveTier = Literal["hot", "warm", "cold"]  # where a memory lives by age (memory/archive)


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message handed to the long-term write pipeline."""

    role: Role
    content: str
    name: str | None = None
    id: str | None = None
    timestamp: float | None = None  # epoch seconds; None means "when it arrived"


@dataclass(frozen=True, slots=True)
class Memory:
    """One long-term memory record as stored in the vector store."""

    id: str
    user_id: str
    content: str
    created_at: float  # epoch seconds
    session_id: str
    source: Role
    content_hash: str
    importance: float | None = None
    topic: str | None = None
    name: str | None = None
    source_message_ids: tuple[str, ...] = ()
    tier: Tier | None = None  # None: written by the naive pipeline
    entities: tuple[str, ...] = ()
    context: str = ""  # the preceding messages, indexed for keyword search (never returned)
    # supersession (memory/write/supersession.py): what the memory states about the user, e.g.
    # (("residence", "hangzhou"),), when it became true, and whether a newer memory replaced it
    facts: tuple[tuple[str, str], ...] = ()
    valid_from: float | None = None  # None: since `created_at`
    valid_to: float | None = None  # set when superseded: the successor's `valid_from`
    superseded_by: str | None = None  # id of the newer memory that replaced this one
    archive_tier: ArchiveTier = "hot"  # hot: the main collections; warm/cold: memory/archive
    pinned: bool = False  # a person said to keep it: never archived by age (memory/archive)

    @property
    def index_text(self) -> str:
        """What the keyword channel indexes: speaker, preceding context and the memory itself."""
        own = f"{self.name}: {self.content}" if self.name else self.content
        return f"{self.context} {own}".strip()

    @property
    def valid_since(self) -> float:
        return self.valid_from if self.valid_from is not None else self.created_at

    @property
    def embed_text(self) -> str:
        return f"{self.name}: {self.content}" if self.name else self.content


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Metadata filters applied inside the vector store query."""

    session_id: str | None = None
    exclude_session_id: str | None = None
    topic: str | None = None
    since: float | None = None
    until: float | None = None
    ids: frozenset[str] | None = None  # only these memories (the ones profile tags select); None: any


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """One search, as the edge that received it (a route, the MCP server, a chat turn) built it: what
    every layer of recall reads instead of a dozen threaded keyword arguments. Adding a per-request
    option is a field here, set where the request is built and read where it is used.

    `as_of`: "now" for time-aware ranking (None: the service's clock, resolved once in
    `MemoryService.recall`); `zone`: the user's time zone when the request named one (None: the
    deployment's, resolved once in `HybridRetriever.search`); `tiers`: the archive tiers asked for (None:
    hot + warm, cold as a fallback); `min_relevance`: hits below it are left out; `with_bridge`: compute
    the bridge channel even where the ranking does not need it (forget's second opinion);
    `every_segment`: each segment of a long message is a hit of its own (forget judges every memory)."""

    query: str
    top_k: int = 5
    filters: SearchFilters = SearchFilters()
    as_of: float | None = None
    zone: tzinfo | None = None
    tiers: Collection[ArchiveTier] | None = None
    min_relevance: float = 0.0
    with_bridge: bool = False
    every_segment: bool = False

    def at(self, now: float) -> RecallRequest:
        """This request with `as_of` set: its own, else `now`."""
        return self if self.as_of is not None else replace(self, as_of=now)


@dataclass(frozen=True, slots=True)
class ForgetMatch:
    """Why a forget chose a memory: by meaning (its relevance, the channels that matched with their own
    measure, the query's words it holds), as the older memory of one chosen (`superseded_by`), or by
    the other criteria alone (all empty)."""

    id: str
    relevance: float | None = None
    channels: Mapping[str, float] = field(default_factory=dict)
    words: tuple[str, ...] = ()
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True)
class ForgetResult:
    ids: list[str]  # sorted
    matches: Mapping[str, ForgetMatch]


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """How hybrid recall arrived at a score: score = (dense + keyword + bridge + Σ boosts) ·
    recency_factor · validity_factor."""

    dense: float  # w_dense · min-max-normalised cosine
    keyword: float  # w_keyword · min-max-normalised BM25
    bm25: float  # the raw BM25 score (0 when the keyword channel did not find it)
    boosts: Mapping[str, float]  # only the boosts that applied: name, doc_type, answer_type, fact, cluster
    recency: float  # recency x importance in [0, 1]
    recency_factor: float  # 1 - w_time + w_time · recency
    demoted: bool = False  # holds what the query said not to suggest: ranked below the rest
    in_month: bool = False  # written in the month the query names: ranked first
    # facts that change (recall/retrieval.py rank_validity): score = … · recency_factor · validity_factor
    validity_factor: float = 1.0  # <1: superseded, asked about the present; >1: lifted to what it replaced
    superseded: bool = False  # a newer memory replaced this one
    bridge: float = 0.0  # the multilingual bridge channel's part (memory/recall/crosslingual.py)
    links: tuple[str, ...] = ()  # relation memory: the path that linked it ("Q-2024-031 → approved")


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a hit's relevance was computed from (memory/recall/relevance.py): absolute measures of each
    channel for this memory alone, not the ranking's min-max normalised parts."""

    query_language: Literal["zh", "en"]
    memory_language: Literal["zh", "en"]
    cosine: float  # MiniLM cosine
    coverage: float  # idf-weighted share of the query's words found in the memory (0: none)
    bridge: float | None  # bridge (multilingual) cosine of the memory's own vector; None: not computed
    attribute: bool = False  # states the attribute the question asks about ("where do I live")
    # states a value of the category of the user's life the question asks about ("我有什么爱好？": "周末我喜欢
    # 拉大提琴"), memory/recall/validity.py `states_category`
    category: bool = False
    words: tuple[str, ...] = ()  # the query's words found in the memory (stems, CJK bigrams/characters)
    # idf-weighted share of the query's words the user ever wrote (in any memory searched): a query
    # none of whose words the user used ("xyzzy plugh", "量子计算的原理") is seldom about what they said
    known: float = 1.0
    # the ranking's fused value (dense + keyword + bridge + boosts, min-max normalised over this search's
    # candidates): relative to the other candidates, shown beside the absolute measures
    fused: float = 0.0

    @property
    def cross(self) -> bool:
        return self.query_language != self.memory_language


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    memory: Memory
    score: float  # the ranking score: orders hits within one search, not comparable across searches
    similarity: float
    breakdown: ScoreBreakdown | None = None  # hybrid recall only
    # calibrated probability that the hit is relevant (memory/recall/relevance.py), in [0, 1]
    relevance: float = 0.0
    evidence: Evidence | None = None


@dataclass(frozen=True, slots=True)
class MemoryPage:
    total: int
    items: list[Memory] = field(default_factory=list)
