package preview_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/tools/preview"
)

func argsJSON(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 23, item 7: write_file over an existing file shows a unified diff
// of the file as it is against what would be written; Approve writes it.
// A new file shows "new file, N lines"; Deny leaves no file.
func TestFilesystemWriteFileCardShowsUnifiedDiff(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newStack(t, nil, filesystemServer(t, "fs", dir))

	conf := filepath.Join(dir, "pool.conf")
	before := "# payments pool\nname=payments\nsize=2\ntimeout=30s\nretries=3\n"
	after := "# payments pool\nname=payments\nsize=5\ntimeout=30s\nretries=3\n"
	if err := os.WriteFile(conf, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	root, card := s.ask("fs", "write_file", argsJSON(t, map[string]any{"path": conf, "content": after}), "The pool has 5 now.")
	card = s.waitCardText(card, "--- "+conf, "+++ "+conf, "-size=2", "+size=5", "1 line removed, 1 added")
	t.Logf("the card:\n%s", card.Plain())
	if n := len(s.fake.BotReplies(chOps, root)); n != 2 {
		t.Errorf("%d bot messages in the thread, want 2 (the run's status and the card): the preview is an edit of the card", n)
	}
	for _, noise := range []string{"-name=payments", "+name=payments", "-timeout", "+timeout"} {
		if strings.Contains(card.Plain(), noise) {
			t.Errorf("the diff shows an unchanged line as changed (%q):\n%s", noise, card.Plain())
		}
	}
	s.click(card, "approve")
	s.waitFinal(root, "The pool has 5 now.")
	if got, _ := os.ReadFile(conf); string(got) != after {
		t.Errorf("after approval the file is %q, want %q", got, after)
	}
	if n := len(s.audit(root, core.AuditExecuted)); n != 1 {
		t.Errorf("%d executed entries in the audit, want 1 (preview reads are not tool runs)", n)
	}
	if a := s.audit(root, core.AuditApproved); len(a) != 1 || !strings.Contains(a[0].Detail, "preview ") {
		t.Errorf("the approval's audit entry does not record the preview's hash: %+v", a)
	}

	fresh := filepath.Join(dir, "new.conf")
	root, card = s.ask("fs", "write_file", argsJSON(t, map[string]any{"path": fresh, "content": "a=1\nb=2\nc=3\n"}), "Not written.")
	card = s.waitCardText(card, "new file, 3 lines", "+b=2")
	s.click(card, "deny")
	s.waitFinal(root, "Not written.")
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a denied write_file created the file (stat: %v)", err)
	}
}

// Issue 23, item 9: a preview whose server hangs never holds the card: it
// is posted at once, saying the preview is being worked out, and after 5 s
// it says "no preview: timed out". The call can still be approved.
func TestPreviewOfHangingServerSaysTimedOut(t *testing.T) {
	recipes := map[string][]preview.Recipe{"pool": {{
		Tool: "set_size", Read: "get_size", Args: map[string]string{"pool": "pool"}, Field: "size", Value: "size",
	}}}
	s := newStack(t, recipes, hangServer(t, "pool"))
	root, card := s.ask("pool", "set_size", `{"pool":"blue","size":3}`, "Blue has 3.")
	if text := card.Plain(); strings.Contains(text, "no preview") || !strings.Contains(text, "Preview: working it out") {
		t.Errorf("the card's first post should wait for nothing and say the preview is coming:\n%s", text)
	}
	card = s.waitCardText(card, "no preview: timed out")
	s.click(card, "approve")
	s.waitFinal(root, "Blue has 3.")
	if n := len(s.audit(root, core.AuditExecuted)); n != 1 {
		t.Errorf("%d executed entries in the audit, want 1", n)
	}
}

// edit_file is previewed with the server's own dryRun diff, and move_file
// names where the file goes and whether something is there already;
// neither preview changes anything.
func TestFilesystemEditAndMoveCards(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := newStack(t, nil, filesystemServer(t, "fs", dir))
	conf := filepath.Join(dir, "pool.conf")
	before := "name=payments\nsize=2\n"
	if err := os.WriteFile(conf, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := argsJSON(t, map[string]any{"path": conf, "edits": []map[string]string{{"oldText": "size=2", "newText": "size=4"}}})
	root, card := s.ask("fs", "edit_file", edit, "Not edited.")
	card = s.waitCardText(card, "-size=2", "+size=4", "1 line removed, 1 added")
	s.click(card, "deny")
	s.waitFinal(root, "Not edited.")
	if got, _ := os.ReadFile(conf); string(got) != before {
		t.Errorf("the dry-run or a denied edit changed the file: %q", got)
	}

	taken := filepath.Join(dir, "taken.conf")
	if err := os.WriteFile(taken, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, card = s.ask("fs", "move_file", argsJSON(t, map[string]any{"source": conf, "destination": taken}), "Not moved.")
	s.waitCardText(card, conf+" → "+taken, "the destination exists")
	s.click(card, "deny")
	s.waitFinal(root, "Not moved.")
	free := filepath.Join(dir, "free.conf")
	root, card = s.ask("fs", "move_file", argsJSON(t, map[string]any{"source": conf, "destination": free}), "Not moved either.")
	s.waitCardText(card, conf+" → "+free, "the destination does not exist")
	s.click(card, "deny")
	s.waitFinal(root, "Not moved either.")
}

// A server opsgate does not know gets its preview from a recipe: the read
// tool's field as it is and as the call would set it.
func TestRecipePreviewShowsTheField(t *testing.T) {
	recipes := map[string][]preview.Recipe{"pool": {{
		Tool: "set_size", Read: "get_pool", Args: map[string]string{"pool": "pool"}, Field: "spec.size", Value: "size",
	}}}
	s := newStack(t, recipes, hangServer(t, "pool"))
	root, card := s.ask("pool", "set_size", `{"pool":"blue","size":3}`, "Left alone.")
	card = s.waitCardText(card, "spec.size: 2 → 3", "-spec.size: 2", "+spec.size: 3")
	s.click(card, "deny")
	s.waitFinal(root, "Left alone.")
}
