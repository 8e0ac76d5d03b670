package redact

// Configured secrets and user patterns are found by searching ahead (an
// index or a regexp run) rather than by asking at each position, so their
// next candidate is cached: String searches the text once per match, not
// once per line.

// extCand is the leftmost cached candidate, start relative to the buffer
// (st none when there is none).
type extCand struct {
	start int
	cand
}

type extCache struct {
	valid      bool
	bufEnd     int // absolute end of the buffer searched
	start, end int // absolute
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
	joined, haveJoined := "", false
	for i := range sc.ext {
		e := &sc.ext[i]
		if !e.valid || e.bufEnd != bufEnd || (e.st != none && e.start < sc.abs) {
			var s, en int
			var st status
			if i < len(sc.r.literals) {
				s, en, st = sc.r.literals[i].find(buf, final)
			} else {
				p := &sc.r.patterns[i-len(sc.r.literals)]
				if p.ctx != nil && !haveJoined {
					joined, haveJoined = sc.withContext(input, off, buf), true
				}
				s, en, st = p.find(buf, sc.lastRune, joined, final)
			}
			*e = extCache{valid: true, bufEnd: bufEnd, start: sc.abs + s, end: sc.abs + en, st: st}
		}
		if e.st == none {
			continue
		}
		if s := e.start - sc.abs; best.st == none || s < best.start {
			out := configuredMarker
			if i >= len(sc.r.literals) {
				out = patternMarker
			}
			best = extCand{start: s, cand: cand{st: e.st, end: e.end - sc.abs, out: out}}
		}
	}
	return best
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
