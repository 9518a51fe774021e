"""Every Prometheus metric mnemo exports, and the `/metrics` exposition.

uvicorn runs several worker processes, so metrics live in prometheus-client's multiprocess mode when
`PROMETHEUS_MULTIPROC_DIR` is set (the launcher wipes that directory before the workers start): each
worker writes its own files and a scrape of any worker aggregates all of them through a fresh registry
with `MultiProcessCollector`. Without the variable (tests in one process) the default registry serves.

Names carry the `mnemo_` prefix and a unit suffix; HTTP labels use the route template, never the raw
path, so user ids never become label values.
"""

from __future__ import annotations

import glob
import os
import re

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

_FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_SLOW = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

HTTP_REQUESTS = Counter(
    "mnemo_http_requests",
    "HTTP requests answered, by route template, method and status",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "mnemo_http_request_duration_seconds",
    "Time from request start to the end of the response body",
    ["route", "method"],
    buckets=_SLOW,
)
LLM_DURATION = Histogram(
    "mnemo_llm_request_duration_seconds", "Upstream LLM calls, by outcome", ["outcome"], buckets=_SLOW
)
# the ledger of model use (issue 41): every upstream call by purpose (chat, summary, judge, translation,
# compression) and outcome (ok, empty: an answer without text or tool calls, error, timeout, cancelled)
LLM_CALLS = Counter(
    "mnemo_llm_calls_total", "Upstream LLM calls, by purpose and outcome", ["purpose", "outcome"]
)
LLM_TOKENS = Counter(
    "mnemo_llm_tokens_total",
    "Tokens of upstream LLM calls (the upstream's usage, else estimated), by purpose and direction (in, out)",
    ["purpose", "direction"],
)
# a model's answer the step could not use, so it fell back to its offline behaviour (the real-model lane,
# issue 41): judge "unparseable" (not the strict JSON: the rules' result stands), translation "unusable"
# (empty, untranslated or an answer: searched as asked), summary "failed" (no answer: extractive) or
# "lost_facts" (left out what the user told: extractive)
LLM_FALLBACKS = Counter(
    "mnemo_llm_fallbacks_total",
    "Model answers a memory step could not use and replaced with its offline behaviour, by purpose and reason",
    ["purpose", "reason"],
)
LLM_CALL_DURATION = Histogram(
    "mnemo_llm_call_duration_seconds",
    "Upstream LLM calls, by purpose and outcome",
    ["purpose", "outcome"],
    buckets=_SLOW,
)
RETRIEVAL_DURATION = Histogram(
    "mnemo_retrieval_duration_seconds", "Long-term memory searches", ["pipeline"], buckets=_FAST
)
EMBEDDING_DURATION = Histogram("mnemo_embedding_duration_seconds", "One embedding model call", buckets=_FAST)
EMBEDDING_BATCH = Histogram(
    "mnemo_embedding_batch_size",
    "Texts per embedding model call",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
)
BRIDGE_EMBEDDING_DURATION = Histogram(
    "mnemo_bridge_embedding_duration_seconds",
    "One call of the multilingual bridge model (USE v3), by caller",
    ["caller"],
    buckets=_FAST,
)  # caller: query | write | reembed
BRIDGE_EMBEDDING_TEXTS = Counter(
    "mnemo_bridge_embedding_texts", "Texts embedded by the multilingual bridge model", ["caller"]
)
DENSE_MODEL_SEARCHES = Counter(
    "mnemo_dense_model_searches",
    "Searches during a dense model switch, by the model that embedded the query",
    ["model"],
)  # model: current | previous (the user not moved yet)
BRIDGE_SEARCHES = Counter(
    "mnemo_bridge_searches",
    "Searches by how the bridge channel took part",
    ["outcome"],
)  # outcome: fused | incomplete | off
QUERY_TRANSLATIONS = Counter(
    "mnemo_query_translations",
    "Searches whose question was also searched in the other language, by outcome",
    ["outcome"],
)  # outcome: translated | none (no translation came: model slow, down or not a translation)
MEMORY_WRITES = Counter(
    "mnemo_memory_writes", "Long-term memory records by write outcome", ["result"]
)  # result: stored | merged | skipped_erased | skipped_deleted | skipped_small_talk | skipped_question
LATE_DELETE_CHECK_FAILURES = Counter(
    "mnemo_late_delete_check_failures",
    "Writes whose tombstone check after the upsert failed on Redis (the write stood; memory/write/policy.py)",
)
LTM_VERSION_BUMPS_FAILED = Counter(
    "mnemo_ltm_version_bumps_failed",
    "Long-term writes and deletes whose version bump failed on Redis: answered 503 (never acknowledged) "
    "and bumped again in the background once Redis answers (memory/longterm/versions.py)",
    ["outcome"],  # failed: the bump failed; repaired: a background retry recorded it
)
LTM_PURGES = Counter(
    "mnemo_ltm_purges",
    "Deferred Chroma deletes, by outcome (memory/longterm/deferred_deletes.py)",
    ["outcome"],
)  # outcome: done (right after the delete) | swept (finished by a writer) | deferred (Chroma or Redis failed)
HIDDEN_CHECK_FAILURES = Counter(
    "mnemo_hidden_check_failures",
    "Long-term reads that went on without the ids of unfinished deletes (Redis failed)",
)
NEAR_DUPLICATES_MERGED = Counter(
    "mnemo_memory_near_duplicates_merged",
    "New memories merged into a stored near duplicate (cosine and same facts)",
)
SUPERSESSIONS = Counter(
    "mnemo_memory_supersessions",
    "Memories marked superseded by a newer one about the same attribute, by who decided",
    ["source"],
)  # source: rule | llm
CHAT_RECALL_EMPTY = Counter(
    "mnemo_chat_recall_empty", "Chat turns whose recall put no long-term memory into the prompt"
)
CHAT_MEMORIES_INJECTED = Histogram(
    "mnemo_chat_memories_injected",
    "Long-term memories put into one chat turn's prompt",
    buckets=(0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20),
)
CHAT_MEMORY_CHARS = Histogram(
    "mnemo_chat_memory_chars",
    "Characters of long-term memory put into one chat turn's prompt",
    buckets=(0, 50, 100, 200, 300, 450, 600, 900, 1200, 1800, 2400, 3600, 4800, 7200),
)
CHAT_MEMORY_TOKENS = Histogram(
    "mnemo_chat_memory_tokens",
    "Estimated tokens of long-term memory put into one chat turn's prompt",
    buckets=(0, 25, 50, 100, 150, 200, 300, 400, 500, 600, 800, 1000, 1200, 1600, 2000, 3000),
)
SUMMARY_FACT_CHECKS = Counter(
    "mnemo_summary_fact_checks",
    "LLM session summaries checked against what the user said of themselves, by outcome",
    ["outcome"],
)  # outcome: kept (every fact there) | replaced (a fact missing: the extractive summary instead)
RECALL_BELOW_FLOOR = Counter(
    "mnemo_recall_below_floor",
    "Memories a chat turn's recall found but dropped under the similarity floor (RECALL_MIN_SIMILARITY)",
)
CHAT_TURN_OVERHEAD = Histogram(
    "mnemo_chat_turn_overhead_seconds",
    "Memory work in one chat turn: everything but the upstream LLM call",
    buckets=_FAST,
)
OUTBOX_PENDING = Gauge(
    "mnemo_outbox_pending",
    "Chat turns waiting to be written to long-term memory",
    multiprocess_mode="livemostrecent",
)
IMPORT_PENDING = Gauge(
    "mnemo_import_pending",
    "Entries of imported histories (the import lane) waiting to be written to long-term memory",
    multiprocess_mode="livemostrecent",
)
OUTBOX_BACKPRESSURE = Histogram(
    "mnemo_outbox_backpressure_seconds",
    "How long a chat turn waited for the long-term writer to catch up (turns that waited only)",
    buckets=_SLOW,
)
RATE_LIMITED = Counter("mnemo_rate_limited_requests", "Requests refused with 429")
RATE_LIMITER_ERRORS = Counter(
    "mnemo_rate_limiter_errors", "Rate-limit checks that failed (Redis down): the request was let through"
)
STORE_UNAVAILABLE = Counter(
    "mnemo_store_unavailable",
    "Requests refused with 503 (or streams ended in-band) because a store could not serve them",
    ["store"],
)  # store: redis | chroma
# Models served over HTTP (issue 44): per model, never per user
MODEL_REQUESTS = Counter(
    "mnemo_model_requests",
    "Calls to an embeddings or rerank server, by outcome",
    ["kind", "model", "outcome"],
)  # kind: embeddings | rerank; outcome: ok | error | retry | open (refused by the open circuit)
MODEL_DURATION = Histogram(
    "mnemo_model_request_duration_seconds",
    "One call to an embeddings or rerank server (retries included)",
    ["kind", "model"],
    buckets=_FAST,
)
MODEL_CIRCUIT_OPEN = Gauge(
    "mnemo_model_circuit_open",
    "1 while the circuit breaker of a model server is open (calls refused without trying)",
    ["kind", "model"],
    multiprocess_mode="max",
)
SEARCHES_DEGRADED = Counter(
    "mnemo_searches_degraded",
    "Searches answered from the keyword channel alone because the embedding model was unavailable",
)
RERANKS = Counter(
    "mnemo_reranks",
    "Reranking stages by outcome: reranked, or the first-stage order kept (over budget, failed)",
    ["outcome"],
)  # outcome: reranked | timeout | error | skipped
LOCK_RELEASE_FAILURES = Counter(
    "mnemo_lock_release_failures",
    "Lock releases that failed after the guarded work; the work stands, the lock expires by its TTL",
    ["lock"],
)  # lock: session | ltm (writes, deletes) | lock (any other, e.g. the eraser's)
IDEMPOTENT_REPLAYS = Counter(
    "mnemo_idempotent_replays",
    "Requests answered from the record of an earlier request with the same Idempotency-Key",
    ["route"],
)  # route: chat | messages | imports
AUDIT_WRITE_FAILURES = Counter("mnemo_audit_write_failures", "Audit records that could not be written")
ERASURE_COMPACTIONS = Counter(
    "mnemo_erasure_compactions",
    "Rewrites of a store's files after erasures (Redis AOF/RDB, Chroma log and pages), by outcome",
    ["store", "outcome"],
)  # outcome: ok | failed
ERASURE_COMPACTION_DURATION = Histogram(
    "mnemo_erasure_compaction_duration_seconds",
    "How long one compaction of a store's files took",
    ["store"],
    buckets=_SLOW,
)
ERASURE_PENDING_AGE = Gauge(
    "mnemo_erasure_pending_age_seconds",
    "Age of the oldest erase whose store files are not yet rewritten (0: none waiting)",
    ["store"],
    multiprocess_mode="livemax",
)
REBALANCE_USERS_MOVED = Counter(
    "mnemo_rebalance_users_moved", "Users a rebalance moved to another Chroma server (placement switched)"
)
REBALANCE_RECORDS_MOVED = Counter(
    "mnemo_rebalance_records_moved", "Long-term records a rebalance copied to another Chroma server"
)
REBALANCE_FAILURES = Counter(
    "mnemo_rebalance_failures", "Users a rebalance could not settle (left where they were; a re-run retries)"
)
ARCHIVE_MEMORIES = Gauge(
    "mnemo_archive_memories",
    "Long-term memories per tier (hot, warm, cold), counted at the end of the last archival run",
    ["tier"],
    multiprocess_mode="mostrecent",
)
ARCHIVE_LAST_RUN = Gauge(
    "mnemo_archive_last_run_timestamp_seconds",
    "When the last archival run finished (Unix time)",
    multiprocess_mode="mostrecent",
)
ARCHIVE_MOVED_LAST_RUN = Gauge(
    "mnemo_archive_moved_last_run",
    "Memories the last archival run moved, per move (hot_to_warm, warm_to_cold)",
    ["move"],
    multiprocess_mode="mostrecent",
)
ARCHIVE_MOVED = Counter(
    "mnemo_archive_moved", "Memories moved to an older tier (hot_to_warm, warm_to_cold)", ["move"]
)
ARCHIVE_FAILURES = Counter(
    "mnemo_archive_failures",
    "Archive moves that failed (left readable in their tier; a re-run completes them)",
)
DENSE_ROWS_SKIPPED = Counter(
    "mnemo_archive_dense_skipped",
    "Archived memories a search's dense channel left out: their vector is of another dense model than "
    "the query's, after a switch (still found by their words; `python -m app.cli.archive --reembed`)",
)
RESIDENT_MEMORY = Gauge(
    "mnemo_process_resident_memory_bytes",
    "Resident memory of each worker process",
    multiprocess_mode="liveall",
)


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def exposition() -> tuple[bytes, str]:
    """The body and content type of a `/metrics` answer, across every worker."""
    if multiprocess_dir() is None:
        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return generate_latest(registry), CONTENT_TYPE_LATEST


_PID_FILE = re.compile(r"_(\d+)\.db$")


def mark_dead_workers() -> list[int]:
    """Drop the live-gauge files of worker processes that no longer exist (a crashed worker never ran
    its shutdown). Called by every worker at start; cheap, a glob of one directory."""
    path = multiprocess_dir()
    if path is None:
        return []
    dead: set[int] = set()
    for name in glob.glob(os.path.join(path, "gauge_live*_*.db")):
        match = _PID_FILE.search(name)
        if match and not _alive(int(match.group(1))):
            dead.add(int(match.group(1)))
    for pid in dead:
        multiprocess.mark_process_dead(pid, path)  # type: ignore[no-untyped-call]
    return sorted(dead)


def mark_self_dead() -> None:
    if multiprocess_dir() is not None:
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def resident_memory_bytes() -> int:
    """This process's RSS from /proc (Linux); 0 where /proc is missing."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")
