// approvals.js: every pending approval, from every platform, oldest
// first, each with its Approve and Deny buttons. It refreshes by itself;
// a card decided here stays with its outcome until the page is left.

import {h} from "./dom.js";
import {get} from "./api.js";
import {ApprovalCard} from "./card.js";

const refreshEvery = 15000;

export function render(main, params, go, setPending) {
  const list = h("section", {id: "approval-list", class: "cards", "aria-label": "Pending approvals"});
  const status = h("p", {class: "muted", role: "status", "data-role": "approvals-status"}, "Loading…");
  const filter = h("input", {type: "search", id: "approval-filter", "data-search": true, "aria-label": "Filter approvals", placeholder: "filter by tool, conversation or requester"});
  const refresh = h("button", {type: "button", class: "quiet", onclick: () => load()}, "Refresh");
  main.replaceChildren(h("h1", null, "Pending approvals"), h("div", {class: "toolbar"}, filter, refresh), status, list);

  const cards = new Map();
  const applyFilter = () => {
    const q = filter.value.trim().toLowerCase();
    for (const c of cards.values()) {
      const a = c.a;
      const text = [a.tool, a.conv_key, a.requester && a.requester.id, a.requester && a.requester.name, a.risk].join(" ").toLowerCase();
      c.el.hidden = q !== "" && !text.includes(q);
    }
  };
  filter.addEventListener("input", applyFilter);

  const count = () => [...cards.values()].filter((c) => c.a.status === "pending").length;
  const show = () => {
    const n = count();
    status.textContent = n ? n + " pending" : "Nothing is waiting for a decision.";
    setPending(n);
  };

  let timer = null;
  let stopped = false;
  async function load() {
    clearTimeout(timer);
    try {
      const got = (await get("/api/v1/approvals?status=pending")).approvals;
      if (stopped) return;
      const ids = new Set(got.map((a) => a.id));
      for (const [id, c] of cards) {
        // Decided elsewhere (in chat, by another person): say so.
        if (!ids.has(id) && c.a.status === "pending") c.update({id, status: "gone"});
      }
      for (const a of got) {
        if (cards.has(a.id)) { cards.get(a.id).update(a); continue; }
        const c = new ApprovalCard(a, {showConversation: true, onDecided: show});
        cards.set(a.id, c);
        list.append(c.el);
      }
      applyFilter();
      show();
    } catch (e) {
      status.textContent = "Could not load approvals: " + e.message;
    }
    if (!stopped) timer = setTimeout(load, refreshEvery);
  }
  load();
  return () => { stopped = true; clearTimeout(timer); };
}
