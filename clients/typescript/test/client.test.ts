/**
 * The TypeScript client against a live mnemo (MNEMO_URL, with MNEMO_TOKEN for MNEMO_USER), started by
 * tests/clients/test_typescript_client.py. Every call of the memory API, sessions and chat (plain and
 * streamed), in Chinese and English; typed errors; ids refused before sending. The client checks the
 * answers' shape, so a renamed field fails here with ContractError.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";

import {
  BadRequestError,
  ForbiddenError,
  InvalidIdError,
  MnemoClient,
  NotFoundError,
  VersionMismatchError,
  UnauthorizedError,
  UnavailableError,
  type ChatChunk,
} from "../src/index.js";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run tests/clients/test_typescript_client.py`);
  return value;
}

const url = env("MNEMO_URL");
const user = env("MNEMO_USER");
const client = new MnemoClient({ baseUrl: url, token: env("MNEMO_TOKEN") });

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not true after 30 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

after(async () => {
  await client.erase(user);
});

describe("memory API", () => {
  test("ingest, search, list, forget, delete, export", async () => {
    const stored = await client.ingest(user, "s.1", [
      { role: "user", content: "I moved to Lisbon last spring.", id: "m.1" },
      { role: "user", content: "我最喜欢的茶是乌龙茶。", id: "m.2" },
      { role: "user", content: "My cat is called Miso.", id: "m.3" },
    ]);
    assert.equal(stored.stored, 3);
    assert.deepEqual(stored.skipped ?? [], []);

    const hits = (await client.search(user, "where do I live", { topK: 3, timeZone: "Asia/Shanghai" })).results;
    assert.match(hits[0]!.content, /Lisbon/);
    const zh = (await client.search(user, "我喜欢喝什么茶", { topK: 1 })).results;
    assert.match(zh[0]!.content, /乌龙茶/);

    const page = await client.listMemories(user, { limit: 10, sessionId: "s.1" });
    assert.equal(page.total, 3);

    const preview = await client.forget(user, { query: "cat Miso", minRelevance: 0.5, dryRun: true });
    assert.equal(preview.dry_run, true);
    assert.ok(preview.memories?.some((m) => m.content.includes("Miso")));

    const lisbon = page.items.find((m) => m.content.includes("Lisbon"))!;
    const read = await client.getMemory(user, lisbon.id);
    assert.equal(read.content, lisbon.content);
    assert.ok(read.version);
    const edited = await client.editMemory(user, lisbon.id, read.version, { content: "I moved to Porto 我搬到波尔图了", pinned: true });
    assert.equal(edited.content, "I moved to Porto 我搬到波尔图了");
    assert.equal(edited.pinned, true);
    assert.notEqual(edited.version, read.version);
    await assert.rejects(client.editMemory(user, lisbon.id, read.version, { importance: 0.9 }), (err: unknown) => {
      assert.ok(err instanceof VersionMismatchError);
      assert.equal(err.code, "version_mismatch");
      return true;
    });
    const events = await client.memoryHistory(user, lisbon.id);
    assert.deepEqual(events.map((e) => e.event), ["created", "edited"]);
    assert.match(JSON.stringify(events[1]!.detail), /Lisbon/);
    await client.deleteMemory(user, lisbon.id);
    await assert.rejects(client.deleteMemory(user, lisbon.id), (err: unknown) => {
      assert.ok(err instanceof NotFoundError);
      assert.equal(err.code, "memory_not_found");
      assert.ok(err.requestId);
      return true;
    });

    const document = await client.export(user);
    assert.match(JSON.stringify(document["memories"]), /乌龙茶/);
  });

  test("a deleted memory is listed and restored, and forget sends min_relevance", async () => {
    const other = `${user}.erase`;
    const bodies: string[] = [];
    const spy = new MnemoClient({
      baseUrl: url,
      token: env("MNEMO_TOKEN_ERASE"),
      fetch: (input, init) => {
        if (String(input).endsWith("/forget")) bodies.push(String(init?.body));
        return fetch(input, init);
      },
    });
    await spy.ingest(other, "s1", [
      { role: "user", content: "我的护照放在蓝色箱子里。", id: "d.1" },
      { role: "user", content: "My bike is a red Bianchi.", id: "d.2" },
    ]);
    const page = await spy.listMemories(other);
    const bike = page.items.find((m) => m.content.includes("Bianchi"))!;
    const passport = page.items.find((m) => m.content.includes("护照"))!;
    await spy.deleteMemory(other, bike.id);
    const forgot = await spy.forget(other, { sessionId: "s1", dryRun: false });
    assert.deepEqual(forgot.ids, [passport.id]);
    await spy.forget(other, { query: "bike", minSimilarity: 0.3, dryRun: true }); // the deprecated name
    assert.deepEqual(JSON.parse(bodies.at(-1)!), { dry_run: true, query: "bike", min_relevance: 0.7 });

    const deleted = await spy.listDeleted(other);
    assert.equal(deleted.total, 2);
    assert.ok(deleted.grace_seconds > 0);
    assert.deepEqual(
      deleted.items.map((d) => [d.id, d.how]),
      [
        [passport.id, "forgotten"],
        [bike.id, "deleted"],
      ],
    );
    assert.equal((await spy.listDeleted(other, { limit: 1, offset: 1 })).items[0]!.id, bike.id);
    assert.equal((await spy.restoreMemory(other, passport.id)).id, passport.id);
    assert.match((await spy.search(other, "我的护照在哪里？", { topK: 1 })).results[0]!.content, /护照/);
    await assert.rejects(spy.restoreMemory(other, passport.id), (err: unknown) => {
      assert.ok(err instanceof NotFoundError);
      assert.equal(err.code, "memory_not_found");
      return true;
    });
    await spy.erase(other);
  });

  test("erase sends the confirmation and empties the user", async () => {
    const other = `${user}.erase`;
    const seen: string[] = [];
    const spy = new MnemoClient({
      baseUrl: url,
      token: env("MNEMO_TOKEN_ERASE"),
      fetch: (input, init) => {
        seen.push(`${init?.method} ${String(input)}`);
        return fetch(input, init);
      },
    });
    await spy.ingest(other, "s1", [{ role: "user", content: "temporary 临时" }]);
    const receipt = await spy.erase(other);
    assert.equal(receipt.deleted["chroma"], 1);
    assert.ok(seen.at(-1)!.endsWith(`?confirm=${encodeURIComponent(other)}`), seen.at(-1));
    assert.match(seen.at(-1)!, /%2Eerase/); // "." travels encoded in the path
    assert.equal((await spy.listMemories(other)).total, 0);
  });

  test("bad ids throw before anything is sent", async () => {
    const sent: string[] = [];
    const offline = new MnemoClient({
      baseUrl: "http://127.0.0.1:9",
      token: "t",
      fetch: (input) => {
        sent.push(String(input));
        throw new Error("no request should be sent");
      },
    });
    for (const bad of ["", ".", "..", "a/b", "a b", "a\n", "é", "x".repeat(129), "{a}"]) {
      await assert.rejects(offline.listMemories(bad), InvalidIdError);
      await assert.rejects(offline.deleteMemory("alice", bad), InvalidIdError);
      await assert.rejects(offline.getSession("alice", bad), InvalidIdError);
      await assert.rejects(offline.erase(bad), InvalidIdError);
    }
    assert.deepEqual(sent, []);
  });
});

describe("errors", () => {
  test("a bad token is UnauthorizedError with mnemo's code", async () => {
    const anonymous = new MnemoClient({ baseUrl: url, token: "not-a-jwt" });
    await assert.rejects(anonymous.listMemories(user), (err: unknown) => {
      assert.ok(err instanceof UnauthorizedError);
      assert.equal(err.status, 401);
      assert.equal(err.code, "invalid_token");
      return true;
    });
  });

  test("a time zone that is no IANA name is BadRequestError", async () => {
    await assert.rejects(client.search(user, "昨天 yesterday", { timeZone: "Beijing" }), (err: unknown) => {
      assert.ok(err instanceof BadRequestError);
      assert.equal(err.code, "validation_error");
      return true;
    });
  });

  test("another user's memory is ForbiddenError", async () => {
    await assert.rejects(client.search("someone-else", "任何 anything"), (err: unknown) => {
      assert.ok(err instanceof ForbiddenError);
      assert.equal(err.code, "forbidden");
      return true;
    });
  });

  test("a 503 is retried after Retry-After with the same Idempotency-Key", async () => {
    // the first attempt is answered as mnemo answers a Redis outage; the second reaches mnemo
    const keys: (string | null)[] = [];
    let calls = 0;
    const flaky = new MnemoClient({
      baseUrl: url,
      token: env("MNEMO_TOKEN"),
      fetch: async (input, init) => {
        keys.push(new Headers(init?.headers).get("idempotency-key"));
        if (calls++ === 0) {
          const body = { error: "redis_unavailable", detail: "redis is unavailable", request_id: "r1" };
          return new Response(JSON.stringify(body), { status: 503, headers: { "Retry-After": "0" } });
        }
        return fetch(input, init);
      },
    });
    const turn = await flaky.chat([{ role: "user", content: "hello again 你好" }], { sessionId: "retry" });
    assert.ok(turn.content);
    assert.equal(keys.length, 2);
    assert.ok(keys[0]);
    assert.equal(keys[0], keys[1]);

    const giveUp = new MnemoClient({
      baseUrl: url,
      token: "t",
      maxRetryWait: 1,
      fetch: async () =>
        new Response(JSON.stringify({ error: "chroma_unavailable", detail: "down", request_id: "r2" }), {
          status: 503,
          headers: { "Retry-After": "5" },
        }),
    });
    await assert.rejects(giveUp.listSessions(user), (err: unknown) => {
      assert.ok(err instanceof UnavailableError);
      assert.equal(err.code, "chroma_unavailable");
      assert.equal(err.retryAfter, 5);
      return true;
    });
  });
});

describe("sessions and chat", () => {
  test("a plain turn, then a streamed one in another session recalls it", async () => {
    const first = await client.chat(
      [{ role: "user", content: "Remember: my favourite tea is oolong. 我最喜欢乌龙茶。" }],
      { sessionId: "c1" },
    );
    assert.ok(first.content);
    assert.equal(first.debug?.session_id, "c1");
    assert.equal(first.replayed, false);
    assert.ok((await client.listSessions(user)).includes("c1"));
    const state = await client.getSession(user, "c1");
    assert.deepEqual(
      state.buffer.map((m) => m.role),
      ["user", "assistant"],
    );
    await eventually(
      async () => (await client.listMemories(user, { limit: 100 })).items.some((m) => m.content.includes("oolong")),
      "the turn is remembered",
    );

    const chunks: ChatChunk[] = [];
    for await (const chunk of client.chatStream([{ role: "user", content: "Which tea do I like?" }], {
      sessionId: "c2",
    })) {
      chunks.push(chunk);
    }
    assert.ok(chunks.filter((c) => c.delta).length > 1, "it streamed piece by piece");
    const last = chunks.at(-1)!;
    assert.equal(last.finish_reason, "stop");
    assert.equal(last.response, chunks.map((c) => c.delta).join(""));
    assert.ok(last.debug && last.debug.memory_ids.length > 0, "something was recalled");
    const memories = new Map((await client.listMemories(user, { limit: 100 })).items.map((m) => [m.id, m]));
    assert.ok(last.debug.memory_ids.some((id) => memories.get(id)?.content.includes("oolong")));

    await client.deleteSession(user, "c2");
    assert.ok(!(await client.listSessions(user)).includes("c2"));
  });

  test("the same Idempotency-Key replays the recorded turn", async () => {
    const msg = [{ role: "user" as const, content: "hello 你好" }];
    const one = await client.chat(msg, { sessionId: "k1", idempotencyKey: "ts-turn-1" });
    const two = await client.chat(msg, { sessionId: "k1", idempotencyKey: "ts-turn-1" });
    assert.equal(two.replayed, true);
    assert.equal(two.id, one.id);
  });
});

describe("relevance and tags", () => {
  test("every hit has its relevance; search takes minRelevance and tags, list takes tags and tiers", async () => {
    const stored = await client.ingest(user, "tags", [
      { role: "user", content: "我是一名小学老师，住在杭州", id: "p-1" },
      { role: "user", content: "I'm preparing for IELTS this summer", id: "p-2" },
      { role: "user", content: "我是老师，正在备考雅思，目标7分", id: "p-3" },
      { role: "user", content: "I love hiking with my dog on weekends", id: "p-4" },
    ]);
    const id = (source: string): string => stored.memories.find((m) => m.source_message_ids[0] === source)!.id;
    for (const query of ["我在备考什么考试？", "which exam am I preparing for?"]) {
      const all = (await client.search(user, query, { topK: 10, minRelevance: 0, sessionId: "tags" })).results;
      assert.equal(all.length, 4);
      for (const hit of all) assert.ok(hit.relevance >= 0 && hit.relevance <= 1, String(hit.relevance));
      const none = await client.search(user, query, { topK: 10, minRelevance: 0.99, sessionId: "tags" });
      assert.deepEqual(none.results, []);
      const tagged = await client.search(user, query, { minRelevance: 0, tags: ["#职业_教师", "#goal_ielts"] });
      assert.deepEqual(tagged.results.map((h) => h.id), [id("p-3")]);
    }
    const teachers = await client.listMemories(user, { tags: ["#occupation_teacher"], sessionId: "tags" });
    assert.deepEqual(new Set(teachers.items.map((m) => m.id)), new Set([id("p-1"), id("p-3")]));
    const both = await client.listMemories(user, { tags: ["#职业_教师", "#目标_备考雅思"], archiveTier: "hot" });
    assert.deepEqual(both.items.map((m) => m.id), [id("p-3")]);
    assert.equal((await client.listMemories(user, { archiveTier: "cold", sessionId: "tags" })).total, 0);
  });
});
