package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

func chain(legacy, n int) []core.AuditEntry {
	var es []core.AuditEntry
	prev := ""
	for i := range legacy + n {
		e := core.AuditEntry{ID: int64(i + 1), Time: time.UnixMicro(int64(i) * 1e6), Kind: core.AuditExecuted, Detail: strings.Repeat("x", i)}
		if i >= legacy {
			e.PrevHash, e.Hash = prev, e.ChainHash(prev)
			prev = e.Hash
		}
		es = append(es, e)
	}
	return es
}

func TestVerifyChain(t *testing.T) {
	if n, brk := core.VerifyChain(chain(2, 3)); brk != nil || n != 3 {
		t.Errorf("a chain after 2 legacy entries = %d, %+v; want 3 verified", n, brk)
	}
	for _, tt := range []struct {
		name   string
		change func([]core.AuditEntry) []core.AuditEntry
		id     int64
		why    string
	}{
		{"edited", func(es []core.AuditEntry) []core.AuditEntry { es[3].Detail = "nothing"; return es }, 4, "edited"},
		{"actor changed", func(es []core.AuditEntry) []core.AuditEntry { es[2].Actor.ID = "slack:U0EVE"; return es }, 3, "edited"},
		{"deleted", func(es []core.AuditEntry) []core.AuditEntry { return append(es[:3], es[4:]...) }, 5, "deleted"},
		{"unhashed inside", func(es []core.AuditEntry) []core.AuditEntry { es[3].Hash = ""; return es }, 4, "no hash"},
		{"out of order", func(es []core.AuditEntry) []core.AuditEntry { es[3], es[4] = es[4], es[3]; return es }, 5, "does not follow"},
		{"ids going back", func(es []core.AuditEntry) []core.AuditEntry { es[4].ID = 2; return es }, 2, "reordered"},
		{"time moved", func(es []core.AuditEntry) []core.AuditEntry { es[4].Time = es[4].Time.Add(time.Hour); return es }, 5, "edited"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, brk := core.VerifyChain(tt.change(chain(2, 3)))
			if brk == nil || brk.ID != tt.id || !strings.Contains(brk.Why, tt.why) {
				t.Errorf("break = %+v, want entry %d: %s", brk, tt.id, tt.why)
			}
		})
	}
}

// The hash is over an unambiguous encoding: moving text from one field to
// the next changes it.
func TestChainHashFieldsDoNotRunTogether(t *testing.T) {
	a := core.AuditEntry{Kind: "executed", Tool: "ab", Detail: "c"}
	b := core.AuditEntry{Kind: "executed", Tool: "a", Detail: "bc"}
	if a.ChainHash("") == b.ChainHash("") {
		t.Error("two entries differing only in where a field ends hash alike")
	}
}
