// Package postgres is the PostgreSQL store (core.Store) over pgx: the one
// opsgate uses when several replicas share state (docs/design.md §12). It passes
// the same conformance suite as memory/sqlite (core/coretest/storetest).
//
// Writes that must be seen in order by every replica (the audit chain, the
// order of conversation activity) take transaction-scoped advisory locks;
// one-shot operations (deciding an approval, claiming a checkpoint) are
// single conditional statements, so exactly one caller in any replica
// wins. The audit log and approval votes are append-only by trigger
// (UPDATE, DELETE and TRUNCATE fail). An operation that finds the server
// unreachable is retried for up to DefaultRetry; a commit whose outcome is
// unknown is never retried.
package postgres

import "net/url"

// redactURL is url without its password, for error messages and logs.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
