// run.js: a run as the chat shows it. Stored messages become text blocks
// and tool lines; live events stream text (token events append, the
// generation.complete and completed events replace it with the whole
// text), turn tool lines from ⏳ to ✅ or ❌, and put approval cards in
// place.

import {h, replace, statusBadge, prettyJSON, toast} from "./dom.js";
import {post} from "./api.js";
import {ApprovalCard} from "./card.js";

const toolIcons = {queued: "⏳", executing: "⏳", awaiting: "✋", done: "✅", error: "❌", denied: "🚫", stored: "🔧"};
const toolWords = {queued: "queued", executing: "executing", awaiting: "awaiting approval", done: "done", error: "error", denied: "denied", stored: ""};

function seconds(ns) {
  return ns ? " (" + (ns / 1e9).toFixed(1) + " s)" : "";
}

// ToolLine is one tool call.
class ToolLine {
  constructor(call) {
    this.call = call;
    this.label = h("span", {class: "tool-label"});
    this.progress = h("span", {class: "muted progress"});
    this.details = h("details", {class: "tool-details"}, h("summary", null, "arguments and result"),
      h("pre", {class: "args", "data-role": "args"}, prettyJSON(call.arguments)),
      h("pre", {class: "result", "data-role": "result"}));
    this.details.hidden = !call.arguments;
    this.el = h("div", {class: "tool-line", "data-call": call.id || ""}, this.label, " ", this.progress, this.details);
    this.set("queued");
  }

  set(state, extra) {
    this.state = state;
    this.el.dataset.state = state;
    const word = toolWords[state];
    this.label.textContent = `${toolIcons[state]} ${this.call.name}${word ? " — " + word : ""}${extra || ""}`;
  }

  result(text) {
    this.details.querySelector('[data-role="result"]').textContent = text || "";
    this.details.hidden = false;
  }
}

// RunView is one run: its header (status, Stop) and its body of text
// blocks, tool lines and approval cards, in order.
export class RunView {
  constructor(id, cards) {
    this.id = id;
    this.cards = cards; // approval id -> ApprovalCard, shared by the page
    this.tools = new Map();
    this.open = null; // the text block tokens append to
    this.status = h("span", {"data-role": "run-status"});
    this.stopBtn = h("button", {type: "button", class: "quiet stop", hidden: true, onclick: () => this.stop()}, "Stop");
    this.body = h("div", {class: "run-body"});
    this.el = h("article", {class: "run", "data-run": id},
      h("header", {class: "run-head"}, h("span", {class: "muted"}, "run " + id.slice(0, 8)), " ", this.status, " ", this.stopBtn),
      this.body);
    this.setStatus("");
  }

  setStatus(s) {
    this.runStatus = s;
    replace(this.status, s ? statusBadge(s) : null);
    this.stopBtn.hidden = !(s === "running" || s === "awaiting_approval");
  }

  async stop() {
    try {
      const r = await post("/api/v1/runs/" + encodeURIComponent(this.id) + "/stop");
      toast(r.stopped ? "Run stopped." : "The run had already ended.");
    } catch (e) {
      toast("Could not stop the run: " + e.message);
    }
  }

  textBlock() {
    if (!this.open) {
      this.open = h("div", {class: "text assistant", "data-role": "text"});
      this.body.append(this.open);
    }
    return this.open;
  }

  userMessage(m) {
    this.open = null;
    this.body.append(h("div", {class: "text user"}, h("span", {class: "author"}, (m.name || "user") + ": "), m.content || ""));
  }

  tool(call) {
    let t = this.tools.get(call.id);
    if (!t) {
      t = new ToolLine(call);
      this.tools.set(call.id, t);
      this.open = null;
      this.body.append(t.el);
    }
    return t;
  }

  card(a) {
    let c = this.cards.get(a.id);
    if (c) c.update(a);
    else this.cards.set(a.id, c = new ApprovalCard(a));
    return c;
  }

