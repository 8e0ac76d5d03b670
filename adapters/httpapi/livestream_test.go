package httpapi

import "testing"

// A stream's queue grows as frames come, wakes its writer once for many
// frames, and cuts the stream off when it is a whole buffer behind.
func TestLiveStreamQueue(t *testing.T) {
	s := newLiveStream()
	if cap(s.q) != 0 {
		t.Fatalf("an idle stream holds a queue of %d", cap(s.q))
	}
	for i := int64(1); i <= streamBuffer; i++ {
		s.push(frame{seq: i})
	}
	select {
	case <-s.full:
		t.Fatal("cut off with the buffer just full")
	default:
	}
	if len(s.wake) != 1 {
		t.Fatalf("%d wake-ups waiting, want one for all the frames", len(s.wake))
	}
	if got := s.take(); len(got) != streamBuffer || got[0].seq != 1 || got[streamBuffer-1].seq != streamBuffer {
		t.Fatalf("took %d frames", len(got))
	}
	if got := s.take(); len(got) != 0 {
		t.Fatalf("took %d frames from an empty queue", len(got))
	}
	for i := int64(0); i <= streamBuffer; i++ {
		s.push(frame{seq: i})
	}
	select {
	case <-s.full:
	default:
		t.Fatal("a stream a whole buffer behind was not cut off")
	}
}
