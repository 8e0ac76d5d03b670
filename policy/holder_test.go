package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
)

// TestHolderReloadKeepsPolicyOnBadFile is the SIGHUP half of issue 10,
// acceptance 9: a reload that fails keeps the policy in force and says
// why; a good reload takes effect for the next call.
func TestHolderReloadKeepsPolicyOnBadFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("rules:\n  - {name: no-deletes, match: {tool: \"*_delete\"}, action: deny}\n")
	opts := Options{PlatformApprovers: map[string][]string{"slack": {"slack:U0BOB"}}}
	h := NewHolder(mustLoad(t, file, opts))
	del := call("k8s", "pods_delete", core.RiskWrite, "slack:U0ALICE", `{}`)
	if v := h.Classify(del); v.Action != core.ActionDeny {
		t.Fatalf("before: %+v", v)
	}

	write("rules:\n  - {name: no-deletes, match: {tool: \"[\"}, action: deny}\n")
	kept, err := h.Reload(file)
	if err == nil || !strings.HasPrefix(err.Error(), file+":2: rules[0].match.tool: bad glob") {
		t.Fatalf("Reload of a bad file: %v", err)
	}
	if kept != h.Policy() {
		t.Errorf("Reload did not return the policy it kept")
	}
	if v := h.Classify(del); v.Action != core.ActionDeny || v.Rule != "no-deletes" {
		t.Errorf("after a failed reload: %+v, want the old deny", v)
	}
	if _, err := h.Reload(filepath.Join(t.TempDir(), "gone.yaml")); err == nil || h.Classify(del).Action != core.ActionDeny {
		t.Errorf("a missing file replaced the policy (err %v)", err)
	}

	write("people: {bob: {slack: U0BOB, telegram: 1}}\n")
	if _, err := h.Reload(file); err != nil {
		t.Fatal(err)
	}
	v := h.Classify(del)
	if v.Action != core.ActionAsk || v.Rule != "" {
		t.Errorf("after a good reload: %+v, want the defaults' ask", v)
	}
	// The options (the platform's approvers) survive the reload, and the
	// new people fold identities.
	a := proposed(h, del)
	if !h.MayDecide(a, core.Actor{ID: "telegram:1"}).Allowed || h.Person("telegram:1") != "bob" {
		t.Errorf("after a reload the platform approver bob may not decide")
	}
}