  // placeCard puts a card (known from the pending list) in this run; an
  // event for it later moves it to its place in the stream.
  placeCard(a) {
    const c = this.card(a);
    if (c.el.isConnected) return;
    const t = this.tools.get(a.call_id);
    if (t) t.el.after(c.el);
    else this.body.append(c.el);
  }

  // message renders a stored message of the transcript.
  message(m, results) {
    switch (m.role) {
    case "user":
      this.userMessage(m);
      break;
    case "assistant":
      if (m.content) { this.textBlock().textContent = m.content; this.open = null; }
      for (const c of m.tool_calls || []) {
        const t = this.tool({id: c.id, name: c.name, arguments: c.arguments});
        const r = results.get(c.id);
        t.set(r === undefined ? "queued" : "stored");
        if (r !== undefined) t.result(r);
      }
      break;
    }
  }

  // event applies a live event of this run.
  event(ev) {
    switch (ev.type) {
    case "ready": case "generation.start":
      if (!this.runStatus || this.runStatus === "awaiting_approval") this.setStatus("running");
      break;
    case "token":
      this.textBlock().textContent += ev.text || "";
      break;
    case "generation.complete":
      if (ev.text) { this.textBlock().textContent = ev.text; }
      this.open = null;
      break;
    case "tools.pending":
      for (const c of ev.calls || []) this.tool(c);
      break;
    case "tool.executing":
      this.tool(ev.call).set("executing");
      break;
    case "tool.progress": {
      const p = ev.call && ev.call.progress;
      if (p) this.tool(ev.call).progress.textContent = p.message || (p.total ? `${p.progress} / ${p.total}` : String(p.progress || ""));
      break;
    }
    case "tool.result": {
      const t = this.tool(ev.call);
      t.set("done", seconds(ev.duration));
      t.progress.textContent = "";
      t.result(ev.call.result);
      break;
    }
    case "tool.error": {
      const t = this.tool(ev.call);
      t.set("error", ": " + (ev.error || ev.call.result || "failed"));
      t.progress.textContent = "";
      if (ev.call.result) t.result(ev.call.result);
      break;
    }
    case "tool.awaiting_approval": {
      const t = ev.call ? this.tool(ev.call) : null;
      if (t) t.set("awaiting");
      if (ev.approval) {
        const c = this.card(ev.approval);
        this.open = null;
        // Under the tool line it gates (this moves a card placed from the
        // pending list), so the card reads before the line's outcome.
        if (t) t.el.after(c.el);
        else this.body.append(c.el);
      }
      this.setStatus("awaiting_approval");
      break;
    }
    case "tool.approved": case "tool.denied":
      if (ev.approval) {
        this.card(ev.approval);
        const t = this.tools.get(ev.approval.call_id);
        if (t && ev.type === "tool.denied") t.set("denied");
        if (t && ev.type === "tool.approved" && t.state === "awaiting") t.set("queued");
      }
      break;
    case "rate_limit": case "transient_error":
      this.notice("⚠ " + (ev.type === "rate_limit" ? "rate limited" : "model error") + ", retrying" + (ev.attempt ? " (attempt " + ev.attempt + ")" : "") + (ev.error ? ": " + ev.error : ""));
      break;
    case "workflow.error":
      this.notice("❌ " + (ev.error || ev.text || "the run failed"), "error");
      break;
    case "memory.context.loaded": case "memory.search": case "memory.write.created": case "memory.write.blocked":
    case "memory.policy.denied": case "memory.promotion.proposed": case "memory.safety.flagged":
      this.notice("📚 " + ev.type + ((ev.memory || []).length ? ": " + ev.memory.map((m) => m.path || m.title || m.id).join(", ") : ""));
      break;
    case "completed":
      if (ev.text) {
        const last = this.body.lastElementChild;
        if (last && last.dataset.role === "text") last.textContent = ev.text;
        else this.textBlock().textContent = ev.text;
      }
      this.open = null;
      this.setStatus(ev.status || "done");
      if (ev.error) this.notice("❌ " + ev.error, "error");
      break;
    }
  }

  notice(text, cls) {
    this.open = null;
    this.body.append(h("div", {class: "notice " + (cls || "muted")}, text));
  }
}
