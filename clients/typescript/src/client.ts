/**
 * `MnemoClient`: mnemo's HTTP API over `fetch` (browsers, Node 20+). 429 and 503 answers (and a 409
 * busy one) are retried, waiting what `Retry-After` says; every POST carries an `Idempotency-Key` from
 * its first attempt, so a retried turn or write is answered once. Redirects are never followed.
 */
import {
  apiError,
  ApiError,
  ContractError,
  MnemoConnectionError,
  ServerError,
  StreamError,
} from "./errors.js";
import { checkId, segment } from "./ids.js";
import { sseData } from "./sse.js";
import {
  checkDeleted,
  checkErasure,
  checkForget,
  checkHistory,
  checkIngest,
  checkMemory,
  checkPage,
  checkSearch,
  checkSession,
  need,
  readChunk,
  readCompletion,
  type ChatChunk,
  type ChatCompletion,
  type DeletedPage,
  type Erasure,
  type ForgetResult,
  type HistoryEvent,
  type IngestResult,
  type Json,
  type Memory,
  type MemoryDetail,
  type MemoryEdit,
  type MemoryPage,
  type SearchResult,
  type SessionState,
} from "./types.js";

/** Epoch seconds, ISO 8601 text, or a Date. */
export type Timestamp = string | number | Date;

export interface Message {
  role: "user" | "assistant";
  content: string;
  /** Makes a re-send overwrite instead of add. */
  id?: string;
  name?: string;
  timestamp?: string | number;
}

export interface ChatMessage {
  role: "system" | "developer" | "user" | "assistant";
  content: string;
  name?: string;
}

export interface MnemoClientOptions {
  /** mnemo's origin (and path prefix, behind a proxy), e.g. "http://127.0.0.1:8000". */
  baseUrl: string;
  /** A JWT for the user (or an admin); a function is asked before every request (token refresh). */
  token: string | (() => string | Promise<string>);
  /** Retries of 429/503/busy answers and network failures (2). */
  maxRetries?: number;
  /** The longest `Retry-After` (seconds) worth waiting for; longer ones are thrown at once (30). */
  maxRetryWait?: number;
  /** Per request, except streams (60 000 ms). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface SearchOptions {
  topK?: number;
  sessionId?: string;
  excludeSessionId?: string;
  topic?: string;
  since?: Timestamp;
  until?: Timestamp;
  explain?: boolean;
  /** The user's IANA time zone ("Asia/Shanghai"): their "昨天", "last Friday" and "3月" are read in it. */
  timeZone?: string;
  /** Leave out hits whose `relevance` is below this, 0 .. 1 (default: the server's SEARCH_MIN_RELEVANCE). */
  minRelevance?: number;
  /** Profile tags ("#职业_教师", "#goal_ielts"): only memories stating every one. */
  tags?: string[];
}

export interface ListOptions {
  limit?: number;
  offset?: number;
  sort?: "recent" | "importance";
  topic?: string;
  sessionId?: string;
  source?: "user" | "assistant";
  since?: Timestamp;
  until?: Timestamp;
  currentOnly?: boolean;
  tier?: "fact" | "episodic";
  archiveTier?: "hot" | "warm" | "cold";
  /** Profile tags ("#职业_教师", "#goal_ielts"): only memories stating every one. */
  tags?: string[];
}

export interface ForgetCriteria {
  topic?: string;
  sessionId?: string;
  before?: Timestamp;
  after?: Timestamp;
  query?: string;
  /** By `query`, the relevance a memory needs to be forgotten: 0.5 .. 1 (server default 0.7). */
  minRelevance?: number;
  /** @deprecated use `minRelevance`: sent as minRelevance = max(0.7, minSimilarity), as mnemo reads it. */
  minSimilarity?: number;
  dryRun?: boolean;
}

/** The server's default relevance a forget by meaning needs. */
const FORGET_MIN_RELEVANCE = 0.7;

