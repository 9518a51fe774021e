/**
 * What mnemo answers (docs/api.md), with mnemo's own field names, and the checks that read them: a
 * field this client relies on that is missing or of another type throws `ContractError`, so a renamed
 * field fails loudly. Fields documented as optional or newer (`skipped`, `archive_tier`) may be absent.
 */
import { ContractError } from "./errors.js";

export type Json = Record<string, unknown>;

export interface Memory {
  id: string;
  content: string;
  created_at: string;
  session_id: string;
  source: "user" | "assistant";
  importance: number | null;
  topic: string | null;
  tier: "fact" | "episodic" | null;
  source_message_ids: string[];
  valid_from: string | null;
  valid_to: string | null;
  superseded_by: string | null;
  archive_tier?: "hot" | "warm" | "cold";
  pinned?: boolean;
}

/** A memory read by id: with its `version` (also its ETag), what an edit's If-Match names. */
export interface MemoryDetail extends Memory {
  version: string;
}

/** The fields an edit sets; only those given change. `topic` or `validTo` as null clears it. */
export interface MemoryEdit {
  content?: string;
  importance?: number;
  pinned?: boolean;
  topic?: string | null;
  validTo?: string | number | null;
}

/** One event of a memory's history, oldest first. */
export interface HistoryEvent {
  event: "created" | "merged" | "superseded" | "edited" | "restored" | "archived" | "deleted";
  at: string;
  actor: string;
  role: string;
  request_id: string;
  detail: Json;
}

export interface SearchHit extends Memory {
  /** How likely the memory is about the query, 0 .. 1: calibrated and comparable across searches
   * (pick or show memories by it). */
  relevance: number;
  /** Orders the hits of this one search, nothing more. */
  score: number;
  similarity: number;
  explain?: Json | null;
}

export interface SearchResult {
  results: SearchHit[];
  tiers?: Json | null;
}

export interface IngestResult {
  stored: number;
  memories: Memory[];
  /** Messages left out (blank or invisible text), by their index in the request. */
  skipped?: { index: number; reason: string }[];
}

export interface MemoryPage {
  total: number;
  items: Memory[];
}

/** A deleted or forgotten memory that can still be restored (`restoreMemory`) until `restorable_until`. */
export interface DeletedMemory extends Memory {
  deleted_at: string;
  restorable_until: string;
  /** "deleted" one by one, or "forgotten" by criteria. */
  how: "deleted" | "forgotten";
  deleted_by: string;
}

/** Restorable memories, most recently deleted first; `grace_seconds`: how long each stays restorable. */
export interface DeletedPage {
  total: number;
  grace_seconds: number;
  items: DeletedMemory[];
}

export interface ForgetResult {
  count: number;
  ids: string[];
  dry_run: boolean;
  memories?: Memory[] | null;
}

export interface Erasure {
  deleted: Record<string, number>;
  at: string;
  at_rest_purged_by: string | null;
  at_rest?: Json;
}

export interface SessionState {
  user_id: string;
  session_id: string;
  summary: Json | null;
  mode: string | null;
  actions: Json[];
  buffer: { id: string; role: string; content: string; timestamp: string; name?: string | null }[];
  slots: Json;
}

/** What mnemo did for a chat turn; `memory_ids` are the long-term memories it recalled. */
export interface TurnDebug {
  memory_ids: string[];
  chroma_retrieved_count: number;
  redis_summary_used: boolean;
  context_length: number;
  total_tokens: number;
  mode: string;
  recall_degraded: string | null;
  session_id: string;
}

export interface ChatCompletion {
  id: string;
  model: string;
  content: string;
  finish_reason: string | null;
  usage: Json;
  debug: TurnDebug | null;
  /** The answer recorded for this Idempotency-Key, replayed (`Idempotent-Replayed: true`). */
  replayed: boolean;
}

/** One event of a streamed turn; the last has `finish_reason`, `response`, `usage` and `debug`. */
export interface ChatChunk {
  id: string;
  delta: string;
  finish_reason: string | null;
  response?: string;
  usage?: Json;
  debug?: TurnDebug;
}

type Kind = "string" | "number" | "boolean" | "object" | "array";

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  return typeof value;
}

export function need(data: unknown, key: string, kind: Kind, what: string): unknown {
  if (kindOf(data) !== "object") throw new ContractError(`${what}: expected an object, got ${kindOf(data)}`);
  const obj = data as Json;
  if (!(key in obj)) throw new ContractError(`${what}: no field ${JSON.stringify(key)}`);
  if (kindOf(obj[key]) !== kind) {
    throw new ContractError(`${what}.${key}: expected ${kind}, got ${kindOf(obj[key])}`);
  }
  return obj[key];
}

