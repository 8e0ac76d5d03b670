package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) Fatal(...any)          { r.failed = true; panic(r) }
func (r *recorder) Helper()               {}

func check(t *testing.T, path string, got []byte) (failed bool) {
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
		failed = r.failed
	}()
	Check(r, path, got)
	return r.failed
}

// The file is compared as it is; a missing file fails (with the hint to
// run -update); -update writes it, directory included.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "golden", "card.json")
	if !check(t, path, []byte("x")) {
		t.Error("a missing golden file passed")
	}
	*update = true
	failed := check(t, path, []byte("card\n"))
	*update = false
	if b, err := os.ReadFile(path); failed || err != nil || string(b) != "card\n" {
		t.Fatalf("-update wrote %q, %v (failed %v)", b, err, failed)
	}
	if check(t, path, []byte("card\n")) {
		t.Error("the same bytes failed")
	}
	if !check(t, path, []byte("card!\n")) {
		t.Error("other bytes passed")
	}
}
