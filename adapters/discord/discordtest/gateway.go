package discordtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes.
const (
	opDispatch     = 0
	opHeartbeat    = 1
	opIdentify     = 2
	opResume       = 6
	opReconnect    = 7
	opInvalid      = 9
	opHello        = 10
	opHeartbeatACK = 11
)

// privileged is the set of privileged intents (members, presences,
// message content) a bot must enable in the developer portal.
const privileged = 1<<1 | 1<<8 | 1<<15

// gateway is the fake gateway: one bot, sessions that survive a dropped
// connection and replay what was dispatched meanwhile on Resume.
type gateway struct {
	s        *Server
	interval time.Duration
	upgrader websocket.Upgrader

	mu         sync.Mutex
	sessions   map[string]*session
	current    *session // the last identified session
	conns      map[*conn]bool
	identifies []Identify
	resumes    int
	replayed   int
	heartbeats int
	deny       int // intents refused with close code 4014
}

type session struct {
	id   string
	seq  int64
	log  []frame
	conn *conn
}

type frame struct {
	seq  int64
	data []byte
}

type conn struct {
	ws      *websocket.Conn
	wmu     sync.Mutex
	session *session
	zombie  bool // nothing reaches the bot any more (g.mu)
}

// Identify is an Identify payload the gateway received.
type Identify struct {
	Token   string
	Intents int
	Time    time.Time
}

func newGateway(s *Server) *gateway {
	return &gateway{s: s, interval: time.Second, sessions: map[string]*session{}, conns: map[*conn]bool{}}
}

// DenyPrivilegedIntents makes Identify with a privileged intent fail with
// close code 4014, as when Message Content is not enabled in the portal.
func (s *Server) DenyPrivilegedIntents() {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.deny = privileged
}

// Identifies returns the Identify payloads received, oldest first.
func (s *Server) Identifies() []Identify {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return append([]Identify(nil), s.gw.identifies...)
}

// Resumes returns how many sessions were resumed.
func (s *Server) Resumes() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.resumes
}

// Replayed returns how many dispatches were sent again on Resume.
func (s *Server) Replayed() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.replayed
}

// Heartbeats returns how many heartbeats were received.
func (s *Server) Heartbeats() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.heartbeats
}

// Connected reports whether a bot session is connected (after READY or
// RESUMED).
func (s *Server) Connected() bool {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.current != nil && s.gw.current.conn != nil
}

// ForgetSessions makes every session unknown, as Discord does when a
// session expired: the next Resume is answered with op 9 Invalid Session
// and the bot must identify again.
func (s *Server) ForgetSessions() {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	clear(s.gw.sessions)
}

// Drop cuts the current gateway connection without a close frame, as a
// network failure would. Dispatches sent until the bot resumes are kept
// and replayed on Resume.
func (s *Server) Drop() {
	g := s.gw
	g.mu.Lock()
	var c *conn
	if g.current != nil {
		c, g.current.conn = g.current.conn, nil
	}
	g.mu.Unlock()
	if c != nil {
		c.ws.UnderlyingConn().Close()
	}
	s.mu.Lock()
	s.changedLocked()
	s.mu.Unlock()
}

// Reconnect asks the bot to reconnect and resume (op 7 Reconnect), as
// Discord does before a gateway server restarts. Dispatches sent until the
// bot resumes are kept and replayed on Resume.
func (s *Server) Reconnect() {
	g := s.gw
	g.mu.Lock()
	var c *conn
	if g.current != nil {
		c, g.current.conn = g.current.conn, nil
	}
	g.mu.Unlock()
	if c != nil {
		c.write(mustJSON(map[string]any{"op": opReconnect, "d": nil}))
	}
	s.mu.Lock()
	s.changedLocked()
	s.mu.Unlock()
}

// Zombie makes the current gateway connection a zombie, as a network path
// that silently stopped carrying packets: the socket stays open, but
// neither dispatches nor heartbeat ACKs reach the bot any more. Dispatches
// are kept and replayed on Resume.
func (s *Server) Zombie() {
	g := s.gw
	g.mu.Lock()
	if g.current != nil && g.current.conn != nil {
		g.current.conn.zombie = true
		g.current.conn = nil
	}
	g.mu.Unlock()
	s.mu.Lock()
	s.changedLocked()
	s.mu.Unlock()
}