export interface ChatOptions {
  sessionId?: string;
  userId?: string;
  model?: string;
  idempotencyKey?: string;
  /** The user's IANA time zone ("Asia/Shanghai"): the turn's "昨天" is read in it, when recalled and when stored. */
  timeZone?: string;
  signal?: AbortSignal;
  /** Other OpenAI parameters (temperature, max_tokens, ...), sent as given. */
  params?: Json;
}

interface Call {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  ifMatch?: string;
  path: string;
  /** A list value is sent as the parameter repeated (`tags=a&tags=b`). */
  query?: Record<string, string | string[]>;
  body?: Json;
  idempotencyKey?: string | undefined;
  stream?: boolean;
  signal?: AbortSignal | undefined;
}

const RETRY_STATUSES = new Set([429, 503]);

function stamp(value: Timestamp): string | number {
  return value instanceof Date ? value.toISOString() : value;
}

/** The given (not undefined) values, timestamps as mnemo reads them. */
function given(values: Record<string, unknown>): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(values)) {
    if (v !== undefined) out[k] = v instanceof Date ? stamp(v) : v;
  }
  return out;
}

/** Profile tags as a list; a lone string is refused, not split into characters. */
function tagList(tags: string[] | undefined): string[] | undefined {
  if (tags === undefined) return undefined;
  if (!Array.isArray(tags)) throw new TypeError('tags must be a list of tags, e.g. ["#职业_教师"]');
  return tags.length > 0 ? [...tags] : undefined;
}

function queryString(query: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  }
  return params.toString();
}

function randomKey(): string {
  // getRandomValues works in every browser context (randomUUID needs a secure one)
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return "mnemo-ts-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function backoffSeconds(attempt: number): number {
  return Math.min(8, 0.25 * 2 ** attempt);
}

export function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get("retry-after");
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(0, (when - Date.now()) / 1000);
}

async function errorOf(response: Response): Promise<ApiError> {
  const requestId = response.headers.get("x-request-id");
  if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
    return new ServerError({
      status: response.status,
      code: "unexpected_redirect",
      detail: "mnemo answered a redirect; this client never follows redirects",
      requestId,
      retryAfter: null,
    });
  }
  const text = await response.text();
  let code = `http_${response.status}`;
  let detail = text.slice(0, 500);
  let id = requestId;
  try {
    const body = JSON.parse(text) as Json;
    const error = body["error"];
    if (typeof error === "string") {
      code = error;
      detail = String(body["detail"] ?? "");
      id = typeof body["request_id"] === "string" && body["request_id"] ? body["request_id"] : id;
    } else if (error !== null && typeof error === "object" && !Array.isArray(error)) {
      // OpenAI's envelope, which /v1/chat/* and /v1/models answer with: mnemo's code is its `code`
      const openai = error as Json;
      code = typeof openai["code"] === "string" && openai["code"] ? openai["code"] : code;
      detail = String(openai["message"] ?? "");
      id = typeof body["request_id"] === "string" && body["request_id"] ? body["request_id"] : id;
    }
  } catch {
    // not the envelope (a proxy's page): keep the text
  }
  return apiError({
    status: response.status,
    code,
    detail,
    requestId: id,
    retryAfter: retryAfterSeconds(response.headers),
  });
}

export class MnemoClient {
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly maxRetryWait: number;
  readonly timeoutMs: number;
  private readonly token: MnemoClientOptions["token"];
  private readonly fetcher: typeof fetch;

