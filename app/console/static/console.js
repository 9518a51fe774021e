/* mnemo memory console: every call goes to mnemo's public API with the signed-in token.
   Plain HTML + one script (docs/decisions.md, "Console: plain HTML"): no build step, nothing to
   bundle. Every view draws from the data it last received, so a language switch redraws it all
   (values, dates, messages) without a reload or a second request. Text from data is only ever set
   as text (el(), textContent): never HTML. */
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const T = window.MNEMO_I18N;
  let lang = localStorage.getItem("mnemo.lang") || ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
  let token = sessionStorage.getItem("mnemo.token") || "";
  let claims = {};
  const state = {
    user: "", view: "", offset: 0, auditBefore: null, preview: null, msg: null, signinMsg: null,
    memories: null, search: null, sessions: null, session: null, audit: [], receipt: null, chat: [], forgot: null, exported: null,
    profile: null, entities: null, entity: null, merges: null, deleted: null, deletedOffset: 0,
  };

  // a string of the UI's language; `{n}` a number picks the plural form (`key_one`) where the language has one
  const plural = (key, vars) => {
    if (!vars || typeof vars.n !== "number") return key;
    const form = `${key}_${new Intl.PluralRules(lang === "zh" ? "zh-CN" : "en").select(vars.n)}`;
    return form in T[lang] ? form : key;
  };
  const t = (key, vars) => (T[lang][plural(key, vars)] ?? T.en[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => String((vars || {})[k] ?? ""));
  const has = (key) => key in T[lang];
  // the same, as nodes: a placeholder given a Node (a person's data) is inserted as that node
  const tx = (key, vars) => {
    const f = document.createDocumentFragment();
    const s = T[lang][plural(key, vars)] ?? T.en[key] ?? key;
    let last = 0;
    s.replace(/\{(\w+)\}/g, (m, k, at) => {
      const v = (vars || {})[k];
      f.append(s.slice(last, at), v instanceof Node ? v : String(v ?? ""));
      last = at + m.length;
      return m;
    });
    f.append(s.slice(last));
    return f;
  };
  // "1 memory", "3 sessions": a number with its noun, in the plural form it takes
  const counted = (kind, n) => t(`n_${kind}`, { n });
  // a value that is the person's data (a memory's text, an id, a name): shown as it is, never translated
  const data = (v, cls) => el("span", { translate: "no", class: cls || null }, v == null || v === "" ? "—" : String(v));
  // a topic: the classifier's words in the UI's language; a topic someone typed, as typed
  const topicEl = (v) => (!v ? "—" : has(`topic_${v}`) ? t(`topic_${v}`) : data(v));
  // a value the API sends as a word (a role, a tier, an action, a mode): shown in the UI's language
  // (an unknown word shows as sent: tests/browser/test_console_words.py fails on it if it is a raw name)
  const val = (kind, v) => (v == null || v === "" ? "—" : has(`${kind}_${v}`) ? t(`${kind}_${v}`) : String(v));
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v == null) continue; else if (k === "class") e.className = v; else e.setAttribute(k, v);
    for (const kid of kids) if (kid != null && kid !== "") e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    return e;
  };
  const fmt = (x) => Number(x).toFixed(3);
  const locale = () => (lang === "zh" ? "zh-CN" : "en-GB");
  // a date: localised, minutes at most (never raw ISO with microseconds), "3 minutes ago" when recent
  function date(iso, withRelative) {
    if (!iso) return "—";
    const d = new Date(iso);
    if (isNaN(d)) return String(iso);
    const abs = new Intl.DateTimeFormat(locale(), { dateStyle: "medium", timeStyle: "short" }).format(d);
    if (!withRelative) return abs;
    const secs = (d.getTime() - Date.now()) / 1000;
    const rtf = new Intl.RelativeTimeFormat(locale(), { numeric: "auto" });
    for (const [unit, n] of [["second", 60], ["minute", 3600], ["hour", 86400], ["day", 7 * 86400]]) {
      if (Math.abs(secs) < n) {
        const size = { second: 1, minute: 60, hour: 3600, day: 86400 }[unit];
        return `${abs} (${rtf.format(Math.round(secs / size), unit)})`;
      }
    }
    return abs;
  }
  const dayFmt = () => new Intl.DateTimeFormat(locale(), { dateStyle: "medium" });
  const MONTHS = (loc) => Array.from({ length: 12 }, (_, i) => new Intl.DateTimeFormat(loc, { month: "short" }).format(new Date(2026, i, 15)).toLowerCase().replace(/\.$/, ""));
  // a date typed in a date field: "10 Nov 2026", "2026年11月10日", "2026-11-10", "10/11/2026" -> "2026-11-10" (null: not a date)
  function parseDay(text) {
    const v = text.trim().toLowerCase().replace(/\.$/, "");
    let y, m, d;
    let x;
    if ((x = /^(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?$/.exec(v))) [y, m, d] = [x[1], x[2], x[3]];
    else if ((x = /^(\d{1,2})[/.](\d{1,2})[/.](\d{4})$/.exec(v))) [d, m, y] = [x[1], x[2], x[3]];  // day first, as en-GB writes it
    else if ((x = /^(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})$/.exec(v)) || (x = /^([a-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})$/.exec(v))) {
      const [a, b] = /^\d/.test(x[1]) ? [x[1], x[2]] : [x[2], x[1]];
      const i = MONTHS("en-GB").findIndex((name) => b.startsWith(name.slice(0, 3)));
      if (i < 0) return null;
      [y, m, d] = [x[3], String(i + 1), a];
    } else return null;
    const iso = `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
    const back = new Date(iso + "T00:00:00Z");
    return isNaN(back) || back.toISOString().slice(0, 10) !== iso ? null : iso;
  }
  const showDay = (iso) => dayFmt().format(new Date(iso + "T12:00:00"));
  const dayExample = () => showDay(new Date().toISOString().slice(0, 10));
  const timeEl = (iso, rel) => el("time", { datetime: iso || null }, date(iso, rel));
  // a memory a newer one superseded (facts that change): kept, shown with when it stopped being current
  const earlier = (m) => m.superseded_by ? el("span", { class: "superseded" }, " ", t("earlier_until", { d: date(m.valid_to) })) : null;

  function translate() {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    document.title = t("page_title");
    document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
    document.querySelectorAll("[data-i18n-placeholder]").forEach((e) => { e.placeholder = t(e.dataset.i18nPlaceholder); });
    document.querySelectorAll("[data-i18n-label]").forEach((e) => { e.setAttribute("aria-label", t(e.dataset.i18nLabel)); });
    $("#lang").value = lang;
    // the topic fields take the classifier's words (work, family…): offered with their names in this language
    $("#topic-options").replaceChildren(...Object.keys(T.en).filter((k) => k.startsWith("topic_"))
      .map((k) => el("option", { value: k.slice(6), label: t(k) })));
    // the date fields: a hint in the console's locale, and a date already typed said again in it
    for (const sel of DATE_FIELDS) {
      const box = $(sel);
      box.placeholder = dayExample();  // the format to type, by example, in the console's locale
      box.title = t("date_hint", { example: dayExample() });
      const iso = parseDay(box.value);
      if (iso) box.value = showDay(iso);
    }
  }

  function decode(jwt) {
    try {
      const parts = jwt.split(".");
      if (parts.length !== 3) return null;
      const part = parts[1].replace(/-/g, "+").replace(/_/g, "/");
      const bytes = Uint8Array.from(atob(part), (c) => c.charCodeAt(0));
      const c = JSON.parse(new TextDecoder().decode(bytes));
      return c && typeof c === "object" && !Array.isArray(c) ? c : null;
    } catch (e) { return null; }
  }

  // ---- messages: kept as a key + values, so a language switch re-says them ------------------------------
  function drawMessage() {
    const m = state.msg;
    for (const id of ["#error", "#notice"]) $(id).hidden = true;
    if (!m) return;
    const box = $(m.error ? "#error" : "#notice");
    const vars = Object.fromEntries(Object.entries(m.vars || {}).map(([k, v]) => [k, typeof v === "string" ? data(v) : v]));
    box.replaceChildren(m.err ? errorText(m.err) : tx(m.key, vars));
    box.hidden = false;
  }
  const show = (key, vars, error) => { state.msg = { key, vars, error }; drawMessage(); };
  const clear = () => { state.msg = null; drawMessage(); };

  // an API error in the UI's language, from its code (the English detail is never shown)
  function errorText(err) {
    if (!err || !err.status) return t("err_network");
    const key = "err_" + (err.code || "");
    return has(key) ? t(key, err) : t("err_generic", err);
  }

  async function api(method, path, body, headers) {
    const h = { Authorization: "Bearer " + token, ...(headers || {}) };
    if (body !== undefined) h["content-type"] = "application/json";
    let res;
    try { res = await fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) }); }
    catch (_) { throw { status: 0, code: "network" }; }
    if (!res.ok) {
      let e = {};
      try { e = await res.json(); } catch (_) { /* not the envelope */ }
      throw { status: res.status, code: e.error || "" };
    }
    return res;
  }
  const json = async (method, path, body) => (await api(method, path, body)).json();

  function failed(err) {
    if (err instanceof Refused) { state.msg = { key: err.key, vars: err.vars, error: true }; drawMessage(); return; }
    // the token stopped working (expired, or the server's secret changed): back to sign-in, saying why
    if (err && err.status === 401) { signOut(err.code === "token_expired" ? "signin_session_expired" : "signin_session_invalid"); return; }
    state.msg = { err, error: true };
    drawMessage();
  }

  // one path segment: percent-encoded, dots too, so no URL normaliser can make it a dot segment
  const segment = (v) => encodeURIComponent(v).replace(/\./g, "%2E");
  const userPath = segment;
  // a date field's value as the API takes it (a day's start or end, UTC); a value that is no date says so
  class Refused extends Error { constructor(key, vars) { super(key); this.key = key; this.vars = vars; } }
  function day(sel, end) {
    const v = $(sel).value.trim();
    if (!v) return undefined;
    const iso = parseDay(v);
    if (!iso) { $(sel).focus(); throw new Refused("date_invalid", { v, example: dayExample() }); }
    $(sel).value = showDay(iso);  // said back in the console's locale
    return iso + (end ? "T23:59:59Z" : "T00:00:00Z");
  }
  const DATE_FIELDS = ["#f-since", "#f-until", "#fg-after", "#fg-before", "#au-since", "#au-until"];
  // a user id as the API's id rule has it (app/http/ids.py): checked before asking, so a typo is named
  const validId = (v) => /^[A-Za-z0-9_.@:|+-]{1,128}$/.test(v) && !/^\.+$/.test(v);
  const cell = (label, cls, ...kids) => el("td", { "data-label": t(label), class: cls || null }, ...kids);

  // ---- dialogs: one at a time, over a backdrop that dims the page behind and closes it when clicked ------
  // Focus stays inside the open dialog (Tab and Shift+Tab cycle through it), Escape closes it, and focus
  // goes back to what opened it (or, when that is gone, to the main content)
  const DIALOGS = ["#editor", "#history", "#confirm"];
  let opener = null;
  const openDialog = () => DIALOGS.map((d) => $(d)).find((d) => !d.hidden) || null;
  function dialog(id) {
    if (!openDialog()) opener = document.activeElement;
    for (const d of DIALOGS) $(d).hidden = d !== id;
    $("#backdrop").hidden = false;
  }
  function closeDialogs() {
    const was = openDialog();
    for (const d of DIALOGS) $(d).hidden = true;
    $("#backdrop").hidden = true;
    if (!was) return;
    const back = opener && opener.isConnected && opener.offsetParent !== null ? opener : $("#main");
    opener = null;
    back.focus();
  }
  const focusables = (box) => [...box.querySelectorAll("button, [href], input, select, textarea, summary, [tabindex]:not([tabindex='-1'])")]
    .filter((e) => !e.disabled && e.offsetParent !== null);
  function trapFocus(e) {
    const box = openDialog();
    if (!box) return;
    if (e.key === "Escape") { e.preventDefault(); closeDialogs(); return; }
    if (e.key !== "Tab") return;
    const all = focusables(box);
    if (!all.length) { e.preventDefault(); return; }
    const first = all[0], last = all[all.length - 1];
    const inside = box.contains(document.activeElement);
    if (e.shiftKey && (document.activeElement === first || !inside)) { e.preventDefault(); last.focus(); }
    else if (!e.shiftKey && (document.activeElement === last || !inside)) { e.preventDefault(); first.focus(); }
  }

  // ---- views ---------------------------------------------------------------------------------------
  const TABS = ["memories", "search", "forget", "deleted", "sessions", "entities", "chat", "export"];
  function view(name) {
    state.view = name;
    document.querySelectorAll("main > section").forEach((s) => { s.hidden = s.id !== "view-" + name; });
    document.querySelectorAll(".subject").forEach((s) => { s.textContent = state.user; });
    document.querySelectorAll("#nav a").forEach((a) => { if (a.id === "nav-" + name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current"); });
    closeDialogs();
  }
  const redraw = {
    memories: () => drawMemories(), search: () => drawSearch(), forget: () => { drawPreview(); drawForgot(); },
    deleted: () => drawDeleted(),
    sessions: () => { drawSessions(); drawSession(); }, entities: () => drawEntities(), audit: () => drawAudit(), erase: () => { drawErasePreview(); drawReceipt(); },
    home: () => drawFound(),
    chat: () => drawChat(), export: () => drawExported(),
  };

  // ---- memories ------------------------------------------------------------------------------------
  let listing = 0; // the newest listing asked for: an older answer (another user, other filters) is dropped
  async function loadMemories(append) {
    const mine = ++listing;
    if (!append) {
      state.offset = 0;
      // a failed listing (403, 503) must not leave the previous page's rows under this user's name
      state.memories = null;
      drawMemories();
    }
    const q = new URLSearchParams({ limit: "50", offset: String(state.offset) });
    const add = (k, v) => { if (v) q.set(k, v); };
    add("topic", $("#f-topic").value.trim()); add("session_id", $("#f-session").value.trim());
    add("source", $("#f-source").value); add("tier", $("#f-tier").value);
    add("since", day("#f-since", false)); add("until", day("#f-until", true));
    if ($("#f-current").checked) q.set("current_only", "true");
    const page = await json("GET", `/v1/memory/${userPath(state.user)}/list?${q}`);
    if (mine !== listing) return;
    const items = append && state.memories ? [...state.memories.items, ...page.items] : page.items;
    state.memories = { items, total: page.total };
    state.offset += page.items.length;
    drawMemories();
  }

  function drawMemories() {
    const body = $("#memory-list tbody");
    const page = state.memories;
    body.replaceChildren();
    $("#memory-total").textContent = page ? t("total", { n: page.total }) : "";
    $("#more").hidden = !page || state.offset >= page.total;
    const q = $("#f-text").value.trim().toLowerCase();
    $("#f-text-help").textContent = page ? t("text_filter_help", { n: page.items.length }) : "";
    if (!page) return;
    const items = !q ? page.items : page.items.filter((m) => [m.content, m.topic, m.topic && has(`topic_${m.topic}`) ? t(`topic_${m.topic}`) : "", m.session_id]
      .some((x) => (x || "").toLowerCase().includes(q)));
    if (!page.items.length) body.append(el("tr", {}, el("td", { colspan: "8" }, t("no_memories"))));
    else if (!items.length) body.append(el("tr", {}, el("td", { colspan: "8" }, tx("text_filter_none", { n: page.items.length, q: data($("#f-text").value.trim()) }))));
    for (const m of items) {
      const del = el("button", { class: "delete", type: "button" }, t("delete"));
      del.addEventListener("click", () => confirmDelete(m));
      const edit = el("button", { class: "edit", type: "button" }, t("edit"));
      edit.addEventListener("click", () => safely(() => openEditor(m.id))());
      const hist = el("button", { class: "history", type: "button" }, t("history"));
      hist.addEventListener("click", () => safely(() => openHistory(m.id))());
      const from = (m.source_message_ids || []).length ? el("span", { class: "sub sources" }, tx("from_message_ids", { ids: data(m.source_message_ids.join(", ")) })) : null;
      body.append(el("tr", { "data-id": m.id },
        el("td", { class: "content primary", "data-label": t("content") }, el("span", { class: "text", translate: "no" }, m.content), earlier(m), m.pinned ? el("span", { class: "tag" }, t("pinned_tag")) : null, from),
        cell("created", "created", timeEl(m.created_at, true)),
        cell("session", null, data(m.session_id)), cell("source", null, val("role", m.source)), cell("tier", "tier", val("tier", m.tier)),
        cell("importance_short", "num importance", importanceText(m)),
        cell("topic", "topic", topicEl(m.topic)),
        el("td", { class: "actions-cell" }, edit, hist, del)));
    }
  }

  // ---- recently deleted: what delete and forget removed, restorable until its grace period ends --------
  let deletedListing = 0;
  async function loadDeleted(append) {
    const mine = ++deletedListing;
    if (!append) { state.deletedOffset = 0; state.deleted = null; drawDeleted(); }
    const q = new URLSearchParams({ limit: "50", offset: String(state.deletedOffset) });
    const page = await json("GET", `/v1/memory/${userPath(state.user)}/deleted?${q}`);
    if (mine !== deletedListing) return;
    const items = append && state.deleted ? [...state.deleted.items, ...page.items] : page.items;
    state.deleted = { items, total: page.total, grace: page.grace_seconds };
    state.deletedOffset += page.items.length;
    drawDeleted();
  }
  // the grace period in words: whole days, else hours
  const period = (s) => (s >= 86400 ? counted("days", Math.round(s / 86400)) : counted("hours", Math.max(1, Math.round(s / 3600))));
  function drawDeleted() {
    const body = $("#deleted-list tbody");
    const page = state.deleted;
    body.replaceChildren();
    $("#dl-total").textContent = page ? counted("restorable", page.total) : "";
    $("#dl-help").textContent = page ? t("deleted_help", { period: period(page.grace) }) : "";
    $("#dl-more").hidden = !page || state.deletedOffset >= page.total;
    if (!page) return;
    if (!page.items.length) body.append(el("tr", {}, el("td", { colspan: "5" }, t("deleted_none"))));
    for (const m of page.items) {
      const back = el("button", { class: "restore", type: "button" }, t("restore"));
      back.addEventListener("click", safely(() => restoreMemory(m)));
      body.append(el("tr", { "data-id": m.id },
        el("td", { class: "content primary", "data-label": t("content") }, el("span", { class: "text", translate: "no" }, m.content)),
        cell("deleted_when", "deleted-at", timeEl(m.deleted_at, true)),
        cell("deleted_how", "how", val("how", m.how)),
        cell("restorable_until", "until", timeEl(m.restorable_until)),
        el("td", { class: "actions-cell" }, back)));
    }
  }
  async function restoreMemory(m) {
    await json("POST", `${memoryPath(m.id)}/restore`);
    show("restored", { content: m.content });
    if (state.deleted) {
      state.deleted.items = state.deleted.items.filter((x) => x.id !== m.id);
      state.deleted.total -= 1;
      state.deletedOffset -= 1;
    }
    drawDeleted();
    const next = $("#deleted-list tbody button.restore") || $("#main");
    next.focus();  // the button pressed is gone: focus stays in the list rather than falling to the page
  }

  // importance as a person reads it: a memory never rated (a core fact is kept for what it is, not
  // for a score) says so rather than "0.00"
  const importanceText = (m) => (m.importance == null || (m.importance === 0 && m.tier === "fact") ? t("importance_unset") : Number(m.importance).toFixed(2));

  // ---- correcting a memory: read it with its version, edit it (If-Match), read its history ------------
  const memoryPath = (id) => `/v1/memory/${userPath(state.user)}/${segment(id)}`;

  async function openEditor(id, message) {
    const m = await json("GET", memoryPath(id));
    state.editing = m;
    $("#ed-content").value = m.content;
    $("#ed-importance").value = m.importance == null ? "" : String(m.importance);
    $("#ed-topic").value = m.topic || "";
    $("#ed-pinned").checked = !!m.pinned;
    $("#ed-ended").checked = !!m.valid_to && !m.superseded_by;
    state.editMsg = message || null;
    $("#ed-message").textContent = message ? t(message) : "";
    $("#ed-message").hidden = !message;
    dialog("#editor");
    $("#ed-content").focus();
  }

  async function saveEdit() {
    const m = state.editing;
    const body = {};
    const content = $("#ed-content").value.trim();
    if (content !== m.content) body.content = content;
    const importance = $("#ed-importance").value.trim();
    if (importance !== "" && Number(importance) !== m.importance) body.importance = Number(importance);
    const topic = $("#ed-topic").value.trim() || null;
    if (topic !== (m.topic || null)) body.topic = topic;
    if ($("#ed-pinned").checked !== !!m.pinned) body.pinned = $("#ed-pinned").checked;
    const ended = !!m.valid_to && !m.superseded_by;
    if ($("#ed-ended").checked !== ended) body.valid_to = $("#ed-ended").checked ? new Date().toISOString() : null;
    if (!Object.keys(body).length) { closeDialogs(); show("unchanged"); return; }
    let saved;
    try { saved = await (await api("PATCH", memoryPath(m.id), body, { "If-Match": `"${m.version}"` })).json(); }
    catch (err) {
      if (err.status === 412) { await openEditor(m.id, "changed_since"); return; }
      throw err;
    }
    closeDialogs();
    if (state.memories) state.memories.items = state.memories.items.map((x) => (x.id === saved.id ? { ...x, ...saved } : x));
    if (state.search) state.search.results = state.search.results.map((x) => (x.id === saved.id ? { ...x, ...saved } : x));
    drawMemories(); drawSearch();
    show("saved");
  }

  function describe(e) {
    const d = e.detail || {};
    if (e.event === "created") return [tx("from_message", { ids: data((d.source_message_ids || []).join(", ")), session: data(d.session_id) })];
    if (e.event === "superseded") return [tx("superseded_by", { id: data(d.by) })];
    if (e.event === "restored") return [d.from === "deleted" ? t("restored_after_delete") : t("from_tier", { tier: val("archive", d.from) })];
    if (e.event === "merged") return [data((d.source_message_ids || []).join(", "))];
    if (e.event === "edited") {
      const shown = (field, v) => (v === true ? t("yes") : v === false ? t("no") : v == null ? "—" : field === "valid_to" ? date(v)
        : field === "topic" ? topicEl(v) : field === "importance" ? String(v) : data(v));
      return Object.entries(d).map(([field, v]) => el("div", { "data-field": field },
        `${has("field_" + field) ? t("field_" + field) : field}: `, shown(field, v.before), " → ", shown(field, v.after)));
    }
    return [];
  }

  async function openHistory(id) {
    const res = await json("GET", memoryPath(id) + "/history");
    const m = [...(state.memories ? state.memories.items : []), ...(state.search ? state.search.results : [])].find((x) => x.id === id);
    state.history = { res, content: m ? m.content : id };
    drawHistory();
    dialog("#history");
    $("#hi-close").focus();
  }
  function drawHistory() {
    if (!state.history) return;
    const { res, content } = state.history;
    $("#hi-content").textContent = content;  // translate="no" in the page: a person's words
    const list = $("#hi-events");
    list.replaceChildren();
    for (const e of res.events) {
      const who = e.role === "system" ? "" : el("span", {}, " · ", tx("by", { actor: data(e.actor), role: val("role", e.role) }));
      list.append(el("li", { "data-event": e.event }, el("strong", {}, t("ev_" + e.event)), " ", timeEl(e.at), who,
        el("div", { class: "change" }, ...describe(e))));
    }
    if (!res.events.length) list.append(el("li", {}, t("history_empty")));
  }

  function confirmDelete(m) {
    $("#confirm-text").dataset.i18n = "delete_confirm"; translate();
    $("#confirm-content").textContent = m.content;
    dialog("#confirm");
    $("#confirm-no").focus();
    $("#confirm-yes").onclick = async () => {
      closeDialogs();
      try {
        await api("DELETE", memoryPath(m.id));
        show("deleted", { content: m.content });
        if (state.memories && state.memories.items.some((x) => x.id === m.id)) {
          state.memories.items = state.memories.items.filter((x) => x.id !== m.id);
          state.memories.total -= 1;
          state.offset -= 1;
        }
        if (state.search) state.search.results = state.search.results.filter((x) => x.id !== m.id);
        drawMemories(); drawSearch();
      } catch (err) { failed(err); }
    };
    $("#confirm-no").onclick = () => { closeDialogs(); };
  }

  // ---- search: relevance as words and a bar; the breakdown on demand --------------------------------
  const STRONG = 0.7, POSSIBLE = 0.4;
  // `relevance` (0..1, calibrated) when the server sends it; an older server sends only `score`
  const strength = (h) => (typeof h.relevance !== "number" ? null : h.relevance >= STRONG ? "strong" : h.relevance >= POSSIBLE ? "possible" : "weak");

  function breakdown(x) {
    if (!x) return null;
    const boosts = Object.entries(x.boosts).filter(([, v]) => v !== 0)
      .map(([k, v]) => `${has("boost_" + k) ? t("boost_" + k) : k} +${fmt(v)}`).join(", ") || t("no_boost");
    // a channel that gave nothing (a cross-language hit has no dense part: the bridge carries it) says so
    const part = (v) => (v === 0 ? t("channel_none") : fmt(v));
    return el("div", { class: "breakdown" },
      el("span", { class: "b-dense" }, `${t("dense")} ${part(x.dense)}`), " + ",
      el("span", { class: "b-keyword" }, `${t("keyword")} ${part(x.keyword)}`), " + ",
      el("span", { class: "b-bridge" }, `${t("bridge")} ${part(x.bridge)}`), " + ",
      el("span", { class: "b-boosts" }, `${t("boosts")} ${boosts}`), " × ",
      el("span", { class: "b-recency" }, `${t("recency")} ${fmt(x.recency_factor)}`));
  }

  // the breakdown, on demand: a redraw (a language switch) keeps it open where it was open
  const opened = new Set();
  function why(h, sources) {
    const d = el("details", { class: "why", open: opened.has(h.id) ? "" : null }, el("summary", {}, t("why")), breakdown(h.explain),
      el("div", { class: "sources" }, `${t("from_messages")}: `, sources.length ? data(sources.join(" | ")) : t("none")));
    d.addEventListener("toggle", () => { if (d.open) opened.add(h.id); else opened.delete(h.id); });
    return d;
  }

  async function runSearch() {
    const query = $("#q").value.trim();
    if (!query) { state.search = null; drawSearch(); show("search_empty_query", {}, true); $("#q").focus(); return; }
    const topK = Number($("#q-topk").value) || 5;
    const res = await json("POST", `/v1/memory/${userPath(state.user)}/search`, { query, top_k: topK, explain: true });
    state.search = { query, results: res.results };
    drawSearch();
  }

  function drawSearch() {
    const list = $("#results");
    list.replaceChildren();
    $("#results-summary").textContent = "";
    const s = state.search;
    if (!s) return;
    const kinds = s.results.map(strength);
    const calibrated = kinds.some((k) => k !== null);
    if (!s.results.length) list.append(el("li", { class: "empty" }, t("no_results")));
    else if (calibrated && !kinds.some((k) => k === "strong" || k === "possible")) $("#results-summary").textContent = t("nothing_relevant");
    for (const h of s.results) {
      const kind = strength(h);
      const sources = (h.source_messages || []).map((m) => `${m.session_id}/${m.id}` + (m.content ? `: ${m.content}` : " " + t("not_held")));
      const del = el("button", { class: "delete", type: "button" }, t("delete"));
      del.addEventListener("click", () => confirmDelete(h));
      const edit = el("button", { class: "edit", type: "button" }, t("edit"));
      edit.addEventListener("click", () => safely(() => openEditor(h.id))());
      const hist = el("button", { class: "history", type: "button" }, t("history"));
      hist.addEventListener("click", () => safely(() => openHistory(h.id))());
      const rel = relevanceEl(h);  // without relevance (an older server): the score alone
      list.append(el("li", { class: "hit", "data-id": h.id, "data-strength": kind || "" },
        el("div", {}, el("span", { class: "content", translate: "no" }, h.content), earlier(h)),
        rel,
        el("div", { class: "meta" }, timeEl(h.created_at, true), ` · ${val("tier", h.tier)}`, h.topic ? " · " : "", h.topic ? topicEl(h.topic) : ""),
        why(h, sources),
        el("div", { class: "actions" }, edit, hist, del)));
    }
  }

  // ---- entities: the profile, the entity list, one entity with its neighbours -----------------------
  const entityHref = (id) => `#/u/${userPath(state.user)}/entities/${segment(id)}`;
  let entityLoad = 0; // the newest load asked for: an older answer (another user or entity) is dropped
  async function loadEntities(entityId) {
    const mine = ++entityLoad;
    state.profile = null; state.entities = null; state.entity = null; state.merges = null;
    drawEntities();
    const u = userPath(state.user);
    const q = new URLSearchParams({ limit: "100" });
    const prefix = $("#en-prefix").value.trim();
    if (prefix) q.set("prefix", prefix);
    const [profile, list, merges, one] = await Promise.all([
      json("GET", `/v1/memory/${u}/profile`),
      json("GET", `/v1/memory/${u}/entities?${q}`),
      json("GET", `/v1/memory/${u}/entities/merges`),
      entityId ? json("GET", `/v1/memory/${u}/entities/${segment(entityId)}`) : Promise.resolve(null),
    ]);
    if (mine !== entityLoad) return;
    state.profile = profile; state.entities = list; state.merges = merges.items; state.entity = one;
    drawEntities();
  }
  async function mergeInto() {
    const target = $("#mg-target").value.trim();
    if (!state.entity || !target) return;
    await json("POST", `/v1/memory/${userPath(state.user)}/entities/merges`, { source: state.entity.id, target });
    $("#mg-target").value = "";
    history.pushState(null, "", entityHref(target));  // no hashchange: the notice below stays
    await loadEntities(target);
    show("merged_into", { target });
  }
  async function split(m) {
    await json("DELETE", `/v1/memory/${userPath(state.user)}/entities/merges/${segment(m.id)}`);
    await loadEntities(null);
    show("split_done", { source: m.source });
  }
  // a profile value as said, and in the UI's language when it was said in the other one: the tags carry
  // both ("#职业_教师", "#occupation_teacher"), so "教师" reads "教师 (teacher)" in English
  function profileValue(a) {
    const [zhTag, enTag] = a.tags;
    const tagged = lang === "zh" ? zhTag && zhTag.replace(`#${a.category_zh}_`, "") : enTag && enTag.replace(`#${a.category}_`, "").replace(/_/g, " ");
    const cjk = /[\u3400-\u9fff]/.test(a.value);
    const other = tagged && tagged !== a.value && (lang === "zh" ? !cjk : cjk);
    return el("span", {}, data(a.value), other ? ` (${tagged})` : "");
  }
  function drawEntities() {
    const one = state.entity;
    $("#entity-index").hidden = !!one;
    $("#entity-view").hidden = !one;
    const prof = $("#profile-list tbody");
    prof.replaceChildren();
    const p = state.profile;
    if (p) {
      const rowsOf = [...p.current.map((a) => [a, true]), ...p.past.map((a) => [a, false])];
      if (!rowsOf.length) prof.append(el("tr", {}, el("td", { colspan: "4" }, t("no_profile"))));
      for (const [a, current] of rowsOf) {
        prof.append(el("tr", { "data-key": `${a.category}:${a.key}`, "data-current": String(current) },
          cell("category", "primary", lang === "zh" ? a.category_zh : a.category), cell("value", null, profileValue(a)),
          cell("tags", null, data(a.tags.join(" "))),
          cell("status", null, current ? t("current") : t("past_until", { date: date(a.valid_to, false) }))));
      }
    }
    const list = $("#entity-list tbody");
    list.replaceChildren();
    if (state.entities) {
      if (!state.entities.items.length) list.append(el("tr", {}, el("td", { colspan: "4" }, t("no_entities"))));
      for (const e of state.entities.items) {
        list.append(el("tr", { "data-entity": e.id }, el("td", { class: "primary", "data-label": t("name") }, el("a", { href: entityHref(e.id), translate: "no" }, e.name)),
          cell("kind", null, val("kind", e.kind)), cell("aliases", null, data(e.aliases.join(", "))), cell("memories", "num", String(e.memories))));
      }
    }
    const merges = $("#merge-list tbody");
    merges.replaceChildren();
    if (state.merges) {
      if (!state.merges.length) merges.append(el("tr", {}, el("td", { colspan: "4" }, t("no_merges"))));
      for (const m of state.merges) {
        const undo = el("button", { class: "split", type: "button" }, t("split"));
        undo.addEventListener("click", safely(() => split(m)));
        merges.append(el("tr", { "data-merge": m.id }, cell("merged", "primary", data(m.source)),
          cell("into", null, el("a", { href: entityHref(m.target), translate: "no" }, m.target)), cell("at", null, timeEl(m.at, true)),
          el("td", { class: "actions-cell" }, undo)));
      }
    }
    // the merge target: typed, or picked among the user's other entities of the same kind
    $("#mg-options").replaceChildren(...(state.entities && one ? state.entities.items : [])
      .filter((e) => e.id !== one.id && e.kind === one.kind).map((e) => el("option", { value: e.id }, e.name)));
    if (!one) return;
    $("#ev-back").href = `#/u/${userPath(state.user)}/entities`;
    $("#ev-title").textContent = one.name;
    $("#ev-kind").textContent = val("kind", one.kind);
    $("#ev-aliases").replaceChildren(one.aliases.length ? data(one.aliases.join(", ")) : t("none"));
    const rels = $("#ev-relations tbody");
    rels.replaceChildren();
    if (!one.relations.length) rels.append(el("tr", {}, el("td", { colspan: "4" }, t("no_relations"))));
    for (const r of one.relations) {
      // the neighbour: the other end of the relation (the user, another entity, or none for a state)
      const [otherId, otherName] = r.subject === one.id ? [r.object, r.object_name] : [r.subject, r.subject_name];
      const other = !otherId ? "—" : otherId === "me" ? t("me") : el("a", { href: entityHref(otherId), translate: "no" }, otherName);
      rels.append(el("tr", { "data-relation": r.relation, "data-current": String(r.current) },
        cell("relation", "primary", val("rel", r.relation)), cell("neighbour", null, other), cell("said", null, timeEl(r.said_at, true)),
        cell("status", null, r.current ? t("current") : t("past_until", { date: date(r.valid_to, false) }))));
    }
    $("#ev-memories").replaceChildren(...one.memory_items.map((m) => el("li", { class: "hit", "data-id": m.id },
      el("span", { class: "content", translate: "no" }, m.content), el("div", { class: "meta" }, timeEl(m.created_at, true)))));
  }

  // ---- forget ---------------------------------------------------------------------------------------
  const FORGET_CAP = 10;  // the server's cap on one forget without the count confirmed (FORGET_CAP)
  function matchedBecause(w) {
    if (w.by === "superseded") return `${t("why")}: ${t("why_superseded", { id: w.superseded_by })}`;
    if (w.by === "criteria") return `${t("why")}: ${t("why_criteria")}`;
    const channels = Object.entries(w.channels || {}).map(([k, v]) => `${has(k) ? t(k) : k} ${fmt(v)}`).join(", ");
    const words = (w.words || []).length ? el("span", {}, " · ", tx("why_words", { words: data(w.words.join(" ")) })) : "";
    return el("span", {}, `${t("why")}: ${t("why_match", { r: fmt(w.relevance), channels })}`, words);
  }

  function forgetBody(dryRun) {
    const b = { dry_run: dryRun };
    const put = (k, v) => { if (v) b[k] = v; };
    put("query", $("#fg-query").value.trim()); put("topic", $("#fg-topic").value.trim());
    put("session_id", $("#fg-session").value.trim());
    put("before", day("#fg-before", false)); put("after", day("#fg-after", true));
    if (b.query) b.min_relevance = Number($("#fg-minrel").value);
    return b;
  }

  async function previewForget() {
    state.forgot = null; drawForgot();
    const body = forgetBody(true);
    if (Object.keys(body).length === 1) { show("forget_needs_criterion", {}, true); return; }
    const res = await json("POST", `/v1/memory/${userPath(state.user)}/forget`, body);
    state.preview = { body, res };
    drawPreview();
  }
  function drawPreview() {
    const p = state.preview;
    $("#fg-preview-box").hidden = !p;
    if (!p) return;
    const { body, res } = p;
    const list = $("#fg-preview-list");
    list.replaceChildren();
    const byId = new Map((res.memories || []).map((m) => [m.id, m]));
    const parts = [body.query && tx("why_query", { q: data(body.query), s: body.min_relevance }), body.topic && tx("why_topic", { v: topicEl(body.topic) }),
      body.session_id && tx("why_session", { v: data(body.session_id) }), body.after && t("why_after", { v: date(body.after) }),
      body.before && t("why_before", { v: date(body.before) })].filter(Boolean);
    const why = el("span", {}, ...parts.flatMap((p, i) => (i ? [t("and"), p] : [p])));
    for (const id of res.ids) {
      const m = byId.get(id);
      list.append(el("li", { "data-id": id }, el("div", { class: "content", translate: "no" }, m ? m.content : id),
        m ? el("div", { class: "meta" }, timeEl(m.created_at), " · ", data(m.session_id), ` · ${val("tier", m.tier)}`) : null,
        m && m.why ? el("div", { class: "why" }, matchedBecause(m.why)) : null));
    }
    $("#fg-count").replaceChildren(res.count ? tx("would_go", { n: res.count, why }) : t("nothing_matches"));
    if (res.count > FORGET_CAP) $("#fg-count").append(" " + t("too_many", { cap: FORGET_CAP, n: res.count }));
    $("#fg-confirm").hidden = !res.count;
    $("#fg-warning").hidden = !res.count;  // nothing to forget: nothing to warn of
  }

  async function confirmForget() {
    if (!state.preview) return;
    // the count the preview showed: the server deletes nothing if what matches changed since
    const res = await json("POST", `/v1/memory/${userPath(state.user)}/forget`,
      { ...state.preview.body, dry_run: false, expected_count: state.preview.res.count });
    state.preview = null;
    state.forgot = res.count;
    drawPreview(); drawForgot();
  }
  const drawForgot = () => { $("#fg-result").textContent = state.forgot == null ? "" : t("forgotten", { n: state.forgot }); };

  // ---- sessions -------------------------------------------------------------------------------------
  async function loadSessions() {
    state.session = null; state.sessions = null;
    drawSessions(); drawSession();
    const res = await json("GET", `/v1/sessions/${userPath(state.user)}`);
    // `sessions` (with what each holds) when the server sends it; `session_ids` alone otherwise
    state.sessions = res.sessions || res.session_ids.map((id) => ({ session_id: id, short_term: true, memories: null }));
    drawSessions();
  }
  function drawSessions() {
    const list = $("#session-list");
    list.replaceChildren();
    if (!state.sessions) return;
    if (!state.sessions.length) list.append(el("tr", {}, el("td", { colspan: "4" }, t("no_sessions"))));
    for (const s of state.sessions) {
      const a = el("a", { href: "#", "data-session": s.session_id, translate: "no" }, s.session_id);
      a.addEventListener("click", (e) => { e.preventDefault(); clear(); openSession(s.session_id).catch(failed); });
      const del = el("button", { class: "delete-session", type: "button" }, t("delete_session"));
      del.addEventListener("click", () => confirmSessionDelete(s.session_id));
      list.append(el("tr", { "data-session": s.session_id }, el("td", { class: "primary", "data-label": t("session") }, s.short_term ? a : data(s.session_id)),
        cell("short_term", null, s.short_term ? t("yes") : t("no")), cell("memories", "num", s.memories == null ? "—" : String(s.memories)),
        el("td", { class: "actions-cell" }, s.short_term ? del : null)));
    }
  }
  async function openSession(sid) {
    const s = await json("GET", `/v1/sessions/${userPath(state.user)}/${segment(sid)}`);
    state.session = { sid, s };
    drawSession();
  }
  // a slot's value: a date said in the console's locale ("6 Dec 2026"), anything else as it was said
  const slotValue = (name, v) => (name === "date" && typeof v === "string" && parseDay(v) ? showDay(parseDay(v)) : data(v));
  function drawSession() {
    $("#session-view").hidden = !state.session;
    if (!state.session) return;
    const { sid, s } = state.session;
    $("#sv-title").textContent = sid;
    $("#sv-mode").textContent = val("mode", s.mode);
    $("#sv-summary").replaceChildren(s.summary ? el("span", {}, data(s.summary.summary), " ", el("span", { class: "help" }, "(", timeEl(s.summary.last_update, true), ")")) : t("none"));
    const slots = $("#sv-slots tbody");
    slots.replaceChildren();
    for (const [name, v] of Object.entries(s.slots)) {
      slots.append(el("tr", { "data-slot": name }, cell("slot", "primary", val("slot", name)), cell("value", null, slotValue(name, v.value ?? v.raw)),
        cell("ttl", "ttl", v.ttl_seconds == null ? "" : v.ttl_seconds >= 120 ? t("minutes", { n: Math.round(v.ttl_seconds / 60) }) : t("seconds", { n: v.ttl_seconds }))));
    }
    if (!Object.keys(s.slots).length) slots.append(el("tr", {}, el("td", { colspan: "3" }, t("none"))));
    $("#sv-buffer").replaceChildren(...s.buffer.map((m) => el("li", {}, el("strong", {}, val("role", m.role)), ": ", data(m.content))));
  }
  function confirmSessionDelete(sid) {
    $("#confirm-text").dataset.i18n = "delete_session_confirm"; translate();
    $("#confirm-content").textContent = sid;
    dialog("#confirm");
    $("#confirm-no").focus();
    $("#confirm-yes").onclick = async () => {
      closeDialogs();
      try {
        await api("DELETE", `/v1/sessions/${userPath(state.user)}/${segment(sid)}`);
        await loadSessions();
        show("session_deleted", { sid });
      } catch (err) { failed(err); }
    };
    $("#confirm-no").onclick = () => { closeDialogs(); };
  }

  // ---- chat playground: streams through /v1/chat/completions with `debug: true`; each turn shows what
  // was recalled (relevance as in search) and, on demand, the prompt the model was sent ------------------
  async function sendChat() {
    const text = $("#chat-input").value.trim();
    if (!text) { show("chat_empty", {}, true); $("#chat-input").focus(); return; }
    const sid = $("#chat-session").value.trim() || "console";
    const turn = { text, sid, reply: "", chunks: 0, debug: null, done: false, failed: null, showPrompt: false };
    state.chat.push(turn);
    $("#chat-input").value = "";
    $("#chat-send").disabled = true;
    drawChat();
    const mine = $("#chat-log").lastElementChild;
    if (mine && mine.scrollIntoView) mine.scrollIntoView({ block: "start" });  // the new turn, where it will stream
    const body = { model: "mnemo", stream: true, debug: true, session_id: sid, messages: [{ role: "user", content: text }] };
    if (state.user !== claims.sub) body.user_id = state.user;  // an admin chatting as the user (audited)
    try {
      const res = await api("POST", "/v1/chat/completions", body);
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buffered.indexOf("\n\n")) >= 0) {
          const event = buffered.slice(0, cut);
          buffered = buffered.slice(cut + 2);
          for (const line of event.split("\n")) {
            if (!line.startsWith("data:")) continue;
            const data = line.slice(5).trim();
            if (data === "[DONE]") continue;
            let chunk;
            try { chunk = JSON.parse(data); } catch (_) { continue; }
            if (chunk.error) turn.failed = { status: 500, code: chunk.error.code || chunk.error.type || "" };
            const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
            if (delta && delta.content) { turn.reply += delta.content; turn.chunks += 1; }
            if (chunk.debug) turn.debug = chunk.debug;
          }
          drawChat();
        }
      }
    } catch (err) {
      if (err && err.status === 401) { failed(err); return; }
      turn.failed = err;
    } finally {
      turn.done = true;
      $("#chat-send").disabled = false;
      drawChat();
    }
  }

  // relevance as words, a bar and a percentage (search hits and recalled memories alike)
  function relevanceEl(h) {
    const kind = strength(h);
    const level = kind ? h.relevance : Math.max(0, Math.min(1, h.score));
    return el("div", { class: "rel rel-" + (kind || "score") },
      el("meter", { min: "0", max: "1", low: String(POSSIBLE), high: String(STRONG), optimum: "1", value: String(level), "aria-label": t("relevance") }),
      el("span", { class: "rel-word" }, kind ? t("rel_" + kind) : ""),
      el("span", { class: "score" }, kind ? `${Math.round(h.relevance * 100)}%` : `${t("score")} ${fmt(h.score)}`));
  }

  function drawChat() {
    const log = $("#chat-log");
    log.replaceChildren();
    $("#chat-help").replaceChildren(state.user !== claims.sub ? tx("chat_as_help", { user: data(state.user) }) : t("chat_help"));
    $("#chat-empty").hidden = state.chat.length > 0;
    state.chat.forEach((turn, i) => {
      log.append(el("li", { class: "user" }, el("span", { class: "who" }, data(state.user), ` · ${t("session")} `, data(turn.sid)), el("div", { class: "said", translate: "no" }, turn.text)));
      const d = turn.debug;
      const recalled = !d || !d.recalled ? null : el("div", { class: "recalled" },
        el("h2", {}, d.recalled.length ? t("recalled_n", { n: d.recalled.length }) : t("recalled_none")),
        d.recall_degraded ? el("p", { class: "warn" }, t("recall_degraded")) : null,
        d.recalled.length ? el("ul", { class: "cards" }, ...d.recalled.map((m) => el("li", { "data-id": m.id, class: "recalled-memory" },
          el("div", { class: "content", translate: "no" }, m.content), relevanceEl(m),
          el("div", { class: "meta" }, timeEl(m.created_at, true), ` · ${t("session")} `, data(m.session_id), ` · ${val("tier", m.tier)}`,
            m.in_prompt ? "" : ` · ${t("not_in_prompt")}`)))) : null,
        el("p", { class: "help" }, t("chat_debug", { mode: val("mode", d.mode), tokens: d.total_tokens, summary: d.redis_summary_used ? t("yes") : t("no") })));
      let prompt = null;
      if (d && d.prompt) {
        prompt = el("details", { class: "prompt", open: turn.showPrompt ? "" : null }, el("summary", {}, t("show_prompt", { n: d.prompt.length })),
          el("ol", { class: "prompt-messages" }, ...d.prompt.map((m) => el("li", { "data-role": m.role }, el("strong", {}, val("role", m.role)), el("pre", { translate: "no" }, m.content)))));
        prompt.addEventListener("toggle", () => { turn.showPrompt = prompt.open; });
      }
      log.append(el("li", { class: "assistant", "data-turn": String(i), "data-chunks": String(turn.chunks), "aria-busy": turn.done ? "false" : "true" },
        el("span", { class: "who" }, t("assistant_label")),
        el("div", { class: "reply", translate: turn.reply ? "no" : null }, turn.reply || (turn.done ? "" : t("thinking"))),
        turn.failed ? el("p", { class: "warn" }, errorText(turn.failed)) : null, recalled, prompt));
    });
  }

  // ---- export ----------------------------------------------------------------------------------------
  async function runExport() {
    const res = await api("GET", `/v1/memory/${userPath(state.user)}/export`);
    const blob = await res.blob();
    const doc = JSON.parse(await blob.text());
    const file = `mnemo-export-${state.user}.json`;
    const a = el("a", { href: URL.createObjectURL(blob), download: file });
    document.body.append(a);
    a.click();
    a.remove();
    state.exported = { n: (doc.memories || []).length, s: (doc.sessions || []).length, file };
    drawExported();
  }
  const drawExported = () => {
    const x = state.exported;
    $("#export-result").replaceChildren(x ? tx("exported", { n: counted("memories", x.n), s: counted("sessions", x.s), file: data(x.file) }) : "");
  };

  // ---- admin: audit trail, erase ----------------------------------------------------------------------
  async function loadAudit(append) {
    if (!append) { state.auditBefore = null; state.audit = []; }
    const q = new URLSearchParams({ limit: "50" });
    const add = (k, v) => { if (v) q.set(k, v); };
    add("user_id", $("#au-user").value.trim()); add("action", $("#au-action").value);
    add("since", day("#au-since", false)); add("until", day("#au-until", true));
    add("before", state.auditBefore);
    const res = await json("GET", `/v1/audit?${q}`);
    state.audit = [...state.audit, ...res.items];
    state.auditBefore = res.next_before;
    drawAudit();
  }
  // an audit entry's details, each name and value in the UI's language; ids stay as they are; an empty
  // value ("filters" of an unfiltered listing) is left out
  const DETAIL_IDS = new Set(["memory_id", "merge_id", "session_id", "users"]);
  const DETAIL_LISTS = { filters: "field", criteria: "field", fields: "field" };
  function detailValue(k, v) {
    if (v === "true") return t("yes");
    if (v === "false") return t("no");
    if (DETAIL_IDS.has(k)) return data(v.split(",").join(", "));
    if (DETAIL_LISTS[k]) return v.split(",").map((x) => (has(`${DETAIL_LISTS[k]}_${x}`) ? t(`${DETAIL_LISTS[k]}_${x}`) : x)).join(", ");
    if (k === "sort" || k === "what") return val(k, v);
    if (k === "at_rest_purged_by") return v === "operator" ? t("dk_operator") : date(v);
    return v;
  }
  function details(r) {
    return Object.entries(r.details).filter(([, v]) => v !== "").map(([k, v]) =>
      el("div", { "data-detail": k }, `${has("dk_" + k) ? t("dk_" + k) : k}: `, detailValue(k, v)));
  }
  function drawAudit() {
    const body = $("#audit-list tbody");
    body.replaceChildren();
    for (const r of state.audit) {
      body.append(el("tr", { "data-action": r.action }, cell("at", null, timeEl(r.at, true)), cell("action", "primary", val("act", r.action)),
        cell("user_id", null, data(r.user_id)), cell("actor", null, data(r.actor), ` (${val("role", r.actor_role)})`), cell("count", "num", r.count),
        cell("details", null, ...details(r))));
    }
    if (!state.audit.length) body.append(el("tr", {}, el("td", { colspan: "6" }, t("audit_empty"))));
    $("#au-more").hidden = !state.auditBefore;
  }

  // ---- admin: find a user by id prefix ------------------------------------------------------------------
  async function findUsers() {
    const prefix = $("#open-user").value.trim();
    state.found = null; drawFound();  // a failed find never leaves the previous answer under the new question
    if (!prefix) { show("find_empty", {}, true); $("#open-user").focus(); return; }
    if (!validId(prefix)) { show("id_invalid", { v: prefix }, true); $("#open-user").focus(); return; }
    state.found = await json("GET", `/v1/admin/users?${new URLSearchParams({ prefix, limit: "50" })}`);
    drawFound();
  }
  function drawFound() {
    const f = state.found;
    const body = $("#found-list tbody");
    body.replaceChildren();
    $("#found-list").hidden = !f || !f.users.length;
    $("#found-summary").replaceChildren(!f ? "" : !f.users.length ? tx("found_none", { prefix: data(f.prefix) })
      : tx(f.more ? "found_more" : "found_n", { n: f.users.length, prefix: data(f.prefix) }));
    if (!f) return;
    for (const u of f.users) {
      const erase = el("a", { href: "#/erase", class: "button-link", "data-user": u }, t("erase_this"));
      erase.addEventListener("click", () => { state.eraseUser = u; });
      body.append(el("tr", { "data-user": u }, el("td", { class: "primary", "data-label": t("user_id") },
        el("a", { href: `#/u/${userPath(u)}/memories`, class: "open-user", translate: "no" }, u)),
        el("td", { class: "actions-cell" }, el("a", { href: `#/u/${userPath(u)}/chat`, class: "button-link" }, t("chat")), " ", erase)));
    }
  }

  // ---- admin: erase, previewed (counts per store), confirmed by typing the id, then the receipt ------------
  async function previewErase() {
    const user = $("#er-user").value.trim();
    state.receipt = null; drawReceipt();
    if (!user) { state.erasePreview = null; drawErasePreview(); show("erase_empty", {}, true); $("#er-user").focus(); return; }
    if (!validId(user)) { state.erasePreview = null; drawErasePreview(); show("id_invalid", { v: user }, true); $("#er-user").focus(); return; }
    const p = await json("GET", `/v1/admin/users/${userPath(user)}/erase-preview`);
    state.erasePreview = { user, p };
    $("#er-confirm").value = "";
    drawErasePreview();
    $("#er-confirm").focus();
  }
  const EP_ROWS = [
    ["hot", (p) => p.memories.hot, "ep_hot"], ["warm", (p) => p.memories.warm, "ep_warm"], ["cold", (p) => p.memories.cold, "ep_cold"],
    ["sessions", (p) => p.sessions, "ep_sessions"], ["buffer", (p) => p.buffer_messages, "ep_buffer"],
    ["histories", (p) => p.histories, "ep_histories"], ["outbox", (p) => p.outbox, "ep_outbox"],
    ["dead_letters", (p) => p.dead_letters, "ep_dead_letters"], ["redis_keys", (p) => p.redis_keys, "ep_redis_keys"],
  ];
  function drawErasePreview() {
    const e = state.erasePreview;
    $("#er-preview-box").hidden = !e;
    armErase();
    if (!e) return;
    const { user, p } = e;
    $("#ep-title").replaceChildren(tx(p.held ? "ep_title" : "erased_nothing_title", { user: data(user) }));
    const kinds = Object.entries(p.kinds).map(([k, n]) => `${val("tier", k)} ${n}`).join(" · ");
    $("#ep-summary").textContent = p.held ? t("ep_summary", { mem: counted("long_term", p.memories_total), kinds: kinds || "—" }) : t("ep_nothing");
    $("#er-preview-box").classList.toggle("nothing", !p.held);
    const body = $("#ep-stores tbody");
    body.replaceChildren();
    for (const [key, count, label] of EP_ROWS) {
      body.append(el("tr", { "data-store": key }, cell("what_goes", "primary", t(label)), cell("count", "num", String(count(p)))));
    }
    $("#er-confirm-label").replaceChildren(tx("type_user_id_n", { user: data(user) }));
  }
  function armErase() {
    const e = state.erasePreview;
    $("#er-go").disabled = !e || $("#er-confirm").value.trim() !== e.user || $("#er-user").value.trim() !== e.user;
  }

  async function runErase() {
    const e = state.erasePreview;
    const user = $("#er-user").value.trim();
    if (!e || e.user !== user || $("#er-confirm").value.trim() !== user) return;
    const receipt = await json("DELETE", `/v1/memory/${userPath(user)}?confirm=${encodeURIComponent(user)}`);
    state.receipt = { user, receipt, preview: e.p };  // the preview's counts the receipt does not repeat
    state.erasePreview = null;
    drawErasePreview();
    drawReceipt();
    $("#er-confirm").value = "";
  }
  function drawReceipt() {
    const r = state.receipt;
    $("#er-receipt").hidden = !r;
    if (!r) return;
    const { user, receipt, preview } = r;
    const nothing = Object.values(receipt.deleted).every((n) => !n);
    $("#er-receipt").classList.toggle("nothing", nothing);
    $("#er-title").replaceChildren(tx(nothing ? "erased_nothing_title" : "erased_title", { user: data(user) }));
    const said = [nothing ? t("erased_nothing") : t("erased_summary", { at: date(receipt.at) }),
      receipt.at_rest_purged_by ? t("purged_by", { at: date(receipt.at_rest_purged_by) }) : t("purged_operator")];
    // the receipt counts the sessions it removed; the recent messages they held, the preview counted
    if (!nothing && preview && preview.buffer_messages) {
      said.push(t("rc_preview_said", { messages: counted("messages", preview.buffer_messages) }));
    }
    $("#er-summary").textContent = said.join(" ");
    // what was deleted, per kind, in the preview's words (never a store's internal name)
    const body = $("#er-stores tbody");
    body.replaceChildren();
    for (const [key, n] of Object.entries(receipt.deleted)) {
      body.append(el("tr", { "data-store": key }, cell("what_went", "primary", has("rc_" + key) ? t("rc_" + key) : key),
        cell("deleted_count", "num deleted", String(n))));
    }
    // where each store's files stand
    const rest = $("#er-rest tbody");
    rest.replaceChildren();
    for (const [store, a] of Object.entries(receipt.at_rest || {})) {
      const text = a.state === "scheduled" ? t("rest_scheduled", { at: date(a.purged_by) })
        : a.state === "operator" ? tx("rest_operator", { command: el("code", { translate: "no" }, (a.command || "").replace("<Chroma persist directory>", t("chroma_dir"))) })
          : t("rest_none");
      rest.append(el("tr", { "data-store": store }, cell("store", "primary", has("rest_store_" + store) ? t("rest_store_" + store) : store),
        cell("at_rest", null, text)));
    }
  }

  // ---- sign-in: each way a token can be wrong says so ---------------------------------------------------
  function signinMessage() {
    const box = $("#signin-error");
    box.textContent = state.signinMsg ? t(state.signinMsg.key, state.signinMsg.vars) : "";
    box.hidden = !state.signinMsg;
  }
  function signOut(reason, vars) {
    token = "";
    sessionStorage.removeItem("mnemo.token");
    state.signinMsg = reason ? { key: reason, vars } : null;
    state.msg = null;
    if (location.hash && !location.hash.startsWith("#/u/") && !location.hash.startsWith("#/audit") && !location.hash.startsWith("#/erase")) history.replaceState(null, "", location.pathname);
    route();
  }
  // what is wrong with a token before asking the server (null: nothing seen)
  function localProblem(tok) {
    if (!tok) return ["signin_empty"];
    const c = decode(tok);
    if (!c) return ["signin_malformed"];
    if (typeof c.sub !== "string" || !c.sub) return ["signin_no_subject"];
    if (c.role != null && c.role !== "admin" && c.role !== "user") return ["signin_role", { role: String(c.role) }];
    if (typeof c.exp === "number" && c.exp * 1000 < Date.now() - 30000) return ["signin_expired"];
    return null;
  }
  // a token as pasted: from a terminal (wrapped over lines), a JSON or shell line (quoted), a header
  // ("Authorization: Bearer …"); what is left is the token, or something no token looks like
  function cleanToken(raw) {
    let v = (raw || "").trim().replace(/^authorization\s*:\s*/i, "").replace(/^bearer\s+/i, "");
    v = v.replace(/^["'`“”‘’]+|["'`“”‘’,;]+$/g, "").replace(/^bearer\s+/i, "");
    return v.replace(/\s+/g, "");
  }
  async function signIn(raw) {
    const tok = cleanToken(raw);
    if (/["'`“”‘’]/.test(tok)) { signOut("signin_garbled"); return; }
    const problem = localProblem(tok);
    if (problem) { signOut(problem[0], problem[1]); return; }
    // the server has the last word (the signature, the audience, the clock): one call that records nothing
    const c = decode(tok);
    try {
      const res = await fetch(`/v1/sessions/${userPath(c.sub)}`, { headers: { Authorization: "Bearer " + tok } });
      if (res.status === 401) {
        let e = {};
        try { e = await res.json(); } catch (_) { /* not the envelope */ }
        signOut(e.error === "token_expired" ? "signin_expired" : "signin_forged");
        return;
      }
    } catch (_) {
      // fetch refuses a header value it cannot send before reaching any server: that is the token's fault
      signOut(/^[A-Za-z0-9._~+/=-]+$/.test(tok) ? "signin_unreachable" : "signin_garbled");
      return;
    }
    token = tok;
    sessionStorage.setItem("mnemo.token", token);
    state.signinMsg = null;
    $("#token-input").value = "";
    route();
  }

  // ---- routing -------------------------------------------------------------------------------------
  function signedIn() {
    claims = token ? decode(token) || {} : {};
    const admin = claims.role === "admin";
    document.body.classList.toggle("admin", !!token && admin);
    $("#whoami").replaceChildren(...(token && claims.sub ? [data(claims.sub), admin ? ` (${t("role_admin_short")})` : ""] : []));
    $("#nav").hidden = !token;
    $("#sign-out").hidden = !token;
  }

  // the user tabs lead to the user on screen; an admin on their own pages (find, audit, erase) has no
  // user open, so the tabs are not shown (they would lead to the admin's own, empty, memories)
  function links() {
    const who = state.user || (claims.role === "admin" ? "" : claims.sub);
    for (const tab of TABS) {
      $("#nav-" + tab).hidden = !who;
      if (who) $("#nav-" + tab).href = `#/u/${userPath(who)}/${tab}`;
      else $("#nav-" + tab).removeAttribute("href");
    }
  }

  async function route() {
    const hash = location.hash;
    if (hash.startsWith("#token=")) {  // the link `make run` prints: take the token, drop it from the address bar
      history.replaceState(null, "", location.pathname);
      return signIn(decodeURIComponent(hash.slice(7)));
    }
    clear();
    if (token && localProblem(token)) { signOut(localProblem(token)[0] === "signin_expired" ? "signin_session_expired" : "signin_malformed"); return; }
    signedIn();
    if (!token) { state.user = ""; view("signin"); signinMessage(); $("#token-input").focus(); return; }
    let parts;
    try { parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent); } catch (_) { parts = ["?"]; }
    try {
      if (parts[0] === "u" && parts[1]) {
        if (parts[1] !== state.user) { state.search = null; state.preview = null; state.forgot = null; state.chat = []; state.exported = null; }
        state.user = parts[1];
        links();
        const tab = parts[2] || "memories";
        const deeper = tab === "entities" && parts.length === 4 && parts[3];  // one entity's page
        if (!TABS.includes(tab) || (parts.length > 3 && !deeper)) { view("notfound"); return; }
        view(tab);
        if (tab === "memories") await loadMemories(false);
        else if (tab === "entities") await loadEntities(deeper || null);
        else if (tab === "sessions") await loadSessions();
        else if (tab === "search") drawSearch();
        else if (tab === "forget") { state.preview = null; state.forgot = null; redraw.forget(); }
        else if (tab === "deleted") await loadDeleted(false);
        else if (tab === "chat") drawChat();
        else if (tab === "export") drawExported();
      } else if ((parts[0] === "audit" || parts[0] === "erase") && parts.length === 1) {
        state.user = ""; links();
        if (claims.role !== "admin") { view("notfound"); show("admin_only", {}, true); return; }
        view(parts[0]);
        if (parts[0] === "audit") await loadAudit(false);
        else {
          if (state.eraseUser) { $("#er-user").value = state.eraseUser; state.eraseUser = null; state.erasePreview = null; state.receipt = null; }
          drawErasePreview(); drawReceipt();
        }
      } else if (parts[0] === "" && parts.length === 1) {
        if (claims.role === "admin") { state.user = ""; links(); view("home"); drawFound(); }
        else location.replace(`#/u/${userPath(claims.sub)}/memories`);
      } else { links(); view("notfound"); }
    } catch (err) { failed(err); }
  }

  const safely = (fn) => (e) => { if (e) e.preventDefault(); clear(); Promise.resolve().then(fn).catch(failed); };
  $("#lang").addEventListener("change", () => {
    lang = $("#lang").value;
    localStorage.setItem("mnemo.lang", lang);
    translate(); signedIn(); drawMessage(); signinMessage();
    if (redraw[state.view]) redraw[state.view]();
    if (!$("#history").hidden) drawHistory();
    if (!$("#editor").hidden && state.editMsg) $("#ed-message").textContent = t(state.editMsg);
  });
  $("#sign-in").addEventListener("click", () => signIn($("#token-input").value));
  $("#sign-out").addEventListener("click", () => { history.replaceState(null, "", location.pathname); signOut(null); });
  $("#find-form").addEventListener("submit", safely(findUsers));
  $("#open-user-go").addEventListener("click", () => { const u = $("#open-user").value.trim(); if (u) location.hash = `#/u/${userPath(u)}/memories`; else show("find_empty", {}, true); });
  $("#notfound-home").addEventListener("click", (e) => { e.preventDefault(); location.hash = "#/"; });
  $("#notfound-home").setAttribute("href", "#/");
  $("#filters").addEventListener("submit", safely(() => loadMemories(false)));
  $("#more").addEventListener("click", safely(() => loadMemories(true)));
  $("#f-text").addEventListener("input", () => drawMemories());
  $("#search-form").addEventListener("submit", safely(runSearch));
  $("#entity-form").addEventListener("submit", safely(() => loadEntities(null)));
  $("#merge-form").addEventListener("submit", safely(mergeInto));
  $("#forget-form").addEventListener("submit", safely(previewForget));
  $("#fg-confirm").addEventListener("click", safely(confirmForget));
  $("#chat-form").addEventListener("submit", safely(sendChat));
  $("#export-go").addEventListener("click", safely(runExport));
  $("#audit-form").addEventListener("submit", safely(() => loadAudit(false)));
  $("#au-more").addEventListener("click", safely(() => loadAudit(true)));
  $("#erase-form").addEventListener("submit", safely(previewErase));
  $("#erase-confirm-form").addEventListener("submit", safely(runErase));
  $("#ed-save").addEventListener("click", safely(saveEdit));
  $("#ed-cancel").addEventListener("click", () => { closeDialogs(); });
  $("#hi-close").addEventListener("click", () => { closeDialogs(); });
  document.addEventListener("keydown", trapFocus);
  $("#dl-more").addEventListener("click", safely(() => loadDeleted(true)));
  $("#backdrop").addEventListener("click", closeDialogs);
  // another id typed: the preview shown was of someone else, so it goes (and the erase button with it)
  $("#er-user").addEventListener("input", () => { if (state.erasePreview && state.erasePreview.user !== $("#er-user").value.trim()) { state.erasePreview = null; drawErasePreview(); } });
  $("#er-confirm").addEventListener("input", armErase);
  window.addEventListener("hashchange", route);
  translate();
  route();
})();
