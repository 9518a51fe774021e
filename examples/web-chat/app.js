// @ts-check
/**
 * The sample web chat: sign in with a mnemo token, chat with streaming through the TypeScript client,
 * and see what mnemo recalled for each turn. Served from its own origin; mnemo must list that origin in
 * CORS_ALLOW_ORIGINS. `./mnemo-client` links to clients/typescript/dist (scripts/ensure_ts_client.sh).
 *
 * The token is kept in this page's memory only (not in localStorage): a reload signs out, and no other
 * script on the origin can read a stored token later.
 */
import { ApiError, MnemoClient } from "./mnemo-client/index.js";

/** @typedef {"en" | "zh"} Lang */

const STRINGS = {
  en: {
    title: "mnemo web chat",
    console: "Open the console",
    api: "mnemo URL",
    token: "Token (JWT)",
    tokenHelp: "Mint one with: python -m app.cli.token --sub alice",
    signIn: "Sign in",
    signOut: "Sign out",
    user: "User",
    session: "session",
    newSession: "New session",
    send: "Send",
    placeholder: "Say something… (Enter to send)",
    signingIn: "Signing in…",
    signedIn: "Signed in as {user}.",
    thinking: "…",
    recalled: "Recalled for this turn:",
    recalledNone: "Nothing was recalled for this turn.",
    recallDegraded: "Long-term memory was unavailable for this turn.",
    badToken: "This token is not a JWT with a user (sub).",
    unreachable: "Cannot reach mnemo at {api}. Is it running, and does its CORS_ALLOW_ORIGINS list {origin}?",
    apiError: "mnemo answered {status} {code}: {detail}",
    newSessionStarted: "New session {session}: short-term context starts empty, long-term memory stays.",
    switchLang: "中文",
  },
  zh: {
    title: "mnemo 网页聊天",
    console: "打开控制台",
    api: "mnemo 地址",
    token: "令牌（JWT）",
    tokenHelp: "生成令牌：python -m app.cli.token --sub alice",
    signIn: "登录",
    signOut: "退出",
    user: "用户",
    session: "会话",
    newSession: "新会话",
    send: "发送",
    placeholder: "说点什么……（回车发送）",
    signingIn: "正在登录……",
    signedIn: "已登录：{user}。",
    thinking: "……",
    recalled: "本轮回忆起的记忆：",
    recalledNone: "本轮没有回忆起任何记忆。",
    recallDegraded: "本轮长期记忆暂不可用。",
    badToken: "这个令牌不是带用户（sub）的 JWT。",
    unreachable: "无法连接 {api} 上的 mnemo。它是否在运行？它的 CORS_ALLOW_ORIGINS 是否包含 {origin}？",
    apiError: "mnemo 返回 {status} {code}：{detail}",
    newSessionStarted: "新会话 {session}：短期上下文从空开始，长期记忆保留。",
    switchLang: "English",
  },
};

/** @type {Lang} */
let lang = navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en";
/** @type {{ client: MnemoClient, api: string, user: string, session: string } | null} */
let state = null;

