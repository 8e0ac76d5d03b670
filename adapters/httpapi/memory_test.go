package httpapi_test

import (
	"bytes"
	"testing"
)

// Memory search over the workspace's documents, on the SQLite store's
// full-text index; without memory it is 503, without q 400.
func TestAPIMemorySearch(t *testing.T) {
	r := newRig(t, withMemory(t))
	status, raw := r.do(r.tokens["bob"], "GET", "/api/v1/memory/search?q=payments+rollback", nil)
	if status != 200 || !bytes.Contains(raw, []byte(`"path":"payments-rollback.md"`)) {
		t.Errorf("memory search = %d %s, want the runbook", status, raw)
	}
	for _, want := range []string{`"scope":"workspace"`, `"trust":"`, `"version":1`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("memory search = %s, want %s in it", raw, want)
		}
	}
	if status, raw := r.do(r.tokens["bob"], "GET", "/api/v1/memory/search", nil); status != 400 {
		t.Errorf("memory search without q = %d %s, want 400", status, raw)
	}
	bare := newRig(t)
	if status, raw := bare.do(bare.tokens["bob"], "GET", "/api/v1/memory/search?q=x", nil); status != 503 {
		t.Errorf("memory search without memory = %d %s, want 503", status, raw)
	}
}
