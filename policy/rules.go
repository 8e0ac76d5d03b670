package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/opsgate/opsgate/core"
	"gopkg.in/yaml.v3"
)

var (
	defaultKeys = []string{"approvers", "self_approval", "quorum"}
	ruleKeys    = []string{"name", "match", "action", "reason", "approvers", "quorum", "self_approval", "notify"}
	matchKeys   = []string{"server", "tool", "args", "risk", "who"}
	askOnlyKeys = []string{"approvers", "quorum", "self_approval", "notify"}
)

// spec reads the approvers, self_approval and quorum keys of defaults or
// of a rule into s. nodes are the keys' values.
func (b *builder) spec(s *askSpec, nodes map[string]*yaml.Node, key string) error {
	if n := nodes["approvers"]; n != nil {
		names, persons, err := b.persons(n, join(key, "approvers"))
		if err != nil {
			return err
		}
		s.approvers, s.eligible = names, persons
	}
	if n := nodes["self_approval"]; n != nil {
		var err error
		if s.self, err = b.r.boolean(n, join(key, "self_approval")); err != nil {
			return err
		}
	}
	if n := nodes["quorum"]; n != nil {
		var err error
		if s.quorum, err = b.r.integer(n, join(key, "quorum"), 1); err != nil {
			return err
		}
	}
	return nil
}

// checkQuorum refuses a quorum that the named approvers can never reach.
// The requester may be among them and not count (self_approval: false);
// that is known only per call, and such a call is denied then (AskVerdict).
func (b *builder) checkQuorum(s askSpec, at *yaml.Node, key string) error {
	if len(s.approvers) == 0 || len(s.eligible) >= s.quorum {
		return nil
	}
	people := fmt.Sprintf("the %d people who may", len(s.eligible))
	if len(s.eligible) == 1 {
		people = "the 1 person who may"
	}
	return b.r.errf(at, key, "quorum %d is larger than %s approve (%s)", s.quorum, people, strings.Join(s.eligible, ", "))
}

// fieldNodes collects a mapping's known keys' values (null ones left out).
func (b *builder) fieldNodes(n *yaml.Node, key string, known []string) (map[string]*yaml.Node, error) {
	nodes := map[string]*yaml.Node{}
	err := b.r.fields(n, key, known, func(name string, v *yaml.Node, _ string) error {
		nodes[name] = v
		return nil
	})
	return nodes, err
}

// quorumNode is where a quorum problem is reported: the quorum if set
// here, else the approvers, else fallback.
func quorumNode(nodes map[string]*yaml.Node, key string, fallback *yaml.Node) (*yaml.Node, string) {
	for _, k := range []string{"quorum", "approvers"} {
		if n := nodes[k]; n != nil {
			return n, join(key, k)
		}
	}
	return fallback, key
}

func (b *builder) defaultSection(n *yaml.Node) error {
	nodes, err := b.fieldNodes(n, "defaults", defaultKeys)
	if err != nil {
		return err
	}
	if err := b.spec(&b.p.defaults, nodes, "defaults"); err != nil {
		return err
	}
	at, key := quorumNode(nodes, "defaults", n)
	return b.checkQuorum(b.p.defaults, at, key)
}

func (b *builder) ruleSection(n *yaml.Node) error {
	items, err := b.r.list(n, "rules")
	if err != nil {
		return err
	}
	for i, item := range items {
		r, err := b.rule(item, fmt.Sprintf("rules[%d]", i))
		if err != nil {
			return err
		}
		b.p.rules = append(b.p.rules, r)
	}
	return nil
}

