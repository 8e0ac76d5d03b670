// dom.js: building the page safely. Every string from the API becomes a
// text node (textContent), never markup: the API redacts secrets, and the
// page must not turn a stray "<" in a tool result into HTML.

// h makes an element: h("a", {href: "#/x", class: "y"}, "text", child…).
// Attributes starting with "on" are listeners; null/false children and
// attributes are skipped; strings and numbers become text nodes.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace empties el and puts children in it.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// platformOf names the platform of a conversation key ("slack:T1:C2" ->
// "slack").
export function platformOf(key) {
  const p = String(key || "").split(":")[0];
  return ["slack", "telegram", "discord", "api", "terminal"].includes(p) ? p : "other";
}

// platformBadge is a coloured label of a key's platform.
export function platformBadge(key) {
  const p = platformOf(key);
  return h("span", {class: "badge platform-" + p}, p);
}

export function riskBadge(risk) {
  if (!risk) return null;
  return h("span", {class: "badge risk-" + risk}, risk);
}

export function statusBadge(status) {
  if (!status) return h("span", {class: "muted"}, "—");
  return h("span", {class: "badge status-" + status.replace(/[^a-z_]/g, "")}, status.replace(/_/g, " "));
}

// ago says how long ago t was ("3 min ago"); the exact time is its title.
export function ago(t) {
  const d = new Date(t);
  if (!t || isNaN(d)) return h("span", {class: "muted"}, "—");
  const s = Math.max(0, (Date.now() - d.getTime()) / 1000);
  let text;
  if (s < 60) text = Math.floor(s) + " s ago";
  else if (s < 3600) text = Math.floor(s / 60) + " min ago";
  else if (s < 86400) text = Math.floor(s / 3600) + " h ago";
  else text = Math.floor(s / 86400) + " d ago";
  return h("time", {datetime: d.toISOString(), title: d.toLocaleString()}, text);
}

// prettyJSON formats JSON for display: on one line when short, indented
// otherwise; what does not parse is shown as is.
export function prettyJSON(v) {
  if (v === undefined || v === null || v === "") return "";
  try {
    const x = typeof v === "string" ? JSON.parse(v) : v;
    // An object of plain values reads best as {"name": "web", "replicas": 3};
    // the values are JSON.stringify's, so nothing shown differs from
    // what runs.
    if (x && typeof x === "object" && !Array.isArray(x) && Object.values(x).every((y) => y === null || typeof y !== "object")) {
      const flat = "{" + Object.entries(x).map(([k, y]) => JSON.stringify(k) + ": " + JSON.stringify(y)).join(", ") + "}";
      if (flat.length <= 72) return flat;
    }
    return JSON.stringify(x, null, 2);
  } catch {
    return String(v);
  }
}

// who names an actor: its display name, else its id.
export function who(actor) {
  if (!actor) return "";
  return actor.name && actor.id ? `${actor.name} (${actor.id})` : (actor.name || actor.id || "");
}

// toast shows a short message in the status line.
export function toast(text) {
  document.getElementById("toast").textContent = text;
}
