package terminal

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLineReader(t *testing.T) {
	const max = 100
	long := strings.Repeat("x", 3*max) // longer than the limit and than one read
	exact := strings.Repeat("y", max)
	in := "short\r\n" + long + "\n" + "after\n\n" + exact + "\r\n" + exact + "z\n" + "last"
	type line struct {
		text    string
		tooLong bool
	}
	want := []line{{"short", false}, {"", true}, {"after", false}, {"", false}, {exact, false}, {"", true}, {"last", false}}
	for name, r := range map[string]io.Reader{
		"whole":          strings.NewReader(in),
		"byte by byte":   iotest.OneByteReader(strings.NewReader(in)),
		"small buffered": iotest.HalfReader(strings.NewReader(in)),
	} {
		t.Run(name, func(t *testing.T) {
			lr := newLineReader(r, max)
			for i, w := range want {
				text, tooLong, err := lr.next()
				if err != nil || text != w.text || tooLong != w.tooLong {
					t.Fatalf("line %d = %q, tooLong %v, err %v; want %q, %v", i, text, tooLong, err, w.text, w.tooLong)
				}
			}
			if _, _, err := lr.next(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last line: err = %v, want EOF", err)
			}
		})
	}
}

func TestLineReaderReportsReadErrors(t *testing.T) {
	boom := errors.New("boom")
	lr := newLineReader(io.MultiReader(strings.NewReader("one\ntw"), iotest.ErrReader(boom)), 100)
	if text, _, err := lr.next(); text != "one" || err != nil {
		t.Fatalf("first line = %q, %v", text, err)
	}
	if _, _, err := lr.next(); !errors.Is(err, boom) {
		t.Fatalf("second line: err = %v, want the read error", err)
	}
}
