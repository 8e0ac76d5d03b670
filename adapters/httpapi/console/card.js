// card.js: the approval card, the same in a live run and on the approvals
// page. Its buttons send the decision through the API, which applies the
// policy as a click in chat would; the API's refusal (a 403 policy
// sentence, a 409 already decided) is shown on the card as it is.

import {h, replace, platformBadge, riskBadge, ago, prettyJSON, who} from "./dom.js";
import {post, ApiError} from "./api.js";

// quorumText is "1 of 2 approvals".
export function quorumText(a) {
  const need = Math.max((a.verdict && a.verdict.quorum) || 1, 1);
  const got = (a.votes || []).filter((v) => v.approve).length;
  return `${got} of ${need} approval${need === 1 ? "" : "s"}`;
}

function outcomeText(a) {
  const by = who(a.decided_by);
  switch (a.status) {
  case "pending": return "Waiting for a decision";
  case "approved":
    if (a.preview && a.preview.stale) return "Approved" + (by ? " by " + by : "") + ", not run: it changed since";
    return "Approved" + (by ? " by " + by : "") + (a.reason ? ": " + a.reason : "");
  case "denied": return "Denied" + (by ? " by " + by : "") + (a.reason ? ": " + a.reason : "");
  case "expired": return "Expired (counts as denied)";
  case "superseded": return "Superseded by a newer request";
  case "cancelled": return "Cancelled" + (a.reason ? ": " + a.reason : "");
  case "gone": return "No longer pending: decided elsewhere, expired or cancelled";
  default: return a.status || "";
  }
}

// previewNodes show what the call would change (docs/design.md §18): the
// whole diff here, where a chat card shows 20 lines.
function previewNodes(p) {
  if (!p) return [];
  const out = [];
  if (p.stale) out.push(h("p", {class: "preview-warn", "data-role": "stale"}, "⚠️ Stale: " + p.stale));
  if (p.changed) out.push(h("p", {class: "preview-warn", "data-role": "changed"}, "⚠️ " + p.changed));
  switch (p.status) {
  case "pending": out.push(h("p", {class: "muted"}, "🔎 Preview: working it out…")); break;
  case "none": out.push(h("p", {class: "muted"}, "🔎 no preview: " + (p.why || ""))); break;
  default:
    out.push(h("p", {class: "preview-summary"}, "🔎 What changes" + (p.summary ? ": " + p.summary : "")));
    if (p.why) out.push(h("pre", {class: "preview-why"}, p.why));
    if (p.diff) {
      out.push(h("pre", {class: "diff", "aria-label": "Diff"}, ...p.diff.split("\n").map((l) =>
        h("span", {class: l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "ctx"}, l + "\n"))));
    }
  }
  return out;
}

// ApprovalCard renders approval a; update(a) shows a newer state of it
// (from a decision's answer or a tool.approved / tool.denied event).
export class ApprovalCard {
  constructor(a, opts) {
    this.a = a;
    this.opts = opts || {};
    this.outcome = h("p", {class: "outcome", "data-role": "outcome"});
    this.error = h("p", {class: "error card-error", role: "alert", "data-role": "error"});
    this.votes = h("ul", {class: "votes"});
    this.preview = h("div", {class: "preview", "data-role": "preview", "aria-label": "What changes"});
    this.reason = h("input", {type: "text", class: "reason", "aria-label": "Reason (optional)", placeholder: "reason (optional)", maxlength: "500"});
    this.approveBtn = h("button", {type: "button", class: "approve", "data-action": "approve", onclick: () => this.decide("approve")}, "Approve");
    this.denyBtn = h("button", {type: "button", class: "deny", "data-action": "deny", onclick: () => this.decide("deny")}, "Deny");
    this.actions = h("div", {class: "actions"}, this.reason, this.approveBtn, this.denyBtn);
    const conv = this.opts.showConversation
      ? h("p", {class: "conv"}, platformBadge(a.conv_key), " ", h("a", {href: "#/c/" + encodeURIComponent(a.conv_key)}, a.conv_key))
      : null;
    this.el = h("article", {class: "card approval", tabindex: "0", "data-approval": a.id, "aria-label": "Approval request for " + a.tool},
      h("header", {class: "card-head"},
        h("span", {class: "tool-name"}, a.tool), " ", riskBadge(a.risk),
        a.toolset ? h("span", {class: "muted"}, " in " + a.toolset) : null),
      conv,
      h("dl", {class: "facts"},
        h("dt", null, "Requested by"), h("dd", {"data-role": "requester"}, who(a.requester)),
        h("dt", null, "Asked"), h("dd", null, ago(a.created_at)),
        h("dt", null, "Quorum"), h("dd", {"data-role": "quorum"}, quorumText(a))),
      this.args = h("pre", {class: "args", "aria-label": "Arguments"}, prettyJSON(a.arguments)),
      this.votes, this.outcome, this.error, this.actions);
    this.render();
  }

  render() {
    const a = this.a;
    this.el.querySelector('[data-role="quorum"]').textContent = quorumText(a);
    replace(this.votes, (a.votes || []).map((v) =>
      h("li", null, (v.approve ? "✅ " : "❌ ") + (v.person || who(v.actor)) + (v.reason ? ": " + v.reason : ""))));
    if (a.preview && !this.preview.isConnected) this.args.after(this.preview);
    replace(this.preview, previewNodes(a.preview));
    this.outcome.textContent = outcomeText(a);
    this.el.dataset.status = a.status;
    const open = a.status === "pending";
    this.actions.hidden = !open;
    this.approveBtn.disabled = this.denyBtn.disabled = !open || this.busy;
  }

  update(a) {
    if (!a || a.id !== this.a.id) return;
    this.a = Object.assign({}, this.a, a);
    this.render();
  }

  async decide(decision) {
    if (this.busy) return;
    this.busy = true;
    this.error.textContent = "";
    this.render();
    try {
      const got = await post("/api/v1/approvals/" + encodeURIComponent(this.a.id) + "/decision",
        {decision, reason: this.reason.value.trim()});
      this.busy = false;
      this.update(got.approval);
      if (this.opts.onDecided) this.opts.onDecided(got.approval);
    } catch (e) {
      this.busy = false;
      this.error.textContent = e instanceof ApiError ? e.message : String(e);
      this.render();
    }
  }
}

// focusDecision moves the focus to the Approve ("a") or Deny ("d") button
// of the card holding the focus: a key never decides by itself, Enter on
// the focused button does.
export function focusDecision(key) {
  const card = document.activeElement && document.activeElement.closest && document.activeElement.closest("article.approval");
  if (!card) return false;
  const btn = card.querySelector(key === "a" ? "button.approve" : "button.deny");
  if (!btn || btn.disabled || btn.closest("[hidden]")) return false;
  btn.focus();
  return true;
}
