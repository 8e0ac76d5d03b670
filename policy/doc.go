// Package policy implements core.Policy from a policy file (docs/design.md §11):
// people with their platform identities, roles, defaults, and ordered
// rules that deny a call or make it ask, with approvers, a quorum,
// self-approval and further places to notify. It also reads the file's
// redact and limits sections for the redactor and the run limiter.
//
// # What a policy can do
//
// A policy only tightens what the MCP annotations decide: it can deny a
// tool, make a read ask, choose who decides and require several people.
// There is no action that lets a non-read tool run without approval.
//
// # Who decides
//
// The approvers of the matching rule, else (for a schedule's run) the
// schedule's approvers, else the defaults' approvers; when none of these
// names anyone, the requester and the approvers configured for the
// conversation's platform decide, as without a policy file. Roles and
// people are resolved to persons when a call is classified, and the
// verdict is stored with the approval. With self_approval false the
// requester never counts; for a schedule's run it never applies.
//
// # Matching
//
// The first rule whose match holds decides. server and tool are globs
// ("*" crosses "/"), args map a top-level or dotted path in the arguments
// to a glob or "re:"+regexp (unanchored) matched against the value as
// text, any element of an array sufficing; risk and who list risks and
// the roles, people or identities who asked. Absent fields match anything.
//
// # Loading
//
// Load reads a file strictly (an unknown key is an error) into an
// immutable Policy; every problem is an *Error printed "FILE:LINE: key:
// what is wrong". A Holder keeps the current policy for the engine and
// keeps it when a reload fails.
package policy
