// login.js: asks for an API token and checks it with a cheap request.

import {h} from "./dom.js";
import {call, setToken, ApiError} from "./api.js";

export function render(main, params, go) {
  const input = h("input", {id: "token", type: "password", autocomplete: "off", spellcheck: "false", required: true, "aria-describedby": "login-help"});
  const error = h("p", {id: "login-error", class: "error", role: "alert"}, params.message || "");
  const button = h("button", {type: "submit", id: "login-submit"}, "Sign in");
  const form = h("form", {class: "login", onsubmit: async (e) => {
    e.preventDefault();
    const tok = input.value.trim();
    if (!tok) return;
    button.disabled = true;
    error.textContent = "";
    try {
      await call("GET", "/api/v1/conversations?limit=1", undefined, tok);
      setToken(tok);
      go(params.next || "#/conversations");
    } catch (err) {
      error.textContent = err instanceof ApiError && err.status === 401
        ? "That token was refused (401): " + err.message
        : "Could not sign in: " + err.message;
      input.select();
    } finally {
      button.disabled = false;
    }
  }},
  h("h1", null, "Sign in"),
  h("label", {for: "token"}, "API token"),
  input,
  h("p", {id: "login-help", class: "muted"}, "Create one with ", h("code", null, "opsgate token create --person NAME"), ". It is kept in this tab only and sent as an Authorization header."),
  button, error);
  main.replaceChildren(form);
  input.focus();
}
