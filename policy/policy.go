package policy

import (
	"regexp"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// Policy is a loaded policy file: an immutable core.Policy, safe for
// concurrent use. Reloading makes a new one (see Holder).
type Policy struct {
	file string
	opts Options
	// base is the behaviour without a file, and the fallback approvers
	// (the platform's, a schedule's) of a file that names none.
	base    core.DefaultPolicy
	hasFile bool

	people     []string            // in file order
	identities map[string]string   // identity -> person
	chats      map[string][]string // person -> identities that can receive a card
	roles      map[string][]string // role -> people
	roleNames  []string

	defaults askSpec
	rules    []*rule
	// schedules are the schedules' approvers as configured (for display);
	// base.Schedules holds them resolved to persons.
	schedules map[string][]string

	redact    Redact
	perMinute int
	// warnings are what policy check warns about (Warnings).
	warnings []string
	// visibility are the visibility rules (visibility.go).
	visibility []visRule
}

var _ core.Policy = (*Policy)(nil)

// Options is what a policy needs from the rest of the configuration.
type Options struct {
	// PlatformApprovers maps a platform ("slack", "telegram", "discord")
	// to identities ("slack:U0BOB"): the adapters' approvers keys.
	PlatformApprovers map[string][]string
	// ScheduleApprovers maps a schedule's name to its approvers: roles,
	// people or identities (only identities without a policy file).
	ScheduleApprovers map[string][]string
	// Place names the approver group (a key of ScheduleApprovers) and the
	// platform of a conversation whose key says neither (an incident's,
	// docs/design.md §19); see core.DefaultPolicy.Place. Called during
	// Classify, perhaps concurrently.
	Place func(convKey string) (group, platform string)
	// Roots returns the directories a tool server serves (the filesystem
	// server's list_allowed_directories, or roots: on its entry in
	// tools.servers), as absolute paths; nil when unknown. A path argument
	// inside one is also matched relative to it. Called during Classify,
	// perhaps concurrently: the directories may be learnt after start.
	Roots func(server string) []string
}

// Redact is the redact section, for the redactor.
type Redact struct {
	// Patterns are added to the built-in detectors.
	Patterns []*regexp.Regexp
	// ModelInput also redacts tool results before the model sees them.
	ModelInput bool
}

// askSpec is who decides an ask and how many must agree.
type askSpec struct {
	approvers []string // as written: roles, people, identities
	eligible  []string // approvers resolved to persons
	quorum    int
	self      bool
}

// rule is one compiled entry of rules.
type rule struct {
	name   string
	deny   bool
	reason string
	match  matcher
	// own is set when the rule names approvers itself; spec holds the
	// defaults merged with what the rule sets.
	own    bool
	spec   askSpec
	notify []string
}

// File is the policy file's name, empty without one.
func (p *Policy) File() string { return p.file }

// Counts are the numbers "opsgate policy check" reports.
func (p *Policy) Counts() (people, roles, rules int) {
	return len(p.people), len(p.roleNames), len(p.rules)
}

// Redact is the redact section (ModelInput defaults to true).
func (p *Policy) Redact() Redact { return p.redact }

// RunsPerPersonPerMinute is limits.runs_per_person_per_minute; 0 means
// no limit. See Limiter.
func (p *Policy) RunsPerPersonPerMinute() int { return p.perMinute }

// Person implements core.Policy.
func (p *Policy) Person(identity string) string {
	if person, ok := p.identities[identity]; ok {
		return person
	}
	return identity
}

// InRole reports whether the identity's person has the role (admin
// promotes memory). Without a policy file there are no roles.
func (p *Policy) InRole(identity, role string) bool {
	person := p.Person(identity)
	for _, m := range p.roles[role] {
		if m == person {
			return true
		}
	}
	return false
}

// Admins implements core.Admins: who may decide proposals such as a
// memory promotion (docs/design.md §14) — the persons of role admin; without a
// policy file, or with no admin role, the platform's approvers as without
// one.
func (p *Policy) Admins(convKey string) []string {
	if admins := p.roles["admin"]; p.hasFile && len(admins) > 0 {
		return append([]string(nil), admins...)
	}
	var out []string
	for _, id := range p.base.Admins(convKey) {
		out = append(out, p.Person(id))
	}
	return out
}

// Classify implements core.Policy: the first matching rule decides; a
// call no rule matches runs when it is a read and asks otherwise, with the
// defaults. An ask rule makes even a read ask; nothing makes a non-read run.
func (p *Policy) Classify(c core.PolicyCall) core.Verdict {
	if !p.hasFile {
		return p.base.Classify(c)
	}
	call := callContext{call: &c, person: p.Person(c.Requester.ID), roots: p.opts.Roots}
	for _, r := range p.rules {
		if !r.match.matches(&call) {
			continue
		}
		if r.deny {
			return core.Verdict{Action: core.ActionDeny, Rule: r.name, Reason: r.reason}
		}
		return p.ask(r, c, call.person)
	}
	if !c.Risk.NeedsApproval() {
		return core.Verdict{Action: core.ActionRead}
	}
	return p.ask(nil, c, call.person)
}

// ask is the verdict of a call that needs approval under rule r (nil: the
// defaults). Who decides: the rule's approvers, else a schedule's for its
// runs, else the defaults' approvers, else (none configured) the
// requester and the platform's approvers, as without a policy file.
func (p *Policy) ask(r *rule, c core.PolicyCall, requester string) core.Verdict {
	spec, v := p.defaults, core.Verdict{}
	if r != nil {
		spec = r.spec
		v.Rule, v.Reason, v.Notify = r.name, r.reason, r.notify
	}
	v.Quorum, v.SelfApproval = spec.quorum, spec.self
	names, eligible := spec.approvers, spec.eligible
	if name, ok := strings.CutPrefix(c.Requester.ID, "schedule:"); ok && (r == nil || !r.own) && len(p.schedules[name]) > 0 {
		names, eligible = p.schedules[name], p.base.Schedules[name]
	} else if p.opts.Place != nil && (r == nil || !r.own) {
		if group, _ := p.opts.Place(c.ConvKey); group != "" && len(p.schedules[group]) > 0 {
			names, eligible = p.schedules[group], p.base.Schedules[group]
		}
	}
	v.Approvers = names
	if len(names) == 0 {
		eligible = []string{requester}
		for _, id := range p.base.Fallback(c) {
			eligible = append(eligible, p.Person(id))
		}
	}
	return core.AskVerdict(v, eligible, requester)
}

// MayDecide implements core.Policy against the verdict stored with the
// approval; one stored without a verdict is classified now.
func (p *Policy) MayDecide(a core.Approval, who core.Actor) core.Eligibility {
	v := a.Verdict
	if v.Action == "" {
		v = p.Classify(a.PolicyCall())
	}
	return v.Decide(a.Requester, p.Person(a.Requester.ID), p.Person(who.ID))
}