  constructor(options: MnemoClientOptions) {
    const url = new URL(options.baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`baseUrl must be http(s)://host[:port][/prefix], got ${options.baseUrl}`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token;
    this.maxRetries = options.maxRetries ?? 2;
    this.maxRetryWait = options.maxRetryWait ?? 30;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // -- memory ------------------------------------------------------------------------------------

  /** Store messages as long-term memories; resolves once they are searchable. */
  async ingest(
    userId: string,
    sessionId: string,
    messages: Message[],
    options: { idempotencyKey?: string; timeZone?: string } = {},
  ): Promise<IngestResult> {
    checkId(sessionId, "sessionId");
    messages.forEach((m) => m.id !== undefined && checkId(m.id, "message id"));
    const body = {
      session_id: sessionId,
      messages: messages.map((m) => ({ ...m })),
      ...given({ time_zone: options.timeZone }),
    };
    const call: Call = { method: "POST", path: memory(userId, "messages"), body };
    if (options.idempotencyKey !== undefined) call.idempotencyKey = options.idempotencyKey;
    return checkIngest(await this.json(call));
  }

  async search(userId: string, query: string, options: SearchOptions = {}): Promise<SearchResult> {
    for (const sid of [options.sessionId, options.excludeSessionId]) {
      if (sid !== undefined) checkId(sid, "sessionId");
    }
    const body = given({
      query,
      top_k: options.topK ?? 5,
      explain: options.explain ?? false,
      session_id: options.sessionId,
      exclude_session_id: options.excludeSessionId,
      topic: options.topic,
      since: options.since,
      until: options.until,
      time_zone: options.timeZone,
      min_relevance: options.minRelevance,
      tags: tagList(options.tags),
    });
    return checkSearch(await this.json({ method: "POST", path: memory(userId, "search"), body }));
  }

  async listMemories(userId: string, options: ListOptions = {}): Promise<MemoryPage> {
    if (options.sessionId !== undefined) checkId(options.sessionId, "sessionId");
    const query: Record<string, string | string[]> = {
      limit: String(options.limit ?? 20),
      offset: String(options.offset ?? 0),
      sort: options.sort ?? "recent",
    };
    const filters = given({
      topic: options.topic,
      session_id: options.sessionId,
      source: options.source,
      since: options.since,
      until: options.until,
      tier: options.tier,
      archive_tier: options.archiveTier,
    });
    for (const [k, v] of Object.entries(filters)) query[k] = String(v);
    if (options.currentOnly) query["current_only"] = "true";
    const tags = tagList(options.tags);
    if (tags !== undefined) query["tags"] = tags;
    return checkPage(await this.json({ method: "GET", path: memory(userId, "list"), query }));
  }

  /** Delete the memories matching every given criterion (`dryRun`: only list them). Forgotten memories
   * stay restorable for a grace period (`listDeleted`, `restoreMemory`). */
  async forget(userId: string, criteria: ForgetCriteria): Promise<ForgetResult> {
    if (criteria.sessionId !== undefined) checkId(criteria.sessionId, "sessionId");
    if (criteria.minRelevance !== undefined && criteria.minSimilarity !== undefined) {
      throw new TypeError("give minRelevance or the deprecated minSimilarity, not both");
    }
    const minRelevance =
      criteria.minSimilarity !== undefined ? Math.max(FORGET_MIN_RELEVANCE, criteria.minSimilarity) : criteria.minRelevance;
    const body = given({
      dry_run: criteria.dryRun ?? false,
      topic: criteria.topic,
      session_id: criteria.sessionId,
      before: criteria.before,
      after: criteria.after,
      query: criteria.query,
      min_relevance: minRelevance,
    });
    return checkForget(await this.json({ method: "POST", path: memory(userId, "forget"), body }));
  }

  /** One memory by id, in any archive tier, with its `version` (what an edit's If-Match names). */
  async getMemory(userId: string, memoryId: string): Promise<MemoryDetail> {
    const data = await this.json({ method: "GET", path: memory(userId, segment(memoryId, "memoryId")) });
    need(data, "version", "string", "memory");
    return checkMemory(data) as MemoryDetail;
  }

  /** Correct a memory read with `getMemory`, naming the `version` read: only the fields given change.
   * A memory that changed since is a `VersionMismatchError` (412). */
  async editMemory(userId: string, memoryId: string, version: string, edit: MemoryEdit): Promise<MemoryDetail> {
    const body: Json = {};
    if (edit.content !== undefined) body["content"] = edit.content;
    if (edit.importance !== undefined) body["importance"] = edit.importance;
    if (edit.pinned !== undefined) body["pinned"] = edit.pinned;
    if (edit.topic !== undefined) body["topic"] = edit.topic;
    if (edit.validTo !== undefined) body["valid_to"] = edit.validTo;
    if (Object.keys(body).length === 0) throw new TypeError("give content, importance, pinned, topic or validTo");
    if (!version || version.includes('"')) throw new TypeError("version must be the memory's version as read");
    const path = memory(userId, segment(memoryId, "memoryId"));
    const data = await this.json({ method: "PATCH", path, body, ifMatch: `"${version}"` });
    need(data, "version", "string", "memory");
    return checkMemory(data) as MemoryDetail;
  }

  /** Every event of the memory, oldest first (created, merged, superseded, edited, restored, deleted). */
  async memoryHistory(userId: string, memoryId: string): Promise<HistoryEvent[]> {
    return checkHistory(await this.json({ method: "GET", path: memory(userId, segment(memoryId, "memoryId"), "history") }));
  }

  async deleteMemory(userId: string, memoryId: string): Promise<void> {
    await this.send({ method: "DELETE", path: memory(userId, segment(memoryId, "memoryId")) });
  }

  /** Deleted and forgotten memories that can still be restored, most recently deleted first. */
  async listDeleted(userId: string, options: { limit?: number; offset?: number } = {}): Promise<DeletedPage> {
    const query = { limit: String(options.limit ?? 20), offset: String(options.offset ?? 0) };
    return checkDeleted(await this.json({ method: "GET", path: memory(userId, "deleted"), query }));
  }

  /** Bring a deleted or forgotten memory back (same id), searchable again; `NotFoundError`
   * (`memory_not_found`) when it is not restorable (never deleted, restored, or its grace is over). */
  async restoreMemory(userId: string, memoryId: string): Promise<Memory> {
    return checkMemory(
      await this.json({ method: "POST", path: memory(userId, segment(memoryId, "memoryId"), "restore") }),
    );
  }

  /** Everything mnemo holds about the user, as one JSON document. */
  async export(userId: string): Promise<Json> {
    return this.json({ method: "GET", path: memory(userId, "export") });
  }

  /** GDPR erase of everything about the user (sends `confirm=<userId>`, as mnemo asks). */
  async erase(userId: string): Promise<Erasure> {
    const query = { confirm: checkId(userId, "userId") };
    return checkErasure(await this.json({ method: "DELETE", path: memory(userId), query }));
  }

  // -- sessions ----------------------------------------------------------------------------------

  async listSessions(userId: string): Promise<string[]> {
    const data = await this.json({ method: "GET", path: `/v1/sessions/${segment(userId, "userId")}` });
    return need(data, "session_ids", "array", "session list") as string[];
  }

  async getSession(userId: string, sessionId: string): Promise<SessionState> {
    return checkSession(await this.json({ method: "GET", path: sessionPath(userId, sessionId) }));
  }

  async deleteSession(userId: string, sessionId: string): Promise<void> {
    await this.send({ method: "DELETE", path: sessionPath(userId, sessionId) });
  }

  // -- chat --------------------------------------------------------------------------------------

  /** One chat turn that remembers; `debug.memory_ids` are what it recalled. */
  async chat(messages: ChatMessage[], options: ChatOptions = {}): Promise<ChatCompletion> {
    const response = await this.send(chatCall(messages, options, false));
    const replayed = response.headers.get("idempotent-replayed") === "true";
    return readCompletion(await readJson(response), replayed);
  }

  /**
   * The turn as it is generated: an async iterator over the server-sent events. The last chunk has
   * `debug` (what was recalled); a failure after the stream started throws `StreamError`.
   */
  async *chatStream(messages: ChatMessage[], options: ChatOptions = {}): AsyncGenerator<ChatChunk> {
    const response = await this.send(chatCall(messages, options, true));
    if (response.body === null) throw new ContractError("a chat stream without a body");
    for await (const data of sseData(response.body)) {
      if (data === "[DONE]") return;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        throw new ContractError(`a stream event is not JSON: ${data.slice(0, 200)}`);
      }
      const error = (event as Json)["error"];
      if (error !== null && typeof error === "object") {
        const e = error as Json;
        throw new StreamError(String(e["code"] ?? e["type"] ?? "stream_error"), String(e["message"]));
      }
      yield readChunk(event);
    }
  }

  // -- plumbing ----------------------------------------------------------------------------------

  private async json(call: Call): Promise<Json> {
    return readJson(await this.send(call));
  }

  private async send(call: Call): Promise<Response> {
    const key = call.method === "POST" ? (call.idempotencyKey ?? randomKey()) : undefined;
    let url = this.baseUrl + call.path;
    if (call.query) url += "?" + queryString(call.query);
    for (let attempt = 0; ; attempt++) {
      const token = typeof this.token === "function" ? await this.token() : this.token;
      const headers: Record<string, string> = {
        Authorization: `Bearer ${token}`,
        Accept: call.stream ? "text/event-stream" : "application/json",
      };
      if (key !== undefined) headers["Idempotency-Key"] = key;
      if (call.ifMatch !== undefined) headers["If-Match"] = call.ifMatch;
      const init: RequestInit = { method: call.method, headers, redirect: "manual" };
      if (call.body !== undefined) {
        headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(call.body);
      }
      const signal = call.signal ?? (call.stream ? undefined : AbortSignal.timeout(this.timeoutMs));
      if (signal !== undefined) init.signal = signal;
      let response: Response;
      try {
        response = await this.fetcher(url, init);
      } catch (err) {
        if (err instanceof Error && err.name === "AbortError") throw err;
        if (attempt >= this.maxRetries) {
          throw new MnemoConnectionError(`${call.method} ${call.path}: ${String(err)}`, { cause: err });
        }
        await sleep(backoffSeconds(attempt) * 1000);
        continue;
      }
      if (response.ok) return response;
      const wait = retryAfterSeconds(response.headers);
      const retryable = RETRY_STATUSES.has(response.status) || (response.status === 409 && wait !== null);
      const delay = wait ?? backoffSeconds(attempt);
      if (!retryable || attempt >= this.maxRetries || delay > this.maxRetryWait) {
        throw await errorOf(response);
      }
      await response.body?.cancel();
      await sleep(delay * 1000);
    }
  }
}

function memory(userId: string, ...rest: string[]): string {
  return ["/v1/memory", segment(userId, "userId"), ...rest].join("/");
}

function sessionPath(userId: string, sessionId: string): string {
  return `/v1/sessions/${segment(userId, "userId")}/${segment(sessionId, "sessionId")}`;
}

function chatCall(messages: ChatMessage[], options: ChatOptions, stream: boolean): Call {
  if (options.sessionId !== undefined) checkId(options.sessionId, "sessionId");
  if (options.userId !== undefined) checkId(options.userId, "userId");
  const body = {
    ...(options.params ?? {}),
    messages: messages.map((m) => ({ ...m })),
    stream,
    ...given({
      session_id: options.sessionId,
      user_id: options.userId,
      model: options.model,
      time_zone: options.timeZone,
    }),
  };
  return {
    method: "POST",
    path: "/v1/chat/completions",
    body,
    idempotencyKey: options.idempotencyKey,
    stream,
    signal: options.signal,
  };
}

async function readJson(response: Response): Promise<Json> {
  let data: unknown;
  try {
    data = await response.json();
  } catch {
    throw new ContractError(`${response.url}: the answer is not JSON`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ContractError(`${response.url}: expected a JSON object`);
  }
  return data as Json;
}
