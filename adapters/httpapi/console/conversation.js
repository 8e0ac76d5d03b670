// conversation.js: one conversation, its stored transcript, then its live
// events. A run still going (or waiting for approval) is replayed from its
// first event (?run=), so its text and cards show as they happened; the
// other runs come from the stored messages. An API conversation also gets
// a box to send messages.

import {h, platformBadge} from "./dom.js";
import {get, convPath, ApiError} from "./api.js";
import {Follow, send} from "./sse.js";
import {RunView} from "./run.js";

export function render(main, params) {
  const key = params.key;
  const title = h("span", {class: "conv-title", "data-role": "title"});
  const liveState = h("span", {class: "live-state", "data-role": "live-state", role: "status"});
  const history = h("section", {class: "timeline", id: "timeline", "aria-label": "Transcript"});
  const note = h("p", {class: "muted"}, "Loading…");
  main.replaceChildren(
    h("p", {class: "crumbs"}, h("a", {href: "#/conversations"}, "← Conversations"), " ",
      h("a", {href: "#/t/" + encodeURIComponent(key), id: "timeline-link"}, "Timeline"), " ", liveState),
    h("h1", {class: "conv-head"}, platformBadge(key), " ", h("span", {class: "key"}, key), " ", title),
    note, history);

  const cards = new Map();
  const runs = new Map();
  const seen = new Set();
  let follow = null;
  let stopped = false;

  const runView = (id) => {
    let r = runs.get(id);
    if (!r) {
      r = new RunView(id || "unknown", cards);
      runs.set(id, r);
      history.append(r.el);
    }
    return r;
  };

  const onEvent = (ev) => {
    const k = ev.run_id + ":" + ev.seq;
    if (ev.seq && seen.has(k)) return; // the same event from two streams
    seen.add(k);
    if (ev.type === "conversation.title.generated") { title.textContent = ev.text || ""; return; }
    runView(ev.run_id).event(ev);
  };

  const states = {connecting: "connecting…", live: "● live", reconnecting: "reconnecting…"};
  const onState = (s, err) => {
    liveState.dataset.state = s;
    liveState.textContent = s === "failed" ? "live updates unavailable: " + err.message : states[s] || s;
  };

  const startFollow = (query) => {
    if (follow) follow.stop();
    if (!stopped) follow = new Follow(key, query, onEvent, onState);
  };

  (async () => {
    let v = null;
    try {
      v = await get(convPath(key));
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404 && key.startsWith("api:"))) {
        note.textContent = "Could not load the conversation: " + e.message;
        note.className = "error";
        return;
      }
    }
    if (stopped) return;
    const exists = !!v;
    if (!v) {
      note.textContent = "A new conversation: send the first message below.";
      v = {messages: [], runs: []};
    } else {
      note.textContent = "";
      title.textContent = v.title || "";
    }
    const last = v.runs[v.runs.length - 1];
    const active = last && (last.status === "running" || last.status === "awaiting_approval") ? last.id : "";
    const results = new Map();
    for (const m of v.messages) if (m.role === "tool") results.set(m.tool_call_id, m.content);
    // A person's message names no author; its run's requester is who.
    const requester = new Map(v.runs.map((r) => [r.id, r.requester && (r.requester.name || r.requester.id)]));
    for (const m of v.messages) {
      if (m.role === "user" && !m.name) m.name = requester.get(m.run_id) || "";
      // The active run's events are replayed below; they do not carry
      // the person's message, so that one comes from the store.
      if (active && m.run_id === active && m.role !== "user") continue;
      runView(m.run_id || "").message(m, results);
    }
    for (const r of v.runs) {
      if (r.id !== active && runs.has(r.id)) runs.get(r.id).setStatus(r.status);
    }
    if (active) runView(active).setStatus(last.status);
    // The pending approvals of this conversation, in case its events
    // cannot be replayed; a replayed event moves its card into place.
    try {
      const p = await get("/api/v1/approvals?status=pending");
      for (const a of p.approvals) if (a.conv_key === key) runView(a.run_id).placeCard(a);
    } catch { /* the transcript still shows */ }
    if (stopped) return;
    // A conversation that does not exist yet has nothing to follow (404):
    // following starts once the first message created it.
    if (exists) startFollow(active ? "?run=" + encodeURIComponent(active) : "");
    if (key.startsWith("api:")) main.append(composer(key, history, onEvent, () => {
      if (!follow || liveState.dataset.state === "failed") startFollow("");
    }));
    history.lastElementChild && history.lastElementChild.scrollIntoView({block: "end"});
  })();

  return () => { stopped = true; if (follow) follow.stop(); };
}

// composer is the box that sends a message to an API conversation and
// streams the run it starts.
function composer(key, history, onEvent, after) {
  const text = h("textarea", {id: "compose", rows: "3", "aria-label": "Message", placeholder: "Ask opsgate… (Ctrl+Enter sends)"});
  const error = h("p", {class: "error", role: "alert", "data-role": "send-error"});
  const button = h("button", {type: "submit", id: "send"}, "Send");
  const form = h("form", {class: "composer", onsubmit: async (e) => {
    e.preventDefault();
    const t = text.value.trim();
    if (!t) return;
    error.textContent = "";
    button.disabled = true;
    text.value = "";
    history.append(h("div", {class: "text user"}, h("span", {class: "author"}, "you: "), t));
    try {
      await send(key, t, onEvent);
    } catch (err) {
      error.textContent = "Not sent: " + err.message;
      if (!text.value) text.value = t;
    } finally {
      button.disabled = false;
      after();
    }
  }}, text, h("div", {class: "actions"}, button), error);
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });
  return form;
}
