package redact

import "unicode/utf8"

// Configured secrets and user patterns are found by searching ahead (an
// index or a regexp run) rather than by asking at each position, so their
// next candidate is cached: String searches the text once per match, and a
// Stream searches only what arrived since the last search (a search that
// found nothing, or only the start of a candidate, rules out every position
// before it for good).

// extCand is the leftmost cached candidate, start relative to the buffer
// (st none when there is none).
type extCand struct {
	start int
	cand
}

type extCache struct {
	valid      bool
	final      bool // searched knowing the text ends at bufEnd
	bufEnd     int  // absolute end of the text searched
	start, end int  // absolute; for partial, start is where to hold from
	st         status
}

var (
	configuredMarker = marker(kindConfigured)
	patternMarker    = marker(kindPattern)
)

// external returns the leftmost candidate of the configured secrets and
// user patterns in buf (= input[off:]). Of candidates at the same place,
// the first detector wins: longer secrets, then patterns in config order.
func (sc *scanner) external(input string, off int, buf string, final bool) extCand {
	best := extCand{start: -1}
	bufEnd := sc.abs + len(buf)
	for i := range sc.ext {
		e := &sc.ext[i]
		from, search := sc.abs, true
		switch {
		case !e.valid:
		case e.st == none: // nothing starts before the old end
			from = max(e.bufEnd, sc.abs)
			search = e.bufEnd != bufEnd || e.final != final
		case e.start < sc.abs: // another detector's match covered it
		case e.st == found: // decided for good
			search = false
		default: // partial: nothing starts before it
			from = e.start
			search = e.bufEnd != bufEnd || e.final != final
		}
		if search {
			rel := from - sc.abs
			var s, en int
			var st status
			if p := sc.r.pattern(i); p == nil {
				s, en, st = sc.r.literals.find(buf[rel:], final)
			} else {
				pre, joined := sc.lastRune, ""
				if rel > 0 {
					_, n := utf8.DecodeLastRuneInString(buf[:rel])
					pre, joined = buf[rel-n:rel], buf[rel-n:]
				} else if p.ctx != nil {
					joined = sc.withContext(input, off, buf)
				}
				s, en, st = p.find(buf[rel:], pre, joined, final)
			}
			*e = extCache{valid: true, final: final, bufEnd: bufEnd, start: from + s, end: from + en, st: st}
			if st == none {
				e.start = from
			}
		}
		if e.st == none {
			continue
		}
		if s := e.start - sc.abs; best.st == none || s < best.start {
			out := patternMarker
			if sc.r.pattern(i) == nil {
				out = configuredMarker
			}
			best = extCand{start: s, cand: cand{st: e.st, end: e.end - sc.abs, out: out}}
		}
	}
	return best
}

// externals is the number of detectors that search ahead: the configured
// secrets (one set), then the patterns.
func (r *Redactor) externals() int {
	if r.literals == nil {
		return len(r.patterns)
	}
	return 1 + len(r.patterns)
}

// pattern returns the pattern of external detector i, nil for the
// configured secrets.
func (r *Redactor) pattern(i int) *pattern {
	if r.literals != nil {
		if i == 0 {
			return nil
		}
		i--
	}
	return &r.patterns[i]
}

// withContext returns the last consumed rune followed by buf, without
// copying when input still holds it.
func (sc *scanner) withContext(input string, off int, buf string) string {
	n := len(sc.lastRune)
	if off >= n && input[off-n:off] == sc.lastRune {
		return input[off-n : off+len(buf)]
	}
	return sc.lastRune + buf
}
