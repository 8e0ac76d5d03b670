package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// BenchmarkClassify200Rules classifies a call that 199 rules of every
// shape (globs, regexps, dotted argument paths, risk, who) fail to match
// before the last one does: the worst case of a long policy. docs/design.md §10
// budget: 50 µs per call.
func BenchmarkClassify200Rules(b *testing.B) {
	var src strings.Builder
	src.WriteString("people:\n")
	for i := range 20 {
		fmt.Fprintf(&src, "  p%d: {slack: U%d, telegram: %d}\n", i, i, 1000+i)
	}
	src.WriteString("roles:\n  sre: [p0, p1, p2]\n  dev: [p3, p4]\nrules:\n")
	for i := range 199 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&src, "  - {name: r%d, match: {server: \"srv%d*\", tool: \"*_delete\"}, action: deny}\n", i, i)
		case 1:
			fmt.Fprintf(&src, "  - {name: r%d, match: {args: {namespace: \"re:^team%d-(eu|us)$\"}}, action: ask, approvers: [sre]}\n", i, i)
		case 2:
			fmt.Fprintf(&src, "  - {name: r%d, match: {args: {spec.template.labels.app: \"app%d-*\"}}, action: ask, quorum: 2, approvers: [sre]}\n", i, i)
		case 3:
			fmt.Fprintf(&src, "  - {name: r%d, match: {tool: \"*secret%d*\", risk: [write]}, action: ask}\n", i, i)
		case 4:
			fmt.Fprintf(&src, "  - {name: r%d, match: {who: [dev], tool: \"t[0-9]%d?\"}, action: ask}\n", i, i)
		}
	}
	src.WriteString("  - {name: last, match: {server: k8s, args: {namespace: \"prod*\"}, risk: [write, destructive]}, action: ask, approvers: [sre], quorum: 2, self_approval: false}\n")
	p := mustParse(b, src.String(), Options{})
	if _, _, n := p.Counts(); n != 200 {
		b.Fatalf("%d rules", n)
	}
	c := call("k8s", "deployments_scale", core.RiskWrite, "slack:U3",
		`{"namespace":"prod-eu","name":"api","replicas":3,"spec":{"template":{"labels":{"app":"api"}}}}`)
	if v := p.Classify(c); v.Rule != "last" || v.Action != core.ActionAsk {
		b.Fatalf("verdict %+v", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Classify(c)
	}
}
