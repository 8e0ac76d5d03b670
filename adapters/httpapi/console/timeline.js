// timeline.js: a conversation's timeline (GET …/timeline, docs/design.md
// §19): the header (duration, people, changes and whose approval they ran
// on, approvals) and every step with its UTC time and actor.

import {h, platformBadge, riskBadge} from "./dom.js";
import {get, convPath} from "./api.js";

const icons = {
  "alert.fired": "🔥", "alert.resolved": "✅", "message": "💬", "answer": "🤖", "tool.call": "🔧",
  "approval.asked": "✋", "approval.voted": "🗳", "approval.decided": "⚖", "refused": "🚫",
  "preview": "🔍", "stop": "⏹", "error": "⚠️",
};

// utc shows a time as the report does: UTC, to the second.
function utc(t) {
  return t ? t.replace("T", " ").replace(/\.\d+Z$/, "Z") : "";
}

function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + (s % 60) + "s";
  return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
}

export function render(main, params) {
  const key = params.key;
  const note = h("p", {class: "muted", role: "status", "data-role": "timeline-status"}, "Loading…");
  const head = h("ul", {class: "timeline-head", id: "timeline-head"});
  const rows = h("tbody", {id: "timeline-rows"});
  main.replaceChildren(
    h("p", {class: "crumbs"}, h("a", {href: "#/c/" + encodeURIComponent(key)}, "← Conversation")),
    h("h1", {class: "conv-head"}, platformBadge(key), " Timeline of ", h("span", {class: "key"}, key)),
    note, head,
    h("table", {class: "grid timeline-steps"},
      h("thead", null, h("tr", null, ["Time (UTC)", "Actor", "Step", "Risk", "Outcome"].map((t) => h("th", null, t)))),
      rows));
  let stopped = false;
  (async () => {
    let t;
    try {
      t = await get(convPath(key) + "/timeline");
    } catch (e) {
      note.textContent = "Could not load the timeline: " + e.message;
      note.className = "error";
      return;
    }
    if (stopped) return;
    note.textContent = t.steps.length ? "" : "Nothing is recorded in this conversation yet.";
    const changes = t.changes.map((c) => c.tool + " (" + c.outcome + (c.approved_by ? ", approved by " + c.approved_by.join(", ") : "") + ")");
    const a = t.approvals;
    head.replaceChildren(
      h("li", null, "Start: " + utc(t.start) + " · End: " + utc(t.end) + " · Duration: " + duration(t.duration_ms)),
      h("li", null, "People: " + (t.people.join(", ") || "none")),
      h("li", {"data-role": "changes"}, "Changes made: " + (changes.join("; ") || "none")),
      h("li", null, `Approvals: ${a.asked} asked, ${a.approved} approved, ${a.denied} denied, ${a.other} other`));
    rows.replaceChildren(...t.steps.map((s) => h("tr", {"data-kind": s.kind},
      h("td", null, h("time", {datetime: s.time}, utc(s.time))),
      h("td", null, s.actor),
      h("td", null, (icons[s.kind] || "•") + " " + s.text),
      h("td", null, s.risk ? riskBadge(s.risk) : ""),
      h("td", null, s.outcome || ""))));
  })();
  return () => { stopped = true; };
}
