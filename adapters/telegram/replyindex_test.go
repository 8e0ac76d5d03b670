package telegram

import "testing"

// The reply index starts empty (issue 25: allocated whole, its ring was
// 160 KB at every start) and, once full, forgets the oldest reply first.
func TestReplyIndexGrowsThenForgetsTheOldest(t *testing.T) {
	r := newReplyIndex()
	if cap(r.ring) != 0 {
		t.Fatalf("a new index holds a ring of %d; want none until a reply is posted", cap(r.ring))
	}
	for i := range maxReplyIndex + 2 {
		r.put(7, i, "incident:k")
	}
	if got := r.get(7, 0); got != "" {
		t.Errorf("reply 0 is still known (%q) after %d newer ones", got, maxReplyIndex+1)
	}
	if got := r.get(7, 1); got != "" {
		t.Errorf("reply 1 is still known (%q) after %d newer ones", got, maxReplyIndex)
	}
	for _, i := range []int{2, maxReplyIndex + 1} {
		if got := r.get(7, i); got != "incident:k" {
			t.Errorf("reply %d: got %q, want incident:k", i, got)
		}
	}
	if len(r.m) != maxReplyIndex || len(r.ring) != maxReplyIndex {
		t.Errorf("index holds %d replies in a ring of %d; want %d", len(r.m), len(r.ring), maxReplyIndex)
	}
}
