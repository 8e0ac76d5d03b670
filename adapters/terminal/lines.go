package terminal

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// MaxLineBytes is the longest line the terminal accepts, 1 MiB, without its
// line end. A longer line is rejected whole: Run and Ask report it, read on
// to its end without keeping it, and go on with the next line.
const MaxLineBytes = 1 << 20

// maxLineText names MaxLineBytes in messages.
const maxLineText = "1 MiB"

// lineReader reads lines of at most max bytes. Unlike bufio.Scanner, whose
// token limit ends the scan, a longer line costs only itself.
type lineReader struct {
	r   *bufio.Reader
	max int
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64*1024), max: max}
}

// next returns the next line without "\n" or "\r\n". tooLong reports a line
// over the limit, whose text is not returned. The last line needs no line
// end; after it, err is io.EOF.
func (lr *lineReader) next() (line string, tooLong bool, err error) {
	var buf []byte
	n := 0
	for {
		frag, err := lr.r.ReadSlice('\n')
		n += len(frag)
		if !tooLong {
			if len(buf)+len(frag) > lr.max+len("\r\n") {
				tooLong, buf = true, nil // read on, keep nothing
			} else {
				buf = append(buf, frag...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && n > 0: // the last line, without a line end
		case err != nil:
			return "", false, err
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		if tooLong || len(buf) > lr.max {
			return "", true, nil
		}
		return string(buf), false, nil
	}
}
