package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunQuick runs the engine's figures (1, 6, 7, 8) at smoke-test sizes:
// it checks that each produces its rows and that the report prints and
// round-trips as JSON. It asserts nothing about the numbers; the report's
// verdicts are the benchmarks' business. The chat figures have their own
// smoke tests (figures_test.go).
func TestRunQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every figure; skipped with -short")
	}
	var log bytes.Buffer
	r := Run(context.Background(), Options{Quick: true, Only: []string{"1", "6", "7", "8"}}, &log)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v\nlog:\n%s", r.Errors, log.String())
	}
	want := map[string]int{"1.": 5, "6.": 2, "7.": 2, "8.": 1}
	got := map[string]int{}
	for _, row := range r.Rows {
		got[row.Figure[:2]]++
		if row.Measured == "" || row.Target == "" || (row.Result != Pass && row.Result != Miss && row.Result != Info) {
			t.Errorf("incomplete row %+v", row)
		}
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("figure %s: %d rows, want %d", k, got[k], n)
		}
	}
	var out bytes.Buffer
	r.Print(&out)
	if !strings.Contains(out.String(), "FIGURE") || !strings.Contains(out.String(), r.CPU) {
		t.Errorf("table:\n%s", out.String())
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Rows) != len(r.Rows) {
		t.Errorf("JSON round trip: %d rows, %v", len(back.Rows), err)
	}
}

// TestSidesDoTheSameWork checks that figure 1 compares like with like: on
// both sides the conversation makes three model calls, the third carrying
// the tool's real output.
func TestSidesDoTheSameWork(t *testing.T) {
	ctx := context.Background()
	p, err := newPair(ctx, "", "", Rate{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	for name, side := range map[string]func(context.Context) error{"engine": p.engine, "direct": p.direct} {
		from := len(p.s.llm.Requests())
		if err := side(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reqs := p.s.llm.Requests()[from:]
		if len(reqs) != turnsPerConv {
			t.Fatalf("%s: %d model calls, want %d", name, len(reqs), turnsPerConv)
		}
		last := reqs[2].Messages[len(reqs[2].Messages)-1]
		if last.Role != "tool" || !strings.Contains(last.Content, "CrashLoopBackOff") {
			t.Errorf("%s: third call ends with %+v, want the tool's output", name, last)
		}
		if len(reqs[0].Tools) == 0 {
			t.Errorf("%s: no tools offered", name)
		}
	}
}

// TestMergeFile checks that -merge keeps the other figures' rows of the
// previous report and replaces the ones measured again, in figure order.
func TestMergeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	old := &Report{Rows: []Row{{Figure: "2. a"}, {Figure: "10. b"}, {Figure: "11. old"}, {Figure: "11. older"}}}
	if err := old.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	r := &Report{Rows: []Row{{Figure: "11. new"}, {Figure: "3. c"}}}
	if err := r.MergeFile(path); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range r.Rows {
		got = append(got, row.Figure)
	}
	if want := "2. a|3. c|10. b|11. new"; strings.Join(got, "|") != want {
		t.Errorf("merged rows %q, want %q", strings.Join(got, "|"), want)
	}
	if err := r.MergeFile(filepath.Join(t.TempDir(), "none.json")); err != nil {
		t.Errorf("no previous report: %v", err)
	}
}