func (g *gateway) closeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.conns {
		c.ws.UnderlyingConn().Close()
	}
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	g.mu.Lock()
	g.conns[c] = true
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.conns, c)
		if c.session != nil && c.session.conn == c {
			c.session.conn = nil
		}
		g.mu.Unlock()
		ws.Close()
	}()
	if c.write(mustJSON(map[string]any{"op": opHello, "d": map[string]any{"heartbeat_interval": g.interval.Milliseconds()}})) != nil {
		return
	}
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(data, &p) != nil {
			c.close(4002, "Error while decoding payload.")
			return
		}
		switch p.Op {
		case opHeartbeat:
			g.mu.Lock()
			g.heartbeats++
			zombie := c.zombie
			g.mu.Unlock()
			if !zombie {
				c.write(mustJSON(map[string]any{"op": opHeartbeatACK}))
			}
		case opIdentify:
			if !g.identify(c, r, p.D) {
				return
			}
		case opResume:
			g.resume(c, p.D)
		}
		g.s.mu.Lock()
		g.s.changedLocked()
		g.s.mu.Unlock()
	}
}

func (g *gateway) identify(c *conn, r *http.Request, raw json.RawMessage) bool {
	var d struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	json.Unmarshal(raw, &d)
	g.mu.Lock()
	g.identifies = append(g.identifies, Identify{Token: d.Token, Intents: d.Intents, Time: time.Now()})
	deny := g.deny
	g.mu.Unlock()
	if strings.TrimPrefix(d.Token, "Bot ") != g.s.Token {
		c.close(4004, "Authentication failed.")
		return false
	}
	if d.Intents&deny != 0 {
		c.close(4014, "Disallowed intent(s).")
		return false
	}
	var b [16]byte
	rand.Read(b[:])
	sess := &session{id: hex.EncodeToString(b[:])}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sessions[sess.id] = sess
	if g.current != nil && g.current.conn != nil && g.current.conn != c {
		g.current.conn.ws.UnderlyingConn().Close()
	}
	g.current, sess.conn, c.session = sess, c, sess
	g.sendLocked(sess, "READY", map[string]any{
		"v": 10, "user": g.s.Bot.wire(), "session_id": sess.id, "resume_gateway_url": "ws://" + r.Host + "/gw",
		"guilds": []any{}, "private_channels": []any{}, "application": map[string]any{"id": g.s.AppID, "flags": 0},
	})
	return true
}

func (g *gateway) resume(c *conn, raw json.RawMessage) {
	var d struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	json.Unmarshal(raw, &d)
	g.mu.Lock()
	defer g.mu.Unlock()
	sess := g.sessions[d.SessionID]
	if sess == nil || strings.TrimPrefix(d.Token, "Bot ") != g.s.Token {
		c.write(mustJSON(map[string]any{"op": opInvalid, "d": false}))
		return
	}
	if sess.conn != nil && sess.conn != c {
		sess.conn.ws.UnderlyingConn().Close()
	}
	g.resumes++
	g.current, sess.conn, c.session = sess, c, sess
	for _, f := range sess.log {
		if f.seq > d.Seq {
			g.replayed++
			c.write(f.data)
		}
	}
	g.sendLocked(sess, "RESUMED", map[string]any{})
}

// dispatch sends an event to the current session, or keeps it for the
// session's Resume when it is disconnected.
func (g *gateway) dispatch(typ string, data any) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.current == nil {
		return false
	}
	g.sendLocked(g.current, typ, data)
	return true
}

func (g *gateway) sendLocked(sess *session, typ string, data any) {
	sess.seq++
	b := mustJSON(map[string]any{"op": opDispatch, "s": sess.seq, "t": typ, "d": data})
	sess.log = append(sess.log, frame{seq: sess.seq, data: b})
	if sess.conn != nil {
		sess.conn.write(b)
	}
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func (c *conn) close(code int, text string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
}
