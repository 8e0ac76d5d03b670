package policy

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Visibility (docs/design.md §17): who may see which conversation. A person sees
// what they took part in (the store knows; the caller says), every
// conversation when they hold role admin, and what a visibility rule
// grants them. A terminal conversation ("terminal:<user>:…") is seen only
// by its own person and admins: no rule grants it, taking part does not.

// TerminalPrefix starts the keys of terminal conversations.
const TerminalPrefix = "terminal:"

// visRule is one entry of the visibility section.
type visRule struct {
	who      []string // roles and people as written
	persons  []string // who, resolved
	patterns []string // conversation globs as written
	globs    []*glob
}

func (b *builder) visibilitySection(n *yaml.Node) error {
	items, err := b.r.list(n, "visibility")
	if err != nil {
		return err
	}
	for i, item := range items {
		key := fmt.Sprintf("visibility[%d]", i)
		var vr visRule
		err := b.r.fields(item, key, []string{"roles", "people", "conversations"}, func(name string, v *yaml.Node, sub string) error {
			if name != "conversations" {
				names, persons, err := b.persons(v, sub)
				vr.who = append(vr.who, names...)
				for _, p := range persons {
					if !slices.Contains(vr.persons, p) {
						vr.persons = append(vr.persons, p)
					}
				}
				return err
			}
			pats, err := b.r.list(v, sub)
			if err != nil {
				return err
			}
			for j, pn := range pats {
				psub := fmt.Sprintf("%s[%d]", sub, j)
				pat, err := b.r.name(pn, psub)
				if err != nil {
					return err
				}
				if strings.HasPrefix(pat, TerminalPrefix) {
					return b.r.errf(pn, psub, "terminal conversations are seen only by their own person and admins; no visibility rule grants them")
				}
				g, err := compileGlob(pat)
				if err != nil {
					return b.r.errf(pn, psub, "%v", err)
				}
				vr.patterns, vr.globs = append(vr.patterns, pat), append(vr.globs, g)
			}
			return nil
		})
		if err != nil {
			return err
		}
		switch {
		case len(vr.who) == 0:
			return b.r.errf(item, key, "names no roles or people: add roles: [...] or people: [...]")
		case len(vr.globs) == 0:
			return b.r.errf(item, key, "names no conversations: add conversations: [\"slack:T0ACME:C0OPS*\", ...]")
		}
		b.p.visibility = append(b.p.visibility, vr)
	}
	return nil
}

// Identities returns every identity of identity's person, identity first;
// an identity the file does not know is its own person and has no other.
func (p *Policy) Identities(identity string) []string {
	out := []string{identity}
	person := p.Person(identity)
	for id, who := range p.identities {
		if who == person && id != identity {
			out = append(out, id)
		}
	}
	slices.Sort(out[1:])
	return out
}

// IsAdmin reports whether identity's person holds role admin.
func (p *Policy) IsAdmin(identity string) bool { return p.InRole(identity, "admin") }

// CanSee reports whether identity's person may see conversation key,
// tookPart saying whether they took part in it (sent a message, voted,
// were eligible to decide one of its approvals, started it).
func (p *Policy) CanSee(identity, key string, tookPart bool) bool {
	if p.IsAdmin(identity) {
		return true
	}
	if owner, ok := terminalOwner(key); ok {
		return p.Person(owner) == p.Person(identity)
	}
	return tookPart || p.granted(p.Person(identity), key) != nil
}

// granted returns the first visibility rule that lets person see key.
func (p *Policy) granted(person, key string) *visRule {
	for i := range p.visibility {
		r := &p.visibility[i]
		if !slices.Contains(r.persons, person) {
			continue
		}
		for _, g := range r.globs {
			if g.match(key) {
				return r
			}
		}
	}
	return nil
}

// terminalOwner is the identity ("terminal:alice") whose terminal
// conversation key is ("terminal:alice:20250314-…").
func terminalOwner(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, TerminalPrefix)
	if !ok {
		return "", false
	}
	user, _, _ := strings.Cut(rest, ":")
	return TerminalPrefix + user, true
}

// Seer is one answer of WhoCanSee: who (a role, a person or an identity)
// and why.
type Seer struct {
	Who string
	Why string
}

// WhoCanSee lists who may see conversation key by the policy alone: the
// admins, the terminal's own person, those a visibility rule grants it.
// Anyone who took part in it sees it too (except a terminal's), which
// only the store knows.
func (p *Policy) WhoCanSee(key string) []Seer {
	var out []Seer
	if len(p.roles["admin"]) > 0 {
		out = append(out, Seer{Who: "role admin (" + strings.Join(p.roles["admin"], ", ") + ")", Why: "admins see every conversation"})
	}
	if owner, ok := terminalOwner(key); ok {
		return append(out, Seer{Who: p.Person(owner), Why: "its own terminal conversation (" + owner + "); terminal conversations are seen by no one else"})
	}
	for i, r := range p.visibility {
		for j, g := range r.globs {
			if g.match(key) {
				out = append(out, Seer{Who: strings.Join(r.who, ", ") + " (" + strings.Join(r.persons, ", ") + ")",
					Why: fmt.Sprintf("visibility[%d] grants %q", i, r.patterns[j])})
				break
			}
		}
	}
	return out
}

// The Holder answers with the policy in force.

// Identities is Policy.Identities of the current policy.
func (h *Holder) Identities(identity string) []string { return h.Policy().Identities(identity) }

// InRole is Policy.InRole of the current policy.
func (h *Holder) InRole(identity, role string) bool { return h.Policy().InRole(identity, role) }

// CanSee is Policy.CanSee of the current policy.
func (h *Holder) CanSee(identity, key string, tookPart bool) bool {
	return h.Policy().CanSee(identity, key, tookPart)
}
