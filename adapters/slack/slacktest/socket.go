package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Ack is a Socket Mode acknowledgement the client sent.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage
	Time       time.Time
	// Sent is when the envelope went out.
	Sent time.Time
}

type wsConn struct {
	c    *websocket.Conn
	wmu  sync.Mutex
	once sync.Once
	done chan struct{}
}

func (c *wsConn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.c.WriteMessage(websocket.TextMessage, b)
}

func (c *wsConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.c.Close()
	})
}

func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{c: ws, done: make(chan struct{})}
	ws.SetPongHandler(func(string) error {
		s.mu.Lock()
		s.pongs++
		s.mu.Unlock()
		return nil
	})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.close()
		return
	}
	s.conns = append(s.conns, c)
	s.accepted++
	interval := s.PingInterval
	s.changeLocked()
	s.mu.Unlock()

	defer func() {
		c.close()
		s.mu.Lock()
		for i, o := range s.conns {
			if o == c {
				s.conns = append(s.conns[:i], s.conns[i+1:]...)
				break
			}
		}
		s.changeLocked()
		s.mu.Unlock()
	}()
	if err := c.write(map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": AppID},
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 3600}}); err != nil {
		return
	}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				if err := ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second)); err != nil {
					return
				}
			}
		}
	}()
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		s.acks = append(s.acks, Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, Time: time.Now(), Sent: s.sent[ack.EnvelopeID]})
		s.changeLocked()
		s.mu.Unlock()
	}
}

// WaitConnected waits until a Socket Mode client is connected on the
// newest URL it was given: after a reconnect, the old socket may still be
// open (and about to close) before the new one is accepted.
func (s *Server) WaitConnected(t testing.TB) {
	t.Helper()
	s.Eventually(t, "a Socket Mode connection", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.conns) > 0 && s.accepted >= s.opens
	})
}

// Opens returns how many times apps.connections.open was called.
func (s *Server) Opens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens
}

// Pongs returns how many PONG frames answered the server's PINGs.
func (s *Server) Pongs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pongs
}

// Disconnect asks the connected client to reconnect, as Slack does before
// it rotates a connection.
func (s *Server) Disconnect(t testing.TB) {
	t.Helper()
	c := s.conn(t)
	if err := c.write(map[string]any{"type": "disconnect", "reason": "refresh_requested"}); err != nil {
		t.Fatalf("slacktest: disconnect: %v", err)
	}
}

func (s *Server) conn(t testing.TB) *wsConn {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 {
		t.Fatal("slacktest: no Socket Mode connection")
	}
	return s.conns[len(s.conns)-1]
}

// SendEnvelope sends an envelope of type typ ("events_api", "interactive",
// "slash_commands") on the newest connection and returns its id.
// retryAttempt > 0 marks a redelivery, as Slack marks them.
func (s *Server) SendEnvelope(t testing.TB, typ string, payload any, retryAttempt int) string {
	t.Helper()
	id, err := s.sendEnvelope(s.conn(t), typ, payload, retryAttempt)
	if err != nil {
		t.Fatalf("slacktest: send %s envelope: %v", typ, err)
	}
	return id
}

func (s *Server) sendEnvelope(c *wsConn, typ string, payload any, retryAttempt int) (string, error) {
	s.mu.Lock()
	s.envN++
	id := fmt.Sprintf("env-%04d", s.envN)
	s.sent[id] = time.Now()
	s.mu.Unlock()
	env := map[string]any{"envelope_id": id, "type": typ, "payload": payload,
		"accepts_response_payload": typ == "slash_commands", "retry_attempt": retryAttempt}
	if retryAttempt > 0 {
		env["retry_reason"] = "timeout"
	}
	return id, c.write(env)
}

// Acks returns the acknowledgements received so far.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ack(nil), s.acks...)
}

// WaitAck waits for the acknowledgement of an envelope.
func (s *Server) WaitAck(t testing.TB, envelopeID string) Ack {
	t.Helper()
	var got Ack
	s.Eventually(t, "the ack of "+envelopeID, func() bool {
		for _, a := range s.Acks() {
			if a.EnvelopeID == envelopeID {
				got = a
				return true
			}
		}
		return false
	})
	return got
}

// Unacked returns the envelopes sent but not acknowledged yet.
func (s *Server) Unacked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	acked := map[string]bool{}
	for _, a := range s.acks {
		acked[a.EnvelopeID] = true
	}
	var out []string
	for id := range s.sent {
		if !acked[id] {
			out = append(out, id)
		}
	}
	return out
}

// echoMessage delivers the bot's own post back as a message event.
func (s *Server) echoMessage(m Message) {
	s.mu.Lock()
	if len(s.conns) == 0 {
		s.mu.Unlock()
		return
	}
	c := s.conns[len(s.conns)-1]
	s.mu.Unlock()
	ev := m.wire()
	ev["channel"] = m.Channel
	ev["channel_type"] = channelType(m.Channel)
	ev["event_ts"] = m.TS
	_, body := s.EventCallback(ev)
	_, _ = s.sendEnvelope(c, "events_api", json.RawMessage(body), 0)
}

// Connections returns how many Socket Mode connections are open.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// SendEnvelopeOn is SendEnvelope on the i-th open connection, oldest first:
// Slack spreads a workspace's events over every open connection, and a
// test with several clients (replicas) picks which one gets each.
func (s *Server) SendEnvelopeOn(t testing.TB, i int, typ string, payload any) string {
	t.Helper()
	s.mu.Lock()
	if i < 0 || i >= len(s.conns) {
		n := len(s.conns)
		s.mu.Unlock()
		t.Fatalf("slacktest: no connection %d (%d open)", i, n)
	}
	c := s.conns[i]
	s.mu.Unlock()
	id, err := s.sendEnvelope(c, typ, payload, 0)
	if err != nil {
		t.Fatalf("slacktest: send %s envelope on connection %d: %v", typ, i, err)
	}
	return id
}
