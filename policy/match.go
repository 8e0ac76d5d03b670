package policy

import (
	"slices"

	"github.com/opsgate/opsgate/core"
)

// matcher is a rule's compiled match; a nil or empty field matches
// anything.
type matcher struct {
	server, tool *glob
	args         []argMatch
	risks        []core.Risk
	who          map[string]bool // persons (identities no person claims are themselves)
}

// callContext is one call being classified; the arguments are decoded
// once, and only when a rule looks at them.
type callContext struct {
	call   *core.PolicyCall
	person string
	doc    any
	state  uint8 // 0 not decoded, 1 decoded, 2 not JSON
	// roots are the directories the call's server serves (Options.Roots),
	// looked up once the first string argument is matched.
	roots     func(server string) []string
	rootsSeen bool
	rootDirs  []string
	// seen are the spellings worked out so far, by value: every rule
	// about the same argument asks for them again.
	seen map[string][]string
}

// spellings are the forms of an argument value a rule's pattern is tried
// against (docs/design.md §17, "Rules cannot be sidestepped by spelling").
func (c *callContext) spellings(s string) []string {
	if !c.rootsSeen {
		c.rootsSeen = true
		if c.roots != nil {
			c.rootDirs = c.roots(c.call.Server)
		}
	}
	if f, ok := c.seen[s]; ok {
		return f
	}
	f := pathSpellings(s, c.rootDirs)
	if c.seen == nil {
		c.seen = map[string][]string{}
	}
	c.seen[s] = f
	return f
}

func (c *callContext) args() (any, bool) {
	if c.state == 0 {
		c.state = 1
		doc, err := parseArgs(c.call.Arguments)
		if err != nil {
			c.state = 2
		}
		c.doc = doc
	}
	return c.doc, c.state == 1
}

// riskOf is the risk rules see: anything unknown needs approval like a
// write, so rules about writes apply to it.
func riskOf(r core.Risk) core.Risk {
	if r == core.RiskRead || r == core.RiskDestructive {
		return r
	}
	return core.RiskWrite
}

func (m *matcher) matches(c *callContext) bool {
	if m.server != nil && !m.server.match(c.call.Server) {
		return false
	}
	if m.tool != nil && !m.tool.match(c.call.Tool) {
		return false
	}
	if m.risks != nil && !slices.Contains(m.risks, riskOf(c.call.Risk)) {
		return false
	}
	if m.who != nil && !m.who[c.person] {
		return false
	}
	if len(m.args) == 0 {
		return true
	}
	doc, ok := c.args()
	if !ok {
		// Arguments that are not JSON never run (the gate validates them
		// first); should they reach a policy, a rule about them applies
		// rather than being slipped past.
		return true
	}
	for i := range m.args {
		if !m.args[i].match(doc, c.spellings) {
			return false
		}
	}
	return true
}
