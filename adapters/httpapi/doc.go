// Package httpapi is opsgate's HTTP API (DESIGN §15), mounted under
// /api/v1 on server.listen: JSON in and out, errors as
// {"error": {"code", "message"}}.
//
// # Authentication
//
// Every request carries "Authorization: Bearer <token>". Tokens are made
// by `opsgate token create --person NAME` ([NewToken]) and stored as a
// SHA-256 hash ([TokenStore]); a request's token is found by its hash and
// compared in constant time. A token acts as the identity "api:<person>",
// so the policy decides an API decision exactly as it decides a click in
// chat: a person without the role gets 403 with the policy's sentence.
// Tokens are never logged.
//
// # What is served
//
// This first step serves the non-streaming endpoints: conversations (with
// their messages and runs), pending approvals and decisions, stopping a
// run, the audit log, memory search and the schedules. Everything a
// response carries passes the redactor the chat uses first (see
// [Options.Redact]), so a secret in a tool result never leaves through
// the API. The SSE streams (POST …/messages, GET …/events) come later.
//
// # Bad input
//
// A body over 1 MiB is 413; malformed JSON is 400 bad_json; an unknown
// field is 400 unknown_field; an unknown conversation, run or approval is
// 404. None of them stores anything.
//
// # Console
//
// [Console] serves the web console at / (files embedded from console/,
// plain JavaScript modules, no framework or CDN). The page loads without
// a token, asks for one, keeps it in the tab's sessionStorage and calls
// this API with it like any client; it renders every string as text,
// never as markup, under a CSP that allows no inline script or style.
package httpapi
