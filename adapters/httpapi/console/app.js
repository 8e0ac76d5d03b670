// app.js: the console's shell. Views are chosen by the URL's fragment
// (#/conversations, #/c/<key>, #/t/<key> (its timeline), #/approvals, #/audit, #/memory, #/login),
// so a reload keeps the view and the token never enters a URL. Keys:
// "g c", "g a", "g u", "g m" go to a view, "/" focuses its search box,
// "a" / "d" in an approval card focus its Approve / Deny button.

import {token, clearToken, onUnauthorized} from "./api.js";
import {focusDecision} from "./card.js";
import * as login from "./login.js";
import * as conversations from "./conversations.js";
import * as conversation from "./conversation.js";
import * as timeline from "./timeline.js";
import * as approvals from "./approvals.js";
import * as audit from "./audit.js";
import * as memory from "./memory.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const pendingCount = document.getElementById("pending-count");
let leave = null; // the current view's cleanup
let loginMessage = "";

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function setPending(n) {
  pendingCount.hidden = !n;
  pendingCount.textContent = n ? String(n) : "";
}

function route() {
  if (leave) { leave(); leave = null; }
  const hash = location.hash || "#/conversations";
  const signedIn = token() !== "";
  nav.hidden = !signedIn;
  document.getElementById("signout").hidden = !signedIn;
  document.getElementById("keys").hidden = !signedIn;
  if (!signedIn || hash === "#/login") {
    const next = hash === "#/login" ? "#/conversations" : hash;
    login.render(main, {next, message: loginMessage}, go);
    loginMessage = "";
    document.title = "Sign in · opsgate";
    return;
  }
  let view = "conversations", params = {};
  const m = hash.match(/^#\/(c|t)\/(.+)$/);
  if (m) {
    view = m[1] === "t" ? "timeline" : "conversation";
    try { params.key = decodeURIComponent(m[2]); } catch { params.key = m[2]; }
  } else if (["#/approvals", "#/audit", "#/memory"].includes(hash)) {
    view = hash.slice(2);
  }
  for (const a of nav.querySelectorAll("a")) {
    if (a.dataset.view === (view === "conversation" || view === "timeline" ? "conversations" : view)) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const views = {conversations, conversation, timeline, approvals, audit, memory};
  document.title = (params.key || view[0].toUpperCase() + view.slice(1)) + " · opsgate";
  leave = views[view].render(main, params, go, setPending) || null;
  main.focus({preventScroll: true});
}

onUnauthorized((err) => {
  clearToken();
  loginMessage = "Signed out: " + err.message;
  route();
});

document.getElementById("signout").addEventListener("click", () => {
  clearToken();
  loginMessage = "Signed out.";
  go("#/login");
});

// Keyboard shortcuts; none while typing in a field, none with a modifier.
let pendingG = 0;
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || !token()) return;
  const t = e.target;
  if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) {
    if (e.key === "Escape") t.blur();
    return;
  }
  if (pendingG && Date.now() - pendingG < 1500) {
    pendingG = 0;
    const to = {c: "#/conversations", a: "#/approvals", u: "#/audit", m: "#/memory"}[e.key];
    if (to) { e.preventDefault(); go(to); }
    return;
  }
  pendingG = 0;
  if (e.key === "g") { pendingG = Date.now(); return; }
  if (e.key === "/") {
    const box = main.querySelector("[data-search]");
    if (box) { e.preventDefault(); box.focus(); box.select(); }
    return;
  }
  if ((e.key === "a" || e.key === "d") && focusDecision(e.key)) e.preventDefault();
});

window.addEventListener("hashchange", route);
route();
