package policy

import "strings"

// Unreachable names the asks (the defaults, and each ask rule by name)
// whose approvers cannot click anywhere opsgate listens: none of their
// persons has an identity on an enabled platform (platforms: "slack",
// "telegram", "discord", "terminal"). Such a request can only expire.
// Asks that name no approvers fall back to the requester and the
// platform's approvers, so they are reachable while self-approval is on.
func (p *Policy) Unreachable(platforms []string) []string {
	on := map[string]bool{}
	for _, pl := range platforms {
		on[pl] = true
	}
	reachable := func(spec askSpec) bool {
		if len(spec.approvers) == 0 {
			return spec.self || p.anyPlatformApprover(on)
		}
		for _, person := range spec.eligible {
			if p.reaches(person, on) {
				return true
			}
		}
		return false
	}
	var out []string
	if !reachable(p.defaults) {
		out = append(out, "defaults")
	}
	for _, r := range p.rules {
		if !r.deny && r.own && !reachable(r.spec) {
			out = append(out, "rule "+r.name)
		}
	}
	return out
}

// reaches reports whether person (or an identity used as a person) has an
// identity on an enabled platform.
func (p *Policy) reaches(person string, on map[string]bool) bool {
	ids := []string{person}
	for id, who := range p.identities {
		if who == person {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if platform, _, ok := strings.Cut(id, ":"); ok && on[platform] {
			return true
		}
	}
	return false
}

func (p *Policy) anyPlatformApprover(on map[string]bool) bool {
	for platform, ids := range p.opts.PlatformApprovers {
		if on[platform] && len(ids) > 0 {
			return true
		}
	}
	return false
}
