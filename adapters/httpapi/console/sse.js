// sse.js: reading the API's event streams. EventSource cannot send an
// Authorization header, so the stream is read with fetch and parsed here
// (the text/event-stream format: "id:", "event:", "data:" lines, a blank
// line ends a frame, ":" lines are comments such as heartbeats).

import {token, ApiError} from "./api.js";

// parseFrames feeds text into state and calls onFrame for each complete
// frame. state carries a partial line and frame between chunks.
export function parseFrames(state, text, onFrame) {
  state.buf = (state.buf || "") + text;
  let nl;
  while ((nl = state.buf.search(/\r\n|\r|\n/)) >= 0) {
    const line = state.buf.slice(0, nl);
    const sep = state.buf.startsWith("\r\n", nl) ? 2 : 1;
    state.buf = state.buf.slice(nl + sep);
    const f = state.frame || (state.frame = {data: []});
    if (line === "") {
      if (f.data.length) onFrame({id: f.id, event: f.event || "message", data: f.data.join("\n")});
      state.frame = null;
      continue;
    }
    if (line.startsWith(":")) continue; // heartbeat
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") f.data.push(value);
    else if (field === "event") f.event = value;
    else if (field === "id") f.id = value;
  }
}

// readStream reads one response's frames, calling onEvent with each
// decoded event and its id; it resolves when the server ends the stream.
async function readStream(resp, onEvent, lastId) {
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  const state = {};
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    parseFrames(state, value, (f) => {
      if (f.id) lastId.value = f.id;
      let ev;
      try { ev = JSON.parse(f.data); } catch { return; }
      if (!ev.type) ev.type = f.event;
      // A page's bug must not pass for a dropped stream (and reconnect
      // forever, silently): it is reported as what it is.
      try { onEvent(ev); } catch (e) { reportError(e); }
    });
  }
}

async function open(method, path, body, lastId, signal) {
  const init = {method, signal, cache: "no-store", headers: {"Authorization": "Bearer " + token(), "Accept": "text/event-stream"}};
  if (lastId) init.headers["Last-Event-ID"] = lastId;
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const resp = await fetch(path, init);
  if (!resp.ok) {
    let code = "http_" + resp.status, message = resp.status + " " + resp.statusText;
    try { const b = await resp.json(); if (b.error) { code = b.error.code; message = b.error.message; } } catch { /* not JSON */ }
    throw new ApiError(resp.status, code, message);
  }
  return resp;
}

// Follow follows a conversation's events (GET …/events), from query
// ("?run=ID", "?after=SEQ" or "" for live only). After a drop it
// reconnects with Last-Event-ID, so what was missed is replayed.
// onState gets "connecting", "live", "reconnecting", or "failed" with the
// error (an error answer other than a transient one is final).
export class Follow {
  constructor(key, query, onEvent, onState) {
    this.base = "/api/v1/conversations/" + encodeURIComponent(key) + "/events";
    this.query = query || "";
    this.onEvent = onEvent;
    this.onState = onState;
    this.lastId = {value: ""};
    this.ctrl = new AbortController();
    this.run();
  }

  stop() { this.ctrl.abort(); }

  async run() {
    let delay = 500;
    this.onState("connecting");
    while (!this.ctrl.signal.aborted) {
      try {
        // The first request asks for what the view wants; a reconnect
        // asks for everything after the last event seen.
        const path = this.lastId.value ? this.base : this.base + this.query;
        const resp = await open("GET", path, undefined, this.lastId.value, this.ctrl.signal);
        this.onState("live");
        delay = 500;
        await readStream(resp, this.onEvent, this.lastId);
      } catch (e) {
        if (this.ctrl.signal.aborted) return;
        if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 408 && e.status !== 429) {
          this.onState("failed", e);
          return;
        }
      }
      if (this.ctrl.signal.aborted) return;
      this.onState("reconnecting");
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10000);
    }
  }
}

// send posts a message (POST …/messages) and calls onEvent with the
// events of the run it starts or steers until the stream ends (after
// completed). It rejects with ApiError on an error answer.
export async function send(key, text, onEvent, signal) {
  const path = "/api/v1/conversations/" + encodeURIComponent(key) + "/messages";
  const resp = await open("POST", path, {text}, "", signal);
  await readStream(resp, onEvent, {value: ""});
}
