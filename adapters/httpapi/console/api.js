// api.js: the API client. The token lives in sessionStorage (gone when the
// tab closes) and travels only in the Authorization header, never in a URL.

const tokenKey = "opsgate.token";

export function token() { return sessionStorage.getItem(tokenKey) || ""; }
export function setToken(t) { sessionStorage.setItem(tokenKey, t); }
export function clearToken() { sessionStorage.removeItem(tokenKey); }

// ApiError is an API error answer: its status and the API's own code and
// message (a 403 carries the policy's sentence, a 409 "already decided").
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// onUnauthorized is called when the API refuses the token (401).
let unauthorized = () => {};
export function onUnauthorized(f) { unauthorized = f; }

function headers(tok, extra) {
  return Object.assign({"Authorization": "Bearer " + tok, "Accept": "application/json"}, extra || {});
}

// errorOf reads an error answer; a body that is not the API's shape (a
// proxy's page) still gives a sentence.
async function errorOf(resp) {
  let code = "http_" + resp.status, message = resp.status + " " + resp.statusText;
  try {
    const b = await resp.json();
    if (b && b.error) { code = b.error.code || code; message = b.error.message || message; }
  } catch { /* not JSON */ }
  return new ApiError(resp.status, code, message);
}

// call sends a request with the stored token (or tok) and returns the
// decoded JSON; an error answer throws ApiError.
export async function call(method, path, body, tok) {
  const t = tok === undefined ? token() : tok;
  const init = {method, headers: headers(t), cache: "no-store"};
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, "network", "opsgate is not reachable: " + e.message);
  }
  if (!resp.ok) {
    const err = await errorOf(resp);
    if (resp.status === 401 && tok === undefined) unauthorized(err);
    throw err;
  }
  return resp.json();
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);

// convPath is the API path of a conversation (its key escaped: keys hold
// colons and may hold slashes).
export function convPath(key) {
  return "/api/v1/conversations/" + encodeURIComponent(key);
}
