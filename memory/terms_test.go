package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/memory/docs"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"short", "payments-api 502", []string{"payments", "api", "502"}},
		{"filler and stop words", "hey so honestly, is anything wrote down about the checkout rollback?",
			[]string{"checkout", "rollback"}},
		{"case and dedupe", "Payments PAYMENTS payments-API", []string{"payments", "api"}},
		{"one-character tokens", "a b c k8s x", []string{"k8s"}},
		{"incident id", "what did we learn from INC-2142?", []string{"learn", "inc", "2142"}},
		{"punctuation only", "?!… --", nil},
		{"unicode letters", "Zähler für Überlastung", []string{"zähler", "für", "überlastung"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Terms(tc.text)); diff != "" {
				t.Errorf("Terms(%q) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// A question longer than MaxTerms keeps its numbers and compound names,
// in the question's order.
func TestTermsCapKeepsRareLookingWords(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "word%c%c ", 'a'+i%26, 'a'+i/26)
	}
	text := "checkout-api " + b.String() + " returns 502 "
	got := Terms(text)
	if len(got) != MaxTerms {
		t.Fatalf("len(Terms) = %d, want %d", len(got), MaxTerms)
	}
	if got[0] != "checkout" || got[1] != "api" || got[len(got)-1] != "502" {
		t.Errorf("Terms kept %v; want checkout, api first and 502 last", got)
	}
}

func TestChannelOf(t *testing.T) {
	for key, want := range map[string]string{
		"slack:T1:C1:1700000000.000100":              "slack:T1:C1",
		"slack:T1:C1":                                "slack:T1:C1",
		"telegram:42:-1001":                          "telegram:42:-1001",
		"telegram:42:-1001:3":                        "telegram:42:-1001",
		"discord:111:222":                            "discord:111:222",
		"discord:@me:333":                            "discord:@me:333",
		"terminal:alice@corp:20260102-150405-9f3a1c": "terminal:alice@corp",
		"terminal:dom:alice:x":                       "terminal:dom:alice",
		"api:svc-bot:c-17":                           "api:svc-bot",
		"api:svc-bot:c-17:x":                         "api:svc-bot",
		"schedule:nightly":                           "schedule:nightly",
		"weird":                                      "weird",
	} {
		if got := ChannelOf(key); got != want {
			t.Errorf("ChannelOf(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestVisible(t *testing.T) {
	got := Visible("slack:T1:C1:17.1", "alice")
	want := []docs.Scope{docs.WorkspaceScope, {Kind: docs.Channel, Key: "slack:T1:C1"},
		{Kind: docs.User, Key: "alice"}, {Kind: docs.Conversation, Key: "slack:T1:C1:17.1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Visible (-want +got):\n%s", diff)
	}
	if got := Visible("slack:T1:C1:17.1", ""); len(got) != 3 {
		t.Errorf("Visible without a person = %v, want no user scope", got)
	}
}

func TestStem(t *testing.T) {
	for w, want := range map[string]string{
		"restarting": "restart", "restarts": "restart", "restarted": "restart", "logged": "log", "logging": "log",
		"logs": "log", "pods": "pod", "redis": "redis", "status": "status", "504": "504", "pass": "pass", "dns": "dns", "evictions": "eviction",
	} {
		if got := stem(w); got != want {
			t.Errorf("stem(%q) = %q, want %q", w, got, want)
		}
	}
}