function maybe(data: Json, key: string, kind: Kind, what: string): void {
  if (data[key] !== undefined && data[key] !== null) need(data, key, kind, what);
}

export function checkMemory(data: unknown, what = "memory"): Memory {
  for (const key of ["id", "content", "created_at", "session_id", "source"]) need(data, key, "string", what);
  const m = data as Json;
  maybe(m, "importance", "number", what);
  maybe(m, "topic", "string", what);
  maybe(m, "source_message_ids", "array", what);
  return m as unknown as Memory;
}

export function checkIngest(data: unknown): IngestResult {
  need(data, "stored", "number", "ingest answer");
  (need(data, "memories", "array", "ingest answer") as unknown[]).forEach((m) => checkMemory(m));
  maybe(data as Json, "skipped", "array", "ingest answer");
  return data as IngestResult;
}

export function checkSearch(data: unknown): SearchResult {
  for (const hit of need(data, "results", "array", "search answer") as unknown[]) {
    checkMemory(hit, "search hit");
    need(hit, "relevance", "number", "search hit");
    need(hit, "score", "number", "search hit");
    need(hit, "similarity", "number", "search hit");
  }
  return data as SearchResult;
}

export function checkPage(data: unknown): MemoryPage {
  need(data, "total", "number", "list answer");
  (need(data, "items", "array", "list answer") as unknown[]).forEach((m) => checkMemory(m));
  return data as MemoryPage;
}

export function checkDeleted(data: unknown): DeletedPage {
  need(data, "total", "number", "deleted list answer");
  need(data, "grace_seconds", "number", "deleted list answer");
  (need(data, "items", "array", "deleted list answer") as unknown[]).forEach((m) => {
    checkMemory(m, "deleted memory");
    for (const key of ["deleted_at", "restorable_until", "how", "deleted_by"]) need(m, key, "string", "deleted memory");
  });
  return data as DeletedPage;
}

export function checkForget(data: unknown): ForgetResult {
  need(data, "count", "number", "forget answer");
  need(data, "ids", "array", "forget answer");
  need(data, "dry_run", "boolean", "forget answer");
  return data as ForgetResult;
}

export function checkErasure(data: unknown): Erasure {
  need(data, "deleted", "object", "erase answer");
  need(data, "at", "string", "erase answer");
  return data as Erasure;
}

export function checkSession(data: unknown): SessionState {
  need(data, "user_id", "string", "session");
  need(data, "session_id", "string", "session");
  need(data, "buffer", "array", "session");
  need(data, "actions", "array", "session");
  need(data, "slots", "object", "session");
  return data as SessionState;
}

export function checkDebug(data: unknown): TurnDebug {
  need(data, "memory_ids", "array", "debug");
  need(data, "chroma_retrieved_count", "number", "debug");
  need(data, "session_id", "string", "debug");
  need(data, "mode", "string", "debug");
  return data as TurnDebug;
}

export function readCompletion(data: unknown, replayed: boolean): ChatCompletion {
  const what = "chat completion";
  const choice = (need(data, "choices", "array", what) as unknown[])[0];
  const message = need(choice, "message", "object", `${what}.choices[0]`);
  const obj = data as Json;
  return {
    id: need(data, "id", "string", what) as string,
    model: need(data, "model", "string", what) as string,
    content: need(message, "content", "string", `${what}.message`) as string,
    finish_reason: ((choice as Json)["finish_reason"] as string | null | undefined) ?? null,
    usage: need(data, "usage", "object", what) as Json,
    debug: obj["debug"] == null ? null : checkDebug(obj["debug"]),
    replayed,
  };
}

export function readChunk(data: unknown): ChatChunk {
  const what = "chat chunk";
  const choice = (need(data, "choices", "array", what) as unknown[])[0] as Json | undefined;
  const delta = choice === undefined ? {} : (need(choice, "delta", "object", `${what}.choices[0]`) as Json);
  const obj = data as Json;
  const chunk: ChatChunk = {
    id: need(data, "id", "string", what) as string,
    delta: typeof delta["content"] === "string" ? delta["content"] : "",
    finish_reason: (choice?.["finish_reason"] as string | null | undefined) ?? null,
  };
  if (typeof obj["response"] === "string") chunk.response = obj["response"];
  if (obj["usage"] != null) chunk.usage = need(data, "usage", "object", what) as Json;
  if (obj["debug"] != null) chunk.debug = checkDebug(obj["debug"]);
  return chunk;
}

export function checkHistory(data: unknown): HistoryEvent[] {
  const events = need(data, "events", "array", "history") as unknown[];
  for (const e of events) {
    for (const key of ["event", "at", "actor", "role", "request_id"]) need(e, key, "string", "history event");
    need(e, "detail", "object", "history event");
  }
  return events as HistoryEvent[];
}
