// audit.js: searching the audit log (GET /api/v1/audit): free text (q),
// a conversation and a time window; the newest entries first.

import {h, replace, platformBadge, riskBadge, who} from "./dom.js";
import {get} from "./api.js";

const windows = [["", "any time"], ["1h", "last hour"], ["24h", "last 24 hours"], ["168h", "last 7 days"], ["720h", "last 30 days"]];

export function render(main) {
  const q = h("input", {type: "search", id: "audit-q", name: "q", "data-search": true, "aria-label": "Search the audit log", placeholder: "search: tool, person, approval id, detail…"});
  const conv = h("input", {type: "text", id: "audit-conv", name: "conversation", "aria-label": "Conversation key", placeholder: "conversation key (exact)"});
  const since = h("select", {id: "audit-since", name: "since", "aria-label": "Time window"}, windows.map(([v, l]) => h("option", {value: v}, l)));
  const rows = h("tbody", {id: "audit-rows"});
  const status = h("p", {class: "muted", role: "status", "data-role": "audit-status"});
  const form = h("form", {class: "toolbar", onsubmit: (e) => { e.preventDefault(); search(); }},
    q, conv, since, h("button", {type: "submit", id: "audit-search"}, "Search"));
  main.replaceChildren(h("h1", null, "Audit log"), form, status,
    h("table", {class: "grid audit"},
      h("thead", null, h("tr", null, ["Time", "Kind", "Who", "Conversation", "Tool", "Risk", "Detail"].map((t) => h("th", null, t)))),
      rows));

  let seq = 0;
  async function search() {
    const my = ++seq;
    const p = new URLSearchParams({limit: "200"});
    if (q.value.trim()) p.set("q", q.value.trim());
    if (conv.value.trim()) p.set("conversation", conv.value.trim());
    if (since.value) p.set("since", since.value);
    status.textContent = "Searching…";
    try {
      const es = (await get("/api/v1/audit?" + p)).entries;
      if (my !== seq) return; // a newer search answered first
      es.reverse();
      status.textContent = es.length ? es.length + " entr" + (es.length === 1 ? "y" : "ies") + (es.length === 200 ? " (the latest 200)" : "") : "No entries match.";
      replace(rows, es.map((e) => h("tr", {"data-kind": e.kind},
        h("td", null, h("time", {datetime: e.time}, new Date(e.time).toLocaleString())),
        h("td", null, e.kind),
        h("td", null, who(e.actor)),
        h("td", null, e.conv_key ? [platformBadge(e.conv_key), " ", h("a", {href: "#/c/" + encodeURIComponent(e.conv_key)}, e.conv_key)] : ""),
        h("td", null, e.tool || ""),
        h("td", null, riskBadge(e.risk)),
        h("td", {class: "detail"}, [e.approval_id ? h("span", {class: "muted", title: e.approval_id}, "approval " + e.approval_id.slice(0, 8) + "… ") : null, e.detail || ""]))));
    } catch (err) {
      if (my === seq) status.textContent = "Could not search: " + err.message;
    }
  }
  search();
}