func (b *builder) rule(n *yaml.Node, key string) (*rule, error) {
	nodes, err := b.fieldNodes(n, key, ruleKeys)
	if err != nil {
		return nil, err
	}
	r := &rule{spec: b.p.defaults}
	nameNode := nodes["name"]
	if nameNode == nil {
		return nil, b.r.errf(n, join(key, "name"), "missing: every rule needs a name")
	}
	if r.name, err = b.r.name(nameNode, join(key, "name")); err != nil {
		return nil, err
	}
	if err := b.checkName(nameNode, join(key, "name")); err != nil {
		return nil, err
	}
	if line, ok := b.ruleLine[r.name]; ok {
		return nil, b.r.errf(nameNode, join(key, "name"), "rule %q is already defined on line %d", r.name, line)
	}
	b.ruleLine[r.name] = nameNode.Line

	actionNode := nodes["action"]
	if actionNode == nil {
		return nil, b.r.errf(n, join(key, "action"), "missing: want deny or ask")
	}
	action, err := b.r.name(actionNode, join(key, "action"))
	if err != nil {
		return nil, err
	}
	switch core.Action(action) {
	case core.ActionDeny:
		r.deny = true
		for _, k := range askOnlyKeys {
			if nodes[k] != nil {
				return nil, b.r.errf(nodes[k], join(key, k), "only an ask rule has %s (this rule denies)", k)
			}
		}
	case core.ActionAsk:
	default:
		return nil, b.r.errf(actionNode, join(key, "action"), "must be deny or ask (got %q); no rule can let a tool run without approval", action)
	}
	if n := nodes["reason"]; n != nil {
		if r.reason, err = b.r.str(n, join(key, "reason")); err != nil {
			return nil, err
		}
	}
	if n := nodes["match"]; n != nil {
		if r.match, err = b.matcher(n, join(key, "match")); err != nil {
			return nil, err
		}
	}
	if err := b.spec(&r.spec, nodes, key); err != nil {
		return nil, err
	}
	r.own = nodes["approvers"] != nil && len(r.spec.approvers) > 0
	at, qkey := quorumNode(nodes, key, nameNode)
	if err := b.checkQuorum(r.spec, at, qkey); err != nil {
		return nil, err
	}
	if n := nodes["notify"]; n != nil {
		if r.notify, err = b.notify(n, join(key, "notify")); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// notify resolves notify targets to chat places: "telegram:12345678" as
// written, a person to their chat identities, a role to its members'.
func (b *builder) notify(n *yaml.Node, key string) ([]string, error) {
	items, err := b.r.list(n, key)
	if err != nil {
		return nil, err
	}
	var out []string
	add := func(ids ...string) {
		for _, id := range ids {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	for i, item := range items {
		sub := fmt.Sprintf("%s[%d]", key, i)
		name, err := b.r.name(item, sub)
		if err != nil {
			return nil, err
		}
		if strings.Contains(name, ":") {
			if msg := checkIdentity(name, chatPlatforms); msg != "" {
				return nil, b.r.errf(item, sub, "%s", msg)
			}
			add(name)
			continue
		}
		persons, msg := b.resolve(name)
		if msg != "" {
			return nil, b.r.errf(item, sub, "%s", msg)
		}
		before := len(out)
		for _, p := range persons {
			add(b.p.chats[p]...)
		}
		if len(out) == before {
			return nil, b.r.errf(item, sub, "%q has no slack, telegram or discord identity to notify", name)
		}
	}
	return out, nil
}

func (b *builder) matcher(n *yaml.Node, key string) (matcher, error) {
	var m matcher
	err := b.r.fields(n, key, matchKeys, func(name string, v *yaml.Node, sub string) error {
		switch name {
		case "server", "tool":
			s, err := b.r.str(v, sub)
			if err != nil {
				return err
			}
			g, err := compileGlob(s)
			if err != nil {
				return b.r.errf(v, sub, "bad glob %q: %v", s, err)
			}
			if name == "server" {
				m.server = g
			} else {
				m.tool = g
			}
		case "args":
			return b.r.pairs(v, sub, func(k, val *yaml.Node, argKey string) error {
				a, err := b.argMatch(k, val, argKey)
				m.args = append(m.args, a)
				return err
			})
		case "risk":
			items, err := b.r.list(v, sub)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				return b.r.errf(v, sub, "an empty list matches nothing (leave the key out to match any risk)")
			}
			m.risks = []core.Risk{}
			for i, item := range items {
				s, err := b.r.name(item, fmt.Sprintf("%s[%d]", sub, i))
				if err != nil {
					return err
				}
				risk := core.Risk(s)
				if risk != core.RiskRead && risk != core.RiskWrite && risk != core.RiskDestructive {
					return b.r.errf(item, fmt.Sprintf("%s[%d]", sub, i), "unknown risk %q: want read, write or destructive", s)
				}
				m.risks = append(m.risks, risk)
			}
		case "who":
			_, persons, err := b.persons(v, sub)
			if err != nil {
				return err
			}
			if len(persons) == 0 {
				return b.r.errf(v, sub, "an empty list matches nobody (leave the key out to match anyone)")
			}
			m.who = map[string]bool{}
			for _, p := range persons {
				m.who[p] = true
			}
		}
		return nil
	})
	return m, err
}

// argMatch reads one entry of match.args: a path and a glob or "re:"
// pattern. A number or true/false is matched as its text.
func (b *builder) argMatch(k, v *yaml.Node, key string) (argMatch, error) {
	path := k.Value
	if path == "" || slices.Contains(strings.Split(path, "."), "") {
		return argMatch{}, b.r.errf(k, key, "bad argument path %q: want a key or keys joined by dots", path)
	}
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return argMatch{}, b.r.errf(v, key, "must be a glob or re:<regexp> (got %s)", kindName(v))
	}
	pat, err := compilePattern(v.Value)
	if err != nil {
		what := "glob"
		if strings.HasPrefix(v.Value, "re:") {
			what = "regex"
		}
		return argMatch{}, b.r.errf(v, key, "bad %s %q: %v", what, v.Value, err)
	}
	b.warnSidestep(path, v.Value, key, v.Line)
	return newArgMatch(path, pat), nil
}
