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
    profile: null, entities: null, entity: null, merges: null,
  };

  const t = (key, vars) => (T[lang][key] ?? T.en[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => String((vars || {})[k] ?? ""));
  const has = (key) => key in T[lang];
  // a value the API sends as a word (a role, a tier, an action, a mode): shown in the UI's language
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
    box.textContent = m.err ? errorText(m.err) : t(m.key, m.vars);
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
    // the token stopped working (expired, or the server's secret changed): back to sign-in, saying why
    if (err && err.status === 401) { signOut(err.code === "token_expired" ? "signin_session_expired" : "signin_session_invalid"); return; }
    state.msg = { err, error: true };
    drawMessage();
  }

  // one path segment: percent-encoded, dots too, so no URL normaliser can make it a dot segment
  const segment = (v) => encodeURIComponent(v).replace(/\./g, "%2E");
  const userPath = segment;
  const day = (v, end) => (!v ? undefined : /^\d{4}-\d{2}-\d{2}$/.test(v) ? v + (end ? "T23:59:59Z" : "T00:00:00Z") : v);
  const cell = (label, cls, ...kids) => el("td", { "data-label": t(label), class: cls || null }, ...kids);

  // ---- views ---------------------------------------------------------------------------------------
  const TABS = ["memories", "search", "forget", "sessions", "entities", "chat", "export"];
  function view(name) {
    state.view = name;
    document.querySelectorAll("main > section").forEach((s) => { s.hidden = s.id !== "view-" + name; });
    document.querySelectorAll(".subject").forEach((s) => { s.textContent = state.user; });
    document.querySelectorAll("#nav a").forEach((a) => { if (a.id === "nav-" + name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current"); });
    for (const id of ["#editor", "#history", "#confirm"]) $(id).hidden = true;
  }
  const redraw = {
    memories: () => drawMemories(), search: () => drawSearch(), forget: () => { drawPreview(); drawForgot(); },
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
    add("since", day($("#f-since").value.trim(), false)); add("until", day($("#f-until").value.trim(), true));
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
    if (!page) return;
    if (!page.items.length) body.append(el("tr", {}, el("td", { colspan: "8" }, t("no_memories"))));
    for (const m of page.items) {
      const del = el("button", { class: "delete", type: "button" }, t("delete"));
      del.addEventListener("click", () => confirmDelete(m));
      const edit = el("button", { class: "edit", type: "button" }, t("edit"));
      edit.addEventListener("click", () => safely(() => openEditor(m.id))());
      const hist = el("button", { class: "history", type: "button" }, t("history"));
      hist.addEventListener("click", () => safely(() => openHistory(m.id))());
      const from = (m.source_message_ids || []).length ? el("span", { class: "sub sources" }, t("from_message_ids", { ids: m.source_message_ids.join(", ") })) : null;
      body.append(el("tr", { "data-id": m.id },
        el("td", { class: "content primary", "data-label": t("content") }, el("span", { class: "text" }, m.content), earlier(m), m.pinned ? el("span", { class: "tag" }, t("pinned_tag")) : null, from),
        cell("created", "created", timeEl(m.created_at, true)),
        cell("session", null, m.session_id), cell("source", null, val("role", m.source)), cell("tier", "tier", val("tier", m.tier)),
        cell("importance_short", "num importance", m.importance == null ? "—" : Number(m.importance).toFixed(2)),
        cell("topic", "topic", m.topic || "—"),
        el("td", { class: "actions-cell" }, edit, hist, del)));
    }
  }

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
    $("#history").hidden = true;
    $("#editor").hidden = false;
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
    if (!Object.keys(body).length) { $("#editor").hidden = true; show("unchanged"); return; }
    let saved;
    try { saved = await (await api("PATCH", memoryPath(m.id), body, { "If-Match": `"${m.version}"` })).json(); }
    catch (err) {
      if (err.status === 412) { await openEditor(m.id, "changed_since"); return; }
      throw err;
    }
    $("#editor").hidden = true;
    if (state.memories) state.memories.items = state.memories.items.map((x) => (x.id === saved.id ? { ...x, ...saved } : x));
    drawMemories();
    show("saved");
  }

  function describe(e) {
    const d = e.detail || {};
    if (e.event === "created") return t("from_message", { ids: (d.source_message_ids || []).join(", ") || "—", session: d.session_id || "" });
    if (e.event === "superseded") return t("superseded_by", { id: d.by || "" });
    if (e.event === "restored") return t("from_tier", { tier: val("archive", d.from) });
    if (e.event === "merged") return (d.source_message_ids || []).join(", ");
    if (e.event === "edited") {
      const shown = (field, v) => (v === true ? t("yes") : v === false ? t("no") : v == null ? "—" : field === "valid_to" ? date(v) : v);
      return Object.entries(d).map(([field, v]) => `${t(field)}: ${shown(field, v.before)} → ${shown(field, v.after)}`).join("\n");
    }
    return "";
  }

  async function openHistory(id) {
    const res = await json("GET", memoryPath(id) + "/history");
    const m = state.memories && state.memories.items.find((x) => x.id === id);
    state.history = { res, content: m ? m.content : id };
    drawHistory();
    $("#editor").hidden = true;
    $("#history").hidden = false;
  }
  function drawHistory() {
    if (!state.history) return;
    const { res, content } = state.history;
    $("#hi-content").textContent = content;
    const list = $("#hi-events");
    list.replaceChildren();
    for (const e of res.events) {
      const who = e.role === "system" ? "" : " · " + t("by", { actor: e.actor, role: val("role", e.role) });
      list.append(el("li", { "data-event": e.event }, el("strong", {}, t("ev_" + e.event)), " ", timeEl(e.at), who,
        el("div", { class: "change" }, describe(e))));
    }
    if (!res.events.length) list.append(el("li", {}, t("history_empty")));
  }

  function confirmDelete(m) {
    $("#confirm-text").textContent = t("delete_confirm");
    $("#confirm-content").textContent = m.content;
    $("#confirm").hidden = false;
    $("#confirm-no").focus();
    $("#confirm-yes").onclick = async () => {
      $("#confirm").hidden = true;
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
    $("#confirm-no").onclick = () => { $("#confirm").hidden = true; };
  }

  // ---- search: relevance as words and a bar; the breakdown on demand --------------------------------
  const STRONG = 0.7, POSSIBLE = 0.4;
  // `relevance` (0..1, calibrated) when the server sends it; an older server sends only `score`
  const strength = (h) => (typeof h.relevance !== "number" ? null : h.relevance >= STRONG ? "strong" : h.relevance >= POSSIBLE ? "possible" : "weak");

  function breakdown(x) {
    if (!x) return null;
    const boosts = Object.entries(x.boosts).filter(([, v]) => v !== 0).map(([k, v]) => `${k} +${fmt(v)}`).join(", ") || "0";
    return el("div", { class: "breakdown" },
      el("span", { class: "b-dense" }, `${t("dense")} ${fmt(x.dense)}`), " + ",
      el("span", { class: "b-keyword" }, `${t("keyword")} ${fmt(x.keyword)}`), " + ",
      el("span", { class: "b-bridge" }, `${t("bridge")} ${fmt(x.bridge)}`), " + ",
      el("span", { class: "b-boosts" }, `${t("boosts")} ${boosts}`), " × ",
      el("span", { class: "b-recency" }, `${t("recency")} ${fmt(x.recency_factor)}`));
  }

  // the breakdown, on demand: a redraw (a language switch) keeps it open where it was open
  const opened = new Set();
  function why(h, sources) {
    const d = el("details", { class: "why", open: opened.has(h.id) ? "" : null }, el("summary", {}, t("why")), breakdown(h.explain),
      el("div", { class: "sources" }, `${t("from_messages")}: ${sources.join(" | ") || t("none")}`));
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
      const rel = relevanceEl(h);  // without relevance (an older server): the score alone
      list.append(el("li", { class: "hit", "data-id": h.id, "data-strength": kind || "" },
        el("div", {}, el("span", { class: "content" }, h.content), earlier(h)),
        rel,
        el("div", { class: "meta" }, timeEl(h.created_at, true), ` · ${val("tier", h.tier)}`, h.topic ? ` · ${h.topic}` : ""),
        why(h, sources),
        el("div", { class: "actions" }, del)));
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
          cell("category", "primary", lang === "zh" ? a.category_zh : a.category), cell("value", null, a.value),
          cell("tags", null, a.tags.join(" ")),
          cell("status", null, current ? t("current") : t("past_until", { date: date(a.valid_to, false) }))));
      }
    }
    const list = $("#entity-list tbody");
    list.replaceChildren();
    if (state.entities) {
      if (!state.entities.items.length) list.append(el("tr", {}, el("td", { colspan: "4" }, t("no_entities"))));
      for (const e of state.entities.items) {
        list.append(el("tr", { "data-entity": e.id }, el("td", { class: "primary", "data-label": t("name") }, el("a", { href: entityHref(e.id) }, e.name)),
          cell("kind", null, val("kind", e.kind)), cell("aliases", null, e.aliases.join(", ")), cell("memories", "num", String(e.memories))));
      }
    }
    const merges = $("#merge-list tbody");
    merges.replaceChildren();
    if (state.merges) {
      if (!state.merges.length) merges.append(el("tr", {}, el("td", { colspan: "4" }, t("no_merges"))));
      for (const m of state.merges) {
        const undo = el("button", { class: "split", type: "button" }, t("split"));
        undo.addEventListener("click", safely(() => split(m)));
        merges.append(el("tr", { "data-merge": m.id }, cell("merged", "primary", m.source),
          cell("into", null, el("a", { href: entityHref(m.target) }, m.target)), cell("at", null, timeEl(m.at, true)),
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
    $("#ev-aliases").textContent = one.aliases.length ? one.aliases.join(", ") : t("none");
    const rels = $("#ev-relations tbody");
    rels.replaceChildren();
    if (!one.relations.length) rels.append(el("tr", {}, el("td", { colspan: "4" }, t("no_relations"))));
    for (const r of one.relations) {
      // the neighbour: the other end of the relation (the user, another entity, or none for a state)
      const [otherId, otherName] = r.subject === one.id ? [r.object, r.object_name] : [r.subject, r.subject_name];
      const other = !otherId ? "—" : otherId === "me" ? t("me") : el("a", { href: entityHref(otherId) }, otherName);
      rels.append(el("tr", { "data-relation": r.relation, "data-current": String(r.current) },
        cell("relation", "primary", val("rel", r.relation)), cell("neighbour", null, other), cell("said", null, timeEl(r.said_at, true)),
        cell("status", null, r.current ? t("current") : t("past_until", { date: date(r.valid_to, false) }))));
    }
    $("#ev-memories").replaceChildren(...one.memory_items.map((m) => el("li", { class: "hit", "data-id": m.id },
      el("span", { class: "content" }, m.content), el("div", { class: "meta" }, timeEl(m.created_at, true)))));
  }

  // ---- forget ---------------------------------------------------------------------------------------
  const FORGET_CAP = 10;  // the server's cap on one forget without the count confirmed (FORGET_CAP)
  function matchedBecause(w) {
    if (w.by === "superseded") return `${t("why")}: ${t("why_superseded", { id: w.superseded_by })}`;
    if (w.by === "criteria") return `${t("why")}: ${t("why_criteria")}`;
    const channels = Object.entries(w.channels || {}).map(([k, v]) => `${t(k)} ${fmt(v)}`).join(", ");
    const words = (w.words || []).length ? " · " + t("why_words", { words: w.words.join(" ") }) : "";
    return `${t("why")}: ${t("why_match", { r: fmt(w.relevance), channels })}${words}`;
  }

  function forgetBody(dryRun) {
    const b = { dry_run: dryRun };
    const put = (k, v) => { if (v) b[k] = v; };
    put("query", $("#fg-query").value.trim()); put("topic", $("#fg-topic").value.trim());
    put("session_id", $("#fg-session").value.trim());
    put("before", day($("#fg-before").value.trim(), false)); put("after", day($("#fg-after").value.trim(), true));
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
    const why = [body.query && t("why_query", { q: body.query, s: body.min_relevance }), body.topic && t("why_topic", { v: body.topic }),
      body.session_id && t("why_session", { v: body.session_id }), body.after && t("why_after", { v: date(body.after) }),
      body.before && t("why_before", { v: date(body.before) })].filter(Boolean).join(t("and"));
    for (const id of res.ids) {
      const m = byId.get(id);
      list.append(el("li", { "data-id": id }, el("div", { class: "content" }, m ? m.content : id),
        m ? el("div", { class: "meta" }, timeEl(m.created_at), ` · ${m.session_id} · ${val("tier", m.tier)}`) : null,
        m && m.why ? el("div", { class: "why" }, matchedBecause(m.why)) : null));
    }
    $("#fg-count").textContent = res.count ? t("would_go", { n: res.count, why }) : t("nothing_matches");
    if (res.count > FORGET_CAP) $("#fg-count").textContent += " " + t("too_many", { cap: FORGET_CAP, n: res.count });
    $("#fg-confirm").hidden = !res.count;
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
      const a = el("a", { href: "#", "data-session": s.session_id }, s.session_id);
      a.addEventListener("click", (e) => { e.preventDefault(); clear(); openSession(s.session_id).catch(failed); });
      const del = el("button", { class: "delete-session", type: "button" }, t("delete_session"));
      del.addEventListener("click", () => confirmSessionDelete(s.session_id));
      list.append(el("tr", { "data-session": s.session_id }, el("td", { class: "primary", "data-label": t("session") }, s.short_term ? a : s.session_id),
        cell("short_term", null, s.short_term ? t("yes") : t("no")), cell("memories", "num", s.memories == null ? "—" : String(s.memories)),
        el("td", { class: "actions-cell" }, s.short_term ? del : null)));
    }
  }
  async function openSession(sid) {
    const s = await json("GET", `/v1/sessions/${userPath(state.user)}/${segment(sid)}`);
    state.session = { sid, s };
    drawSession();
  }
  function drawSession() {
    $("#session-view").hidden = !state.session;
    if (!state.session) return;
    const { sid, s } = state.session;
    $("#sv-title").textContent = sid;
    $("#sv-mode").textContent = val("mode", s.mode);
    $("#sv-summary").replaceChildren(s.summary ? el("span", {}, s.summary.summary, " ", el("span", { class: "help" }, "(", timeEl(s.summary.last_update, true), ")")) : t("none"));
    const slots = $("#sv-slots tbody");
    slots.replaceChildren();
    for (const [name, v] of Object.entries(s.slots)) {
      slots.append(el("tr", { "data-slot": name }, cell("slot", "primary", val("slot", name)), cell("value", null, v.value ?? v.raw),
        cell("ttl", "ttl", v.ttl_seconds == null ? "" : t("seconds", { n: v.ttl_seconds }))));
    }
    if (!Object.keys(s.slots).length) slots.append(el("tr", {}, el("td", { colspan: "3" }, t("none"))));
    $("#sv-buffer").replaceChildren(...s.buffer.map((m) => el("li", {}, el("strong", {}, val("role", m.role)), ": ", m.content)));
  }
  function confirmSessionDelete(sid) {
    $("#confirm-text").textContent = t("delete_session_confirm");
    $("#confirm-content").textContent = sid;
    $("#confirm").hidden = false;
    $("#confirm-no").focus();
    $("#confirm-yes").onclick = async () => {
      $("#confirm").hidden = true;
      try {
        await api("DELETE", `/v1/sessions/${userPath(state.user)}/${segment(sid)}`);
        await loadSessions();
        show("session_deleted", { sid });
      } catch (err) { failed(err); }
    };
    $("#confirm-no").onclick = () => { $("#confirm").hidden = true; };
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
    $("#chat-help").textContent = state.user !== claims.sub ? t("chat_as_help", { user: state.user }) : t("chat_help");
    $("#chat-empty").hidden = state.chat.length > 0;
    state.chat.forEach((turn, i) => {
      log.append(el("li", { class: "user" }, el("span", { class: "who" }, `${state.user} · ${t("session")} ${turn.sid}`), el("div", { class: "said" }, turn.text)));
      const d = turn.debug;
      const recalled = !d || !d.recalled ? null : el("div", { class: "recalled" },
        el("h2", {}, d.recalled.length ? t("recalled_n", { n: d.recalled.length }) : t("recalled_none")),
        d.recall_degraded ? el("p", { class: "warn" }, t("recall_degraded")) : null,
        d.recalled.length ? el("ul", { class: "cards" }, ...d.recalled.map((m) => el("li", { "data-id": m.id, class: "recalled-memory" },
          el("div", { class: "content" }, m.content), relevanceEl(m),
          el("div", { class: "meta" }, timeEl(m.created_at, true), ` · ${t("session")} ${m.session_id} · ${val("tier", m.tier)}`,
            m.in_prompt ? "" : ` · ${t("not_in_prompt")}`)))) : null,
        el("p", { class: "help" }, t("chat_debug", { mode: val("mode", d.mode), tokens: d.total_tokens, summary: d.redis_summary_used ? t("yes") : t("no") })));
      let prompt = null;
      if (d && d.prompt) {
        prompt = el("details", { class: "prompt", open: turn.showPrompt ? "" : null }, el("summary", {}, t("show_prompt", { n: d.prompt.length })),
          el("ol", { class: "prompt-messages" }, ...d.prompt.map((m) => el("li", { "data-role": m.role }, el("strong", {}, val("role", m.role)), el("pre", {}, m.content)))));
        prompt.addEventListener("toggle", () => { turn.showPrompt = prompt.open; });
      }
      log.append(el("li", { class: "assistant", "data-turn": String(i), "data-chunks": String(turn.chunks), "aria-busy": turn.done ? "false" : "true" },
        el("span", { class: "who" }, t("assistant_label")),
        el("div", { class: "reply" }, turn.reply || (turn.done ? "" : t("thinking"))),
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
  const drawExported = () => { $("#export-result").textContent = state.exported ? t("exported", state.exported) : ""; };

  // ---- admin: audit trail, erase ----------------------------------------------------------------------
  async function loadAudit(append) {
    if (!append) { state.auditBefore = null; state.audit = []; }
    const q = new URLSearchParams({ limit: "50" });
    const add = (k, v) => { if (v) q.set(k, v); };
    add("user_id", $("#au-user").value.trim()); add("action", $("#au-action").value);
    add("since", day($("#au-since").value.trim(), false)); add("until", day($("#au-until").value.trim(), true));
    add("before", state.auditBefore);
    const res = await json("GET", `/v1/audit?${q}`);
    state.audit = [...state.audit, ...res.items];
    state.auditBefore = res.next_before;
    drawAudit();
  }
  function detailText(r) {
    return Object.entries(r.details).map(([k, v]) => `${has("dk_" + k) ? t("dk_" + k) : k}: ${k === "at_rest_purged_by" && v !== "operator" ? date(v) : v === "true" ? t("yes") : v === "false" ? t("no") : v}`).join("\n");
  }
  function drawAudit() {
    const body = $("#audit-list tbody");
    body.replaceChildren();
    for (const r of state.audit) {
      body.append(el("tr", { "data-action": r.action }, cell("at", null, timeEl(r.at, true)), cell("action", "primary", val("act", r.action)),
        cell("user_id", null, r.user_id), cell("actor", null, `${r.actor} (${val("role", r.actor_role)})`), cell("count", "num", r.count),
        cell("details", "prewrap", detailText(r))));
    }
    if (!state.audit.length) body.append(el("tr", {}, el("td", { colspan: "6" }, t("audit_empty"))));
    $("#au-more").hidden = !state.auditBefore;
  }

  // ---- admin: find a user by id prefix ------------------------------------------------------------------
  async function findUsers() {
    const prefix = $("#open-user").value.trim();
    if (!prefix) { state.found = null; drawFound(); show("find_empty", {}, true); $("#open-user").focus(); return; }
    state.found = await json("GET", `/v1/admin/users?${new URLSearchParams({ prefix, limit: "50" })}`);
    drawFound();
  }
  function drawFound() {
    const f = state.found;
    const body = $("#found-list tbody");
    body.replaceChildren();
    $("#found-list").hidden = !f || !f.users.length;
    $("#found-summary").textContent = !f ? "" : !f.users.length ? t("found_none", { prefix: f.prefix })
      : t(f.more ? "found_more" : "found_n", { n: f.users.length, prefix: f.prefix });
    if (!f) return;
    for (const u of f.users) {
      const erase = el("a", { href: "#/erase", class: "button-link", "data-user": u }, t("erase_this"));
      erase.addEventListener("click", () => { state.eraseUser = u; });
      body.append(el("tr", { "data-user": u }, el("td", { class: "primary", "data-label": t("user_id") },
        el("a", { href: `#/u/${userPath(u)}/memories`, class: "open-user" }, u)),
        el("td", { class: "actions-cell" }, el("a", { href: `#/u/${userPath(u)}/chat`, class: "button-link" }, t("chat")), " ", erase)));
    }
  }

  // ---- admin: erase, previewed (counts per store), confirmed by typing the id, then the receipt ------------
  async function previewErase() {
    const user = $("#er-user").value.trim();
    state.receipt = null; drawReceipt();
    if (!user) { state.erasePreview = null; drawErasePreview(); show("erase_empty", {}, true); $("#er-user").focus(); return; }
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
    $("#ep-title").textContent = p.held ? t("ep_title", { user }) : t("erased_nothing_title", { user });
    const kinds = Object.entries(p.kinds).map(([k, n]) => `${val("tier", k)} ${n}`).join(" · ");
    $("#ep-summary").textContent = p.held ? t("ep_summary", { n: p.memories_total, kinds: kinds || "—" }) : t("ep_nothing");
    $("#er-preview-box").classList.toggle("nothing", !p.held);
    const body = $("#ep-stores tbody");
    body.replaceChildren();
    for (const [key, count, label] of EP_ROWS) {
      body.append(el("tr", { "data-store": key }, cell("what_goes", "primary", t(label)), cell("count", "num", String(count(p)))));
    }
    $("#er-confirm-label").textContent = t("type_user_id_n", { user });
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
    state.receipt = { user, receipt };
    state.erasePreview = null;
    drawErasePreview();
    drawReceipt();
    $("#er-confirm").value = "";
  }
  function drawReceipt() {
    const r = state.receipt;
    $("#er-receipt").hidden = !r;
    if (!r) return;
    const { user, receipt } = r;
    const nothing = Object.values(receipt.deleted).every((n) => !n);
    $("#er-receipt").classList.toggle("nothing", nothing);
    $("#er-title").textContent = nothing ? t("erased_nothing_title", { user }) : t("erased_title", { user });
    $("#er-summary").textContent = (nothing ? t("erased_nothing", { user }) : t("erased_summary", { at: date(receipt.at) })) + " " +
      (receipt.at_rest_purged_by ? t("purged_by", { at: date(receipt.at_rest_purged_by) }) : t("purged_operator"));
    const body = $("#er-stores tbody");
    body.replaceChildren();
    const stores = new Set([...Object.keys(receipt.deleted), ...Object.keys(receipt.at_rest || {})]);
    for (const store of stores) {
      const rest = (receipt.at_rest || {})[store];
      const restText = !rest ? "—" : rest.state === "scheduled" ? t("rest_scheduled", { at: date(rest.purged_by) })
        : rest.state === "operator" ? t("rest_operator", { command: rest.command || "" }) : t("rest_none");
      body.append(el("tr", { "data-store": store }, cell("store", "primary", val("store", store)),
        cell("deleted_count", "num deleted", String(receipt.deleted[store] ?? 0)), cell("at_rest", null, restText)));
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
  async function signIn(raw) {
    const tok = (raw || "").trim().replace(/^bearer\s+/i, "").trim();
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
    } catch (_) { signOut("signin_unreachable"); return; }
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
    $("#whoami").textContent = token && claims.sub ? `${claims.sub}${admin ? ` (${t("role_admin_short")})` : ""}` : "";
    $("#nav").hidden = !token;
    $("#sign-out").hidden = !token;
  }

  function links() {
    const who = state.user || claims.sub;
    for (const tab of TABS) {
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
  $("#ed-cancel").addEventListener("click", () => { $("#editor").hidden = true; });
  $("#hi-close").addEventListener("click", () => { $("#history").hidden = true; });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") for (const id of ["#editor", "#history", "#confirm"]) $(id).hidden = true; });
  // another id typed: the preview shown was of someone else, so it goes (and the erase button with it)
  $("#er-user").addEventListener("input", () => { if (state.erasePreview && state.erasePreview.user !== $("#er-user").value.trim()) { state.erasePreview = null; drawErasePreview(); } });
  $("#er-confirm").addEventListener("input", armErase);
  window.addEventListener("hashchange", route);
  translate();
  route();
})();
