/* mnemo memory console: every call goes to mnemo's public API with the signed-in token. */
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const T = window.MNEMO_I18N;
  let lang = localStorage.getItem("mnemo.lang") || ((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
  let token = sessionStorage.getItem("mnemo.token") || "";
  let claims = {};
  let state = { user: "", offset: 0, auditBefore: null, preview: null };

  const t = (key, vars) => (T[lang][key] || T.en[key] || key).replace(/\{(\w+)\}/g, (_, k) => String((vars || {})[k] ?? ""));
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (k === "class") e.className = v; else e.setAttribute(k, v);
    for (const kid of kids) e.append(kid instanceof Node ? kid : document.createTextNode(String(kid ?? "")));
    return e;
  };
  const fmt = (x) => Number(x).toFixed(3);
  // a memory a newer one superseded (facts that change): kept, shown with when it stopped being current
  const earlier = (m) => m.superseded_by
    ? el("span", { class: "superseded" }, " ", t("earlier_until", { d: (m.valid_to || "").slice(0, 10) }))
    : "";

  function translate() {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
    document.querySelectorAll("[data-i18n-placeholder]").forEach((e) => { e.placeholder = t(e.dataset.i18nPlaceholder); });
    $("#lang").value = lang;
  }

  function decode(jwt) {
    try {
      const part = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      const bytes = Uint8Array.from(atob(part), (c) => c.charCodeAt(0));
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) { return null; }
  }

  function show(message, isError) {
    const box = $(isError ? "#error" : "#notice");
    $(isError ? "#notice" : "#error").hidden = true;
    box.textContent = message;
    box.hidden = !message;
  }
  const clear = () => { $("#error").hidden = true; $("#notice").hidden = true; };

  async function api(method, path, body) {
    const headers = { Authorization: "Bearer " + token };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) {
      let e = {};
      try { e = await res.json(); } catch (_) { /* not the envelope */ }
      throw { status: res.status, code: e.error || "", detail: e.detail || res.statusText };
    }
    return res;
  }
  const json = async (method, path, body) => (await api(method, path, body)).json();

  function failed(err) {
    if (err && err.status === 403) show(t("forbidden", err), true);
    else if (err && err.code === "token_expired") { show(t("expired"), true); }
    else if (err && err.status) show(t("error", err), true);
    else show(String(err), true);
  }

  // one path segment: percent-encoded, dots too, so no URL normaliser can make it a dot segment
  const segment = (v) => encodeURIComponent(v).replace(/\./g, "%2E");
  const userPath = segment;
  const day = (v, end) => (!v ? undefined : /^\d{4}-\d{2}-\d{2}$/.test(v) ? v + (end ? "T23:59:59Z" : "T00:00:00Z") : v);

  // ---- views ---------------------------------------------------------------------------------------
  function view(name) {
    document.querySelectorAll("main > section").forEach((s) => { s.hidden = s.id !== "view-" + name; });
    document.querySelectorAll(".subject").forEach((s) => { s.textContent = state.user; });
  }

  let listing = 0; // the newest listing asked for: an older answer (another user, other filters) is dropped
  async function loadMemories(append) {
    const mine = ++listing;
    if (!append) {
      state.offset = 0;
      // a failed listing (403, 503) must not leave the previous page's rows under this user's name
      $("#memory-list tbody").replaceChildren();
      $("#memory-total").textContent = "";
      $("#more").hidden = true;
    }
    const q = new URLSearchParams({ limit: "50", offset: String(state.offset) });
    const add = (k, v) => { if (v) q.set(k, v); };
    add("topic", $("#f-topic").value.trim()); add("session_id", $("#f-session").value.trim());
    add("source", $("#f-source").value); add("tier", $("#f-tier").value);
    add("since", day($("#f-since").value.trim(), false)); add("until", day($("#f-until").value.trim(), true));
    const page = await json("GET", `/v1/memory/${userPath(state.user)}/list?${q}`);
    if (mine !== listing) return;
    const body = $("#memory-list tbody"); // emptied above when this listing started (not an append)
    for (const m of page.items) {
      const del = el("button", { class: "delete" }, t("delete"));
      del.addEventListener("click", () => confirmDelete(m));
      body.append(el("tr", { "data-id": m.id }, el("td", { class: "content" }, m.content, earlier(m)), el("td", {}, m.created_at),
        el("td", {}, m.session_id), el("td", {}, m.source), el("td", {}, m.tier || ""), el("td", {}, m.topic || ""), el("td", {}, del)));
    }
    state.offset += page.items.length;
    $("#memory-total").textContent = t("total", { n: page.total });
    $("#more").hidden = state.offset >= page.total;
  }

  function confirmDelete(m) {
    $("#confirm-text").textContent = t("delete_confirm", { content: m.content });
    $("#confirm").hidden = false;
    $("#confirm-yes").onclick = async () => {
      $("#confirm").hidden = true;
      try {
        await api("DELETE", `/v1/memory/${userPath(state.user)}/${segment(m.id)}`);
        show(t("deleted", { id: m.id }), false);
        const row = document.querySelector(`#memory-list tr[data-id="${CSS.escape(m.id)}"]`);
        if (row) row.remove();
        document.querySelectorAll(`#results li[data-id="${CSS.escape(m.id)}"]`).forEach((r) => r.remove());
      } catch (err) { failed(err); }
    };
    $("#confirm-no").onclick = () => { $("#confirm").hidden = true; };
  }

  function breakdown(x) {
    if (!x) return el("div", { class: "breakdown" }, "");
    const boosts = Object.entries(x.boosts).filter(([, v]) => v !== 0).map(([k, v]) => `${k} +${fmt(v)}`).join(", ") || "0";
    return el("div", { class: "breakdown" },
      el("span", { class: "b-dense" }, `${t("dense")} ${fmt(x.dense)}`), " + ",
      el("span", { class: "b-keyword" }, `${t("keyword")} ${fmt(x.keyword)}`), " + ",
      el("span", { class: "b-bridge" }, `${t("bridge")} ${fmt(x.bridge)}`), " + ",
      el("span", { class: "b-boosts" }, `${t("boosts")} ${boosts}`), " × ",
      el("span", { class: "b-recency" }, `${t("recency")} ${fmt(x.recency_factor)}`));
  }

  async function runSearch() {
    const query = $("#q").value.trim();
    if (!query) return;
    const topK = Number($("#q-topk").value) || 5;
    const res = await json("POST", `/v1/memory/${userPath(state.user)}/search`, { query, top_k: topK, explain: true });
    const list = $("#results");
    list.replaceChildren();
    if (!res.results.length) list.append(el("li", { class: "empty" }, t("no_results")));
    for (const h of res.results) {
      const sources = (h.source_messages || []).map((s) => `${s.session_id}/${s.id}` + (s.content ? `: ${s.content}` : " " + t("not_held")));
      const del = el("button", { class: "delete" }, t("delete"));
      del.addEventListener("click", () => confirmDelete(h));
      list.append(el("li", { class: "hit", "data-id": h.id },
        el("div", {}, el("span", { class: "content" }, h.content), earlier(h), " ", del),
        el("div", {}, el("span", { class: "relevance" }, `${t("relevance")} ${fmt(h.relevance)}`), " · ",
          el("span", { class: "score" }, `${t("score")} ${fmt(h.score)}`), ` · ${h.created_at} · ${h.tier || ""} ${h.topic || ""}`),
        breakdown(h.explain),
        el("div", { class: "sources" }, `${t("from_messages")}: ${sources.join(" | ") || t("none")}`)));
    }
  }

  const FORGET_CAP = 10;

  function why(w) {
    if (!w) return "";
    if (w.by === "superseded") return `${t("why")}: ${t("why_superseded", { id: w.superseded_by })}`;
    if (w.by === "criteria") return `${t("why")}: ${t("why_criteria")}`;
    const channels = Object.entries(w.channels).map(([k, v]) => `${t(k)} ${fmt(v)}`).join(", ");
    const words = w.words.length ? " · " + t("why_words", { words: w.words.join(" ") }) : "";
    return `${t("why")}: ${t("why_query", { r: fmt(w.relevance), channels })}${words}`;
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
    $("#fg-result").textContent = "";
    const body = forgetBody(true);
    const res = await json("POST", `/v1/memory/${userPath(state.user)}/forget`, body);
    state.preview = { body, ids: res.ids, count: res.count };
    const list = $("#fg-preview-list");
    list.replaceChildren();
    const byId = new Map((res.memories || []).map((m) => [m.id, m]));
    for (const id of res.ids) {
      const m = byId.get(id);
      list.append(el("li", { "data-id": id }, m ? `${m.content} (${id})` : id, m ? el("div", { class: "why" }, why(m.why)) : ""));
    }
    $("#fg-count").textContent = res.count ? t("would_go", { n: res.count }) : t("nothing_matches");
    $("#fg-cap").textContent = res.count > FORGET_CAP ? t("too_many", { cap: FORGET_CAP, n: res.count }) : "";
    $("#fg-confirm").hidden = !res.count;
    $("#fg-preview-box").hidden = false;
  }

  async function confirmForget() {
    if (!state.preview) return;
    // the count the preview showed: nothing is deleted if the memories matching changed since
    const res = await json("POST", `/v1/memory/${userPath(state.user)}/forget`,
      { ...state.preview.body, dry_run: false, expected_count: state.preview.count });
    $("#fg-preview-box").hidden = true;
    state.preview = null;
    $("#fg-result").textContent = t("forgotten", { n: res.count });
  }

  async function loadSessions() {
    $("#session-view").hidden = true;
    const res = await json("GET", `/v1/sessions/${userPath(state.user)}`);
    const list = $("#session-list");
    list.replaceChildren();
    if (!res.session_ids.length) list.append(el("li", {}, t("no_sessions")));
    for (const sid of res.session_ids) {
      const a = el("a", { href: "#", "data-session": sid }, sid);
      a.addEventListener("click", (e) => { e.preventDefault(); openSession(sid).catch(failed); });
      list.append(el("li", {}, a));
    }
  }

  async function openSession(sid) {
    const s = await json("GET", `/v1/sessions/${userPath(state.user)}/${segment(sid)}`);
    $("#sv-title").textContent = sid;
    $("#sv-mode").textContent = s.mode;
    $("#sv-summary").textContent = s.summary ? `${s.summary.summary} (${s.summary.last_update})` : t("none");
    const slots = $("#sv-slots tbody");
    slots.replaceChildren();
    for (const [name, v] of Object.entries(s.slots)) {
      slots.append(el("tr", { "data-slot": name }, el("td", {}, name), el("td", {}, v.value ?? v.raw),
        el("td", { class: "ttl" }, v.ttl_seconds == null ? "" : t("seconds", { n: v.ttl_seconds }))));
    }
    const buf = $("#sv-buffer");
    buf.replaceChildren(...s.buffer.map((m) => el("li", {}, `${m.role}: ${m.content}`)));
    $("#session-view").hidden = false;
  }

  async function runExport() {
    const res = await api("GET", `/v1/memory/${userPath(state.user)}/export`);
    const blob = await res.blob();
    const doc = JSON.parse(await blob.text());
    const file = `mnemo-export-${state.user}.json`;
    const a = el("a", { href: URL.createObjectURL(blob), download: file });
    document.body.append(a);
    a.click();
    a.remove();
    $("#export-result").textContent = t("exported", { n: (doc.memories || []).length, s: (doc.sessions || []).length, file });
  }

  async function loadAudit(append) {
    if (!append) state.auditBefore = null;
    const q = new URLSearchParams({ limit: "50" });
    const add = (k, v) => { if (v) q.set(k, v); };
    add("user_id", $("#au-user").value.trim()); add("action", $("#au-action").value);
    add("since", day($("#au-since").value.trim(), false)); add("until", day($("#au-until").value.trim(), true));
    add("before", state.auditBefore);
    const res = await json("GET", `/v1/audit?${q}`);
    const body = $("#audit-list tbody");
    if (!append) body.replaceChildren();
    for (const r of res.items) {
      const details = Object.entries(r.details).map(([k, v]) => `${k}=${v}`).join(" ");
      body.append(el("tr", { "data-action": r.action }, el("td", {}, r.at), el("td", {}, r.action), el("td", {}, r.user_id),
        el("td", {}, `${r.actor} (${r.actor_role})`), el("td", {}, r.count), el("td", {}, details)));
    }
    state.auditBefore = res.next_before;
    $("#au-more").hidden = !res.next_before;
  }

  async function runErase() {
    const user = $("#er-user").value.trim();
    if (!user || $("#er-confirm").value.trim() !== user) return;
    const receipt = await json("DELETE", `/v1/memory/${userPath(user)}?confirm=${encodeURIComponent(user)}`);
    const box = $("#er-receipt");
    box.textContent = t("erased", { user }) + "\n" + JSON.stringify(receipt, null, 2);
    box.hidden = false;
    $("#er-confirm").value = "";
    $("#er-go").disabled = true;
  }

  // ---- routing -------------------------------------------------------------------------------------
  function signedIn() {
    claims = decode(token) || {};
    document.body.classList.toggle("admin", claims.role === "admin");
    $("#whoami").textContent = claims.sub ? `${claims.sub}${claims.role === "admin" ? " (admin)" : ""}` : "";
    $("#nav").hidden = !token;
    $("#sign-out").hidden = !token;
  }

  function links() {
    for (const tab of ["memories", "search", "forget", "sessions", "export"]) {
      $("#nav-" + tab).href = `#/u/${userPath(state.user || claims.sub || "")}/${tab}`;
    }
  }

  async function route() {
    const hash = location.hash;
    if (hash.startsWith("#token=")) {  // the link `make run` prints: take the token, drop it from the address bar
      token = decodeURIComponent(hash.slice(7));
      sessionStorage.setItem("mnemo.token", token);
      history.replaceState(null, "", location.pathname);
      return route();
    }
    clear();
    signedIn();
    if (!token) { view("signin"); return; }
    const parts = hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    try {
      if (parts[0] === "u" && parts[1]) {
        state.user = parts[1];
        links();
        const tab = parts[2] || "memories";
        view(tab);
        if (tab === "memories") await loadMemories(false);
        else if (tab === "sessions") await loadSessions();
        else if (tab === "search") $("#results").replaceChildren();
        else if (tab === "forget") { $("#fg-preview-box").hidden = true; $("#fg-result").textContent = ""; }
      } else if (parts[0] === "audit") { view("audit"); await loadAudit(false); }
      else if (parts[0] === "erase") { view("erase"); }
      else if (claims.role === "admin") { state.user = ""; links(); view("home"); }
      else { location.hash = `#/u/${userPath(claims.sub || "")}/memories`; }
    } catch (err) { failed(err); }
  }

  const safely = (fn) => (e) => { if (e) e.preventDefault(); clear(); Promise.resolve().then(fn).catch(failed); };
  $("#lang").addEventListener("change", () => { lang = $("#lang").value; localStorage.setItem("mnemo.lang", lang); translate(); });
  $("#sign-in").addEventListener("click", () => {
    token = $("#token-input").value.trim();
    if (!token) return;
    sessionStorage.setItem("mnemo.token", token);
    $("#token-input").value = "";
    if (location.hash) location.hash = ""; else route();
  });
  $("#sign-out").addEventListener("click", () => { token = ""; sessionStorage.removeItem("mnemo.token"); location.hash = ""; route(); });
  $("#open-user-go").addEventListener("click", () => { const u = $("#open-user").value.trim(); if (u) location.hash = `#/u/${userPath(u)}/memories`; });
  $("#filters").addEventListener("submit", safely(() => loadMemories(false)));
  $("#more").addEventListener("click", safely(() => loadMemories(true)));
  $("#search-form").addEventListener("submit", safely(runSearch));
  $("#forget-form").addEventListener("submit", safely(previewForget));
  $("#fg-confirm").addEventListener("click", safely(confirmForget));
  $("#export-go").addEventListener("click", safely(runExport));
  $("#audit-form").addEventListener("submit", safely(() => loadAudit(false)));
  $("#au-more").addEventListener("click", safely(() => loadAudit(true)));
  $("#erase-form").addEventListener("submit", safely(runErase));
  const armErase = () => { const u = $("#er-user").value.trim(); $("#er-go").disabled = !u || $("#er-confirm").value.trim() !== u; };
  $("#er-user").addEventListener("input", armErase);
  $("#er-confirm").addEventListener("input", armErase);
  window.addEventListener("hashchange", route);
  translate();
  route();
})();
