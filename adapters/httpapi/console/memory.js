// memory.js: the memory browser, searching the workspace's trusted
// documents (GET /api/v1/memory/search).

import {h, replace} from "./dom.js";
import {get} from "./api.js";

export function render(main) {
  const q = h("input", {type: "search", id: "memory-q", "data-search": true, required: true, "aria-label": "Search memory", placeholder: "search runbooks, notes, decisions…"});
  const results = h("section", {id: "memory-results", class: "cards", "aria-label": "Results"});
  const status = h("p", {class: "muted", role: "status", "data-role": "memory-status"}, "Search the workspace's long-term memory.");
  const form = h("form", {class: "toolbar", onsubmit: async (e) => {
    e.preventDefault();
    const text = q.value.trim();
    if (!text) return;
    status.textContent = "Searching…";
    try {
      const hits = (await get("/api/v1/memory/search?limit=20&q=" + encodeURIComponent(text))).results;
      status.textContent = hits.length ? hits.length + " result" + (hits.length === 1 ? "" : "s") : "Nothing found.";
      replace(results, hits.map(hit));
    } catch (err) {
      status.textContent = "Could not search: " + err.message;
      results.replaceChildren();
    }
  }}, q, h("button", {type: "submit", id: "memory-search"}, "Search"));
  main.replaceChildren(h("h1", null, "Memory"), form, status, results);
}

function hit(r) {
  const facts = [["type", r.type], ["trust", r.trust], ["scope", r.scope], ["score", typeof r.score === "number" ? r.score.toFixed(3) : r.score]]
    .filter(([, v]) => v !== undefined && v !== null && v !== "");
  const content = r.snippet || r.content || "";
  return h("article", {class: "card memory-hit", "data-path": r.path || ""},
    h("header", {class: "card-head"}, h("span", {class: "tool-name"}, r.title || r.path || r.id), " ", h("code", {class: "muted"}, r.path || "")),
    h("p", {class: "facts-inline"}, facts.map(([k, v]) => h("span", {class: "fact"}, k + ": " + v)),
      (r.tags || []).map((t) => h("span", {class: "badge tag"}, t))),
    h("pre", {class: "snippet"}, content.length > 600 ? content.slice(0, 600) + "…" : content));
}
