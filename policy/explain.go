package policy

import (
	"fmt"
	"io"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// ExplainCanSee prints who sees conversation key and why, one per line
// (opsgate policy explain --can-see).
func (p *Policy) ExplainCanSee(w io.Writer, key string) {
	if p.File() == "" {
		fmt.Fprintln(w, "policy:        none (no roles, no visibility rules)")
	} else {
		fmt.Fprintf(w, "policy:        %s\n", p.File())
	}
	fmt.Fprintf(w, "conversation:  %s\n", key)
	for _, s := range p.WhoCanSee(key) {
		fmt.Fprintf(w, "sees it:       %s: %s\n", s.Who, s.Why)
	}
	if !strings.HasPrefix(key, TerminalPrefix) {
		fmt.Fprintln(w, "sees it:       whoever took part in it: sent a message, voted, was eligible to decide one of its approvals, started it through the API")
	}
	fmt.Fprintln(w, "nobody else:   to anyone else it does not exist (404); an API token also needs the read scope")
}

// Explain prints the policy's verdict on c for a person to read (opsgate
// policy explain).
func (p *Policy) Explain(w io.Writer, c core.PolicyCall) {
	line := func(label, format string, a ...any) {
		fmt.Fprintf(w, "%-14s %s\n", label+":", fmt.Sprintf(format, a...))
	}
	if p.File() == "" {
		line("policy", "none (the requester or the platform's approvers decide)")
	} else {
		line("policy", "%s", p.File())
	}
	line("call", "%s %s %s (risk %s)", c.Server, c.Tool, c.Arguments, c.Risk)
	person := p.Person(c.Requester.ID)
	if person != c.Requester.ID {
		line("asked by", "%s (%s)", c.Requester.ID, person)
	} else {
		line("asked by", "%s", c.Requester.ID)
	}
	v := p.Classify(c)
	if v.Rule != "" {
		line("rule", "%s", v.Rule)
	} else {
		line("rule", "none matches (the defaults apply)")
	}
	switch v.Action {
	case core.ActionRead:
		line("action", "read: runs without approval")
		return
	case core.ActionDeny:
		line("action", "deny: never runs")
		line("model is told", "%s", v.Denial())
		return
	}
	line("action", "ask: runs once approved")
	if v.Reason != "" {
		line("reason", "%s", v.Reason)
	}
	line("may approve", "%s", v.Deciders(c.Requester, person))
	people := "people"
	if v.Quorum == 1 {
		people = "person"
	}
	line("quorum", "%d %s", v.Quorum, people)
	self := "off"
	if v.SelfApproval {
		self = "on"
	}
	line("self-approval", "%s", self)
	if len(v.Notify) > 0 {
		line("notify", "%s", strings.Join(v.Notify, ", "))
	}
}
