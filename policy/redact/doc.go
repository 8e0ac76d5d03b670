// Package redact removes secrets from text before it leaves opsgate for
// people or logs: streamed model tokens, tool lines, approval cards and
// their arguments, status texts, the terminal, log lines (through
// [NewHandler]), audit exports, and tool results before the model sees them
// (redact.model_input). Each secret is replaced by [REDACTED:<kind>].
//
// # Detectors
//
//   - aws_access_key: AKIA…/ASIA… key ids.
//   - aws_secret_key: the value of aws_secret_access_key, AWS_SECRET_ACCESS_KEY,
//     "SecretAccessKey".
//   - private_key: a -----BEGIN … PRIVATE KEY----- block, whole.
//   - jwt: header.payload.signature starting with eyJ.
//   - slack_token, github_token, openai_key: xox…-, xapp-, Slack webhook
//     paths, ghp_…, github_pat_…, sk-… and sk-proj-… tokens.
//   - authorization: the credentials of an Authorization header (the scheme,
//     such as Bearer, stays).
//   - url_password: the password of scheme://user:password@host (scheme,
//     user and host stay).
//   - kubeconfig: client-key-data and client-certificate-data values, and
//     the token:, password: (any secret key) of a kubeconfig's user:.
//   - password_assignment: the value of a key ending in password, passwd,
//     passphrase, secret, api_key, token, private_key (and a few more) in
//     key=value, key: value, "key": "value" and --key value forms, and the
//     "auth" of a .dockerconfigjson. The key stays.
//   - k8s_secret_data: the values of the data: and stringData: maps of a
//     Kubernetes Secret, in YAML and JSON (kubectl get secret -o yaml|json).
//     A ConfigMap's data is not a secret and stays.
//   - pattern: whatever a regexp of redact.patterns matches ([Options]).
//   - configured: every secret opsgate was configured with (its tokens and
//     keys), also base64-encoded and URL-escaped.
//
// The detectors look for shapes, not for entropy, so git SHAs, UUIDs,
// image digests and base64 that is not in a Secret stay readable.
//
// # Streaming
//
// [Stream] redacts a text that arrives in fragments. It releases only text
// that can no longer become part of a secret: a secret split across tokens
// never shows, not even its first characters, not even in an intermediate
// edit of a message. What it releases in total equals [Redactor.String] of
// the whole text, however the text was split. It holds back ordinary prose
// at most to the next space or newline; a candidate that spans lines (a key
// block, a data: map waiting for its kind:) is held until decided, at most
// 64 KiB, after which it is redacted as if it were a secret. As the
// engine's display filter ([Redactor.Events]), what a run's stream still
// holds when its generation completes is released as a last token event,
// so the token events add up to the generation.complete text exactly.
//
// # What it cannot promise
//
// Redaction recognises secrets by their shape and their context, so it
// misses a secret that has neither: a password on a line of its own, a
// token with no known prefix and no key before it, a Secret's data printed
// without its kind (kubectl get secret -o jsonpath). It cannot see a secret
// the model has transformed: reversed, spelled out, split by spaces,
// translated into another encoding, or summarised. A user pattern matches
// within 64 KiB and holds back anything that may still grow into a match,
// so a pattern that matches prose holds prose. A label is a best guess from
// context: the token: of a kubeconfig user whose user: line is not in the
// text is labelled password_assignment. Approval arguments are stored exact;
// only their display is redacted.
package redact
