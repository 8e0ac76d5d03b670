// conversations.js: the list of conversations, most recently active
// first, with the status of each one's latest run, and a form to start a
// new API conversation.

import {h, replace, platformBadge, statusBadge, ago} from "./dom.js";
import {get} from "./api.js";

const namePattern = /^[A-Za-z0-9._-]+$/;

export function render(main, params, go) {
  const filter = h("input", {type: "search", id: "conv-filter", "data-search": true, "aria-label": "Filter conversations", placeholder: "filter by key or title"});
  const body = h("tbody", {id: "conv-rows"});
  const status = h("p", {class: "muted", role: "status"}, "Loading…");
  const name = h("input", {type: "text", id: "new-name", "aria-label": "Name of a new API conversation", placeholder: "name (letters, digits, - _ .)", pattern: "[A-Za-z0-9._\\-]+"});
  const newError = h("span", {class: "error", role: "alert"});
  const newForm = h("form", {class: "inline", onsubmit: (e) => {
    e.preventDefault();
    const n = name.value.trim();
    if (!namePattern.test(n)) { newError.textContent = "Use letters, digits, - _ and . only."; return; }
    go("#/c/" + encodeURIComponent("api:" + n));
  }}, h("label", {for: "new-name"}, "New conversation api:"), name, h("button", {type: "submit"}, "Open"), newError);

  main.replaceChildren(
    h("h1", null, "Conversations"),
    h("div", {class: "toolbar"}, filter, newForm),
    h("table", {class: "grid"},
      h("thead", null, h("tr", null, h("th", null, "Platform"), h("th", null, "Conversation"), h("th", null, "Title"), h("th", null, "Updated"), h("th", null, "Latest run"))),
      body),
    status);

  let rows = [];
  const applyFilter = () => {
    const q = filter.value.trim().toLowerCase();
    for (const r of rows) r.el.hidden = q !== "" && !r.text.includes(q);
  };
  filter.addEventListener("input", applyFilter);

  let stopped = false;
  (async () => {
    let list;
    try {
      list = (await get("/api/v1/conversations?limit=100")).conversations;
    } catch (e) {
      status.textContent = "Could not load conversations: " + e.message;
      status.className = "error";
      return;
    }
    if (stopped) return;
    status.textContent = list.length ? list.length + " conversation" + (list.length === 1 ? "" : "s") : "No conversations yet.";
    rows = list.map((c) => {
      const last = c.latest_run;
      const runCell = h("td", {"data-role": "run-status"}, last ? statusBadge(last.status) : h("span", {class: "muted"}, "no run"));
      const el = h("tr", {"data-key": c.key},
        h("td", null, platformBadge(c.key)),
        h("td", null, h("a", {href: "#/c/" + encodeURIComponent(c.key), class: "conv-link"}, c.key)),
        h("td", null, c.title || h("span", {class: "muted"}, "(untitled)")),
        h("td", null, ago(c.updated_at)),
        runCell);
      return {c, el, text: (c.key + " " + (c.title || "")).toLowerCase()};
    });
    replace(body, rows.map((r) => r.el));
    applyFilter();
  })();
  return () => { stopped = true; };
}