/** @param {string} id */
function $(id) {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} is missing`);
  return el;
}

/**
 * @param {keyof typeof STRINGS.en} key
 * @param {Record<string, string | number>} [values]
 */
function t(key, values = {}) {
  return STRINGS[lang][key].replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

function applyLanguage() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const el of document.querySelectorAll("[data-i18n]")) {
    const key = /** @type {keyof typeof STRINGS.en} */ (el.getAttribute("data-i18n"));
    el.textContent = t(key);
  }
  $("lang").textContent = t("switchLang");
  /** @type {HTMLTextAreaElement} */ ($("input")).placeholder = t("placeholder");
}

/**
 * @param {string} text
 * @param {"info" | "error"} [kind]
 */
function status(text, kind = "info") {
  const el = $("status");
  el.textContent = text;
  el.dataset["state"] = kind;
}

/** @param {unknown} err */
function describe(err) {
  if (err instanceof ApiError) {
    return t("apiError", { status: err.status, code: err.code, detail: err.detail });
  }
  return t("unreachable", { api: state?.api ?? /** @type {HTMLInputElement} */ ($("api")).value, origin: location.origin });
}

/** The user id a token speaks for (its `sub`); mnemo checks the signature, this page only reads it. */
function subjectOf(/** @type {string} */ token) {
  try {
    const part = token.split(".")[1] ?? "";
    const json = atob(part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "="));
    const sub = JSON.parse(json).sub;
    return typeof sub === "string" ? sub : null;
  } catch {
    return null;
  }
}

function newSessionId() {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return "web-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * @param {"user" | "assistant"} role
 * @param {string} text
 */
function addTurn(role, text) {
  const turn = document.createElement("div");
  turn.className = `turn ${role}`;
  const body = document.createElement("div");
  body.className = "text";
  body.textContent = text;
  turn.append(body);
  $("log").append(turn);
  turn.scrollIntoView({ block: "end" });
  return turn;
}

async function signIn(/** @type {SubmitEvent} */ event) {
  event.preventDefault();
  const api = /** @type {HTMLInputElement} */ ($("api")).value.trim().replace(/\/+$/, "");
  const token = /** @type {HTMLTextAreaElement} */ ($("token")).value.trim();
  const user = subjectOf(token);
  if (user === null) {
    status(t("badToken"), "error");
    return;
  }
  status(t("signingIn"));
  const client = new MnemoClient({ baseUrl: api, token, maxRetries: 1 });
  try {
    await client.listSessions(user); // checks the token, the user and that this origin may call mnemo
  } catch (err) {
    status(describe(err), "error");
    return;
  }
  state = { client, api, user, session: newSessionId() };
  $("user").textContent = user;
  $("session").textContent = state.session;
  const link = /** @type {HTMLAnchorElement} */ ($("console-link"));
  link.href = `${api}/console/`;
  link.hidden = false;
  $("signin").hidden = true;
  $("chat").hidden = false;
  status(t("signedIn", { user }));
}

function signOut() {
  state = null;
  /** @type {HTMLTextAreaElement} */ ($("token")).value = "";
  $("log").replaceChildren();
  $("chat").hidden = true;
  $("console-link").hidden = true;
  $("signin").hidden = false;
  status("");
}

function newSession() {
  if (state === null) return;
  state.session = newSessionId();
  $("session").textContent = state.session;
  $("log").replaceChildren();
  status(t("newSessionStarted", { session: state.session }));
}

/**
 * What the bot recalled: the turn's `debug.memory_ids` (in the stream's last chunk), each read by id
 * for its text; one that is gone since (forgotten, erased) is shown as its id.
 * @param {HTMLElement} turn
 * @param {import("./mnemo-client/index.js").TurnDebug | undefined} debug
 */
async function showRecall(turn, debug) {
  if (state === null) return;
  const { client, user } = state;
  const box = document.createElement("div");
  box.className = "recall";
  turn.append(box);
  const ids = debug?.memory_ids ?? [];
  if (debug?.recall_degraded) {
    box.textContent = t("recallDegraded");
    return;
  }
  if (ids.length === 0) {
    box.textContent = t("recalledNone");
    return;
  }
  const memories = await Promise.all(ids.map((id) => client.getMemory(user, id).catch(() => null)));
  box.textContent = t("recalled");
  const list = document.createElement("ul");
  ids.forEach((id, i) => {
    const item = document.createElement("li");
    const memory = memories[i];
    item.dataset["memoryId"] = id;
    item.textContent = memory ? `${memory.content} (${memory.created_at.slice(0, 10)})` : id;
    list.append(item);
  });
  box.append(list);
}

async function send(/** @type {SubmitEvent} */ event) {
  event.preventDefault();
  if (state === null) return;
  const input = /** @type {HTMLTextAreaElement} */ ($("input"));
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  const button = /** @type {HTMLButtonElement} */ ($("send"));
  button.disabled = true;
  addTurn("user", text);
  const turn = addTurn("assistant", t("thinking"));
  const body = /** @type {HTMLElement} */ (turn.querySelector(".text"));
  let chunks = 0;
  let answer = "";
  try {
    /** @type {import("./mnemo-client/index.js").TurnDebug | undefined} */
    let debug;
    for await (const chunk of state.client.chatStream([{ role: "user", content: text }], { sessionId: state.session })) {
      if (chunk.delta) {
        chunks += 1;
        answer += chunk.delta;
        body.textContent = answer;
        turn.dataset["chunks"] = String(chunks);
      }
      if (chunk.debug) debug = chunk.debug;
    }
    await showRecall(turn, debug);
    turn.dataset["done"] = "true";
    status("");
  } catch (err) {
    turn.dataset["done"] = "error";
    body.textContent = answer;
    status(describe(err), "error");
  } finally {
    button.disabled = false;
  }
}

function start() {
  const params = new URLSearchParams(location.search);
  /** @type {HTMLInputElement} */ ($("api")).value = params.get("api") ?? "http://127.0.0.1:8000";
  const asked = params.get("lang");
  if (asked === "zh" || asked === "en") lang = asked;
  applyLanguage();
  $("signin").addEventListener("submit", (e) => void signIn(/** @type {SubmitEvent} */ (e)));
  $("compose").addEventListener("submit", (e) => void send(/** @type {SubmitEvent} */ (e)));
  $("input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      /** @type {HTMLFormElement} */ ($("compose")).requestSubmit();
    }
  });
  $("new-session").addEventListener("click", newSession);
  $("signout").addEventListener("click", signOut);
  $("lang").addEventListener("click", () => {
    lang = lang === "zh" ? "en" : "zh";
    applyLanguage();
  });
  document.body.dataset["ready"] = "true";
}

start();
