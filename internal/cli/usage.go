package cli

// Usage is opsgate's help: the commands and the flags they all take.
// Each command's own help lives beside its body.
const Usage = `opsgate: a ChatOps agent for on-call engineers

Usage:
  opsgate [flags] <command> [command flags]

Commands:
  chat            talk to opsgate in this terminal (--resume, --conversation
                  NAME, -m TEXT); when stdin is not a terminal, read one
                  message, approval answer or command per line
  serve           run the configured chat adapters and schedules, with
                  /healthz, /readyz, /metrics and the HTTP API (/api/v1)
                  on server.listen
  doctor          check the configuration, the LLM, the MCP servers and
                  the store, and say how to fix what is wrong
  migrate         apply pending database migrations
  audit           print the audit log (--since, --conversation, --json),
                  redacted; audit verify checks its hash chain
  approvals       show ID prints an approval request with its whole
                  preview diff
  policy          check [FILE] validates the policy file; explain shows
                  what it decides for one call (opsgate policy help)
  schedules       list the schedules and their next fires; schedules run
                  NAME fires one now and waits for its run
  memory          long-term memory: import DIR, search QUERY [--explain],
                  list, show PATH, promote ID, reject ID, export
  incident        report KEY [--format md|json] prints a conversation's
                  timeline; postmortem KEY drafts a postmortem from it
  token           API tokens: create --person NAME (printed once), list,
                  revoke ID
  healthcheck     exit 0 when the local serve's /healthz answers 200 (for
                  container health checks)
  version         print the version
  help            show this help

Flags (before or after the command):
  --config FILE      configuration file (default: $OPSGATE_CONFIG, else
                     ./opsgate.yaml if it exists, else built-in defaults)
  --log-level LEVEL  debug, info, warn or error (default: $OPSGATE_LOG_LEVEL,
                     else warn for chat and info for the other commands)
  --version          print the version (as opsgate version)
`

// ServeHelp is opsgate serve's help; serve is wiring only, in cmd/opsgate.
const ServeHelp = `Usage: opsgate serve [--allow-empty]

Run the configured chat adapters and schedules, with GET /healthz (alive),
GET /readyz (ready to serve, as JSON), GET /metrics (Prometheus) and the
HTTP API under /api/v1 (tokens: opsgate token) on server.listen. SIGINT
or SIGTERM shut down gracefully: the HTTP server stops, runs finish or
checkpoint (up to 30 s), then the MCP servers and the store are closed.
SIGHUP reloads the policy file (policy.file); a file
that does not load keeps the policy in force and is logged.

The HTTP API with at least one API token (opsgate token create) is
something to serve: an API-and-console deployment needs no chat platform.
So are incidents (POST /hooks/alertmanager, docs/incidents.md). With no
chat adapter enabled, no schedule, no incidents and no API token, serve
refuses to start (exit 1), unless:
  --allow-empty  start anyway with nothing to serve, only /healthz,
                 /readyz and /metrics answering: useful for a standby or
                 for /healthz-only smoke tests
`
