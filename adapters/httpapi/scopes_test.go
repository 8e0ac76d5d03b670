package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
)

func TestParseScopesAndExpiry(t *testing.T) {
	for in, want := range map[string]string{
		"read": "read", "write,read": "read,write", "read, approve,read": "read,approve", "admin,hook": "hook,admin",
	} {
		got, err := httpapi.ParseScopes(in)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("ParseScopes(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "read,", "root", "READ"} {
		if got, err := httpapi.ParseScopes(in); err == nil {
			t.Errorf("ParseScopes(%q) = %v, want an error", in, got)
		}
	}
	for in, want := range map[string]time.Duration{"2s": 2 * time.Second, "36h": 36 * time.Hour, "90d": 90 * 24 * time.Hour, "1d": 24 * time.Hour} {
		if d, expires, err := httpapi.ParseExpiry(in); err != nil || !expires || d != want {
			t.Errorf("ParseExpiry(%q) = %s, %t, %v; want %s", in, d, expires, err, want)
		}
	}
	if _, expires, err := httpapi.ParseExpiry("never"); err != nil || expires {
		t.Errorf("ParseExpiry(never) = %t, %v; want no expiry", expires, err)
	}
	for _, in := range []string{"", "0s", "-1h", "d", "0d", "1.5d", "forever", "90 d"} {
		if _, _, err := httpapi.ParseExpiry(in); err == nil {
			t.Errorf("ParseExpiry(%q): want an error", in)
		}
	}
}
