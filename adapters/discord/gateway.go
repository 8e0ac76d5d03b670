package discord

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// The adapter runs the gateway connection itself; discordgo is used for
// REST, types and its channel state. discordgo v0.29.0's own connection
// (Session.Open) cannot be reconnected safely: its heartbeat goroutine
// outlives the connection it was started for and, when its write to the
// closed socket fails, calls Session.Close, which closes whatever
// connection the session has by then. After a drop, that is the new
// connection: a re-identified session was torn down before its READY was
// read, the next connection identified again, and every event Discord had
// dispatched to the torn-down session (a user's message) was lost. Here
// every goroutine of a connection only ever touches that connection, and
// all of them have ended before the next connection is dialled.

// Gateway opcodes.
const (
	opDispatch       = 0
	opHeartbeat      = 1
	opIdentify       = 2
	opResume         = 6
	opReconnect      = 7
	opInvalidSession = 9
	opHello          = 10
	opHeartbeatACK   = 11
)

// Reconnection: after a lost connection, then doubling up to a minute
// while attempts fail; Discord's op 7 Reconnect is followed at once.
const (
	firstBackoff = time.Second
	maxBackoff   = time.Minute
	// helloTimeout bounds the wait for Hello after dialling.
	helloTimeout = 20 * time.Second
	// writeTimeout bounds one write to the gateway.
	writeTimeout = 10 * time.Second
	// closeResumable is the close code the adapter ends a connection with
	// when it means to resume: Discord ends the session on 1000 and 1001.
	closeResumable = 4000
)

// gwSession is what resuming needs: the session id, the URL to resume at,
// and the sequence number of the last dispatch handed to the handlers.
// Only Run's goroutine touches it, except seq, which heartbeats read.
type gwSession struct {
	id        string
	resumeURL string
	seq       atomic.Int64
}

func (s *gwSession) forget() {
	s.id, s.resumeURL = "", ""
	s.seq.Store(0)
}

// ending is why a connection ended, and what to do next.
type ending struct {
	err         error // why (for the log)
	fatal       error // retrying cannot help (token, intents)
	established bool  // READY or RESUMED was received on it
	fresh       bool  // the session cannot be resumed: identify next time
	now         bool  // Discord asked for a reconnection (op 7): no wait
}

// gateway connects to the gateway and reconnects after every ending until
// ctx ends or Discord refuses the bot for good. A dropped session is
// resumed (op 6 Resume with the last sequence number), so Discord replays
// what it dispatched while the connection was down; duplicates are
// dropped by the seen set and by the engine's inbound dedupe. ready is
// called after every READY.
func (a *Adapter) gateway(ctx context.Context, ready func()) error {
	var sess gwSession
	backoff := firstBackoff
	for {
		end := a.connection(ctx, &sess, ready)
		if ctx.Err() != nil {
			return nil
		}
		a.link.Down(end.err)
		if end.fatal != nil {
			return end.fatal
		}
		if end.established {
			backoff = firstBackoff
		}
		wait := backoff
		switch {
		case end.fresh:
			// Discord: wait 1 to 5 s before identifying again.
			sess.forget()
			wait = max(wait, time.Second+rand.N(4*time.Second))
			a.log.Info("gateway session invalidated; identifying again", "err", end.err, "in", wait)
		case end.now:
			wait = 0
			a.log.Info("gateway asked for a reconnection; resuming", "err", end.err)
		case end.established:
			a.log.Warn("gateway connection lost; reconnecting", "err", end.err, "in", wait)
		default:
			a.log.Warn("gateway connection failed; retrying", "err", end.err, "in", wait)
		}
		if !end.established {
			backoff = min(2*backoff, maxBackoff)
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

// connection runs one gateway connection: dial, Hello, Identify or
// Resume, then dispatches in order until the connection ends. It returns
// only after the connection's other goroutines (heartbeat, closer) have.
func (a *Adapter) connection(ctx context.Context, sess *gwSession, ready func()) ending {
	base := sess.resumeURL
	resume := sess.id != ""
	if !resume || base == "" {
		u, err := a.gatewayURL(ctx)
		if err != nil {
			return ending{err: err, fatal: fatal(err)}
		}
		base = u
	}
	ws, _, err := a.dg.Dialer.DialContext(ctx, wsURL(base), nil)
	if err != nil {
		if base == sess.resumeURL {
			sess.resumeURL = "" // resume through the main gateway next time
		} else {
			a.gwURL = "" // ask for the gateway's address again
		}
		return ending{err: err}
	}
	c := &gwConn{ws: ws}
	c.acked.Store(true)

	done := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(done)
		c.close(closeResumable) // no-op when already closed
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		// Run ending ends the session too (1000): the bot goes offline.
		defer wg.Done()
		select {
		case <-ctx.Done():
			c.close(websocket.CloseNormalClosure)
		case <-done:
		}
	}()

	ws.SetReadDeadline(time.Now().Add(helloTimeout))
	p, err := c.read()
	if err != nil {
		return a.readEnding(err, false)
	}
	var hello struct {
		Interval int64 `json:"heartbeat_interval"`
	}
	if p.Op != opHello || json.Unmarshal(p.D, &hello) != nil || hello.Interval <= 0 {
		return ending{err: fmt.Errorf("discord: expected Hello from the gateway, got op %d", p.Op)}
	}
	ws.SetReadDeadline(time.Time{})
	interval := time.Duration(hello.Interval) * time.Millisecond
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.heartbeat(interval, &sess.seq, done, a)
	}()

	if resume {
		err = c.send(opResume, map[string]any{"token": a.dg.Token, "session_id": sess.id, "seq": sess.seq.Load()})
	} else {
		err = c.send(opIdentify, map[string]any{
			"token": a.dg.Token, "intents": a.dg.Identify.Intents, "large_threshold": 250,
			"properties": map[string]string{"os": runtime.GOOS, "browser": "opsgate", "device": "opsgate"},
		})
	}
	if err != nil {
		return a.readEnding(err, false)
	}

	established := false
	for {
		p, err := c.read()
		if err != nil {
			return a.readEnding(err, established)
		}
		switch p.Op {
		case opDispatch:
			switch p.T {
			case "READY":
				var r struct {
					SessionID string `json:"session_id"`
					ResumeURL string `json:"resume_gateway_url"`
				}
				json.Unmarshal(p.D, &r)
				sess.id, sess.resumeURL = r.SessionID, r.ResumeURL
				established = true
			case "RESUMED":
				established = true
			}
			if established {
				a.link.Up()
			}
			a.dispatch(p.T, p.D)
			// The event is handed over (handlers only queue work), so a
			// resume need not replay it.
			if p.S != 0 {
				sess.seq.Store(p.S)
			}
			if p.T == "READY" && ready != nil {
				ready()
			}
		case opHeartbeat:
			c.send(opHeartbeat, seqOrNil(sess.seq.Load()))
		case opHeartbeatACK:
			c.acked.Store(true)
		case opReconnect:
			c.close(closeResumable)
			return ending{err: errors.New("discord: op 7 Reconnect"), established: established, now: true}
		case opInvalidSession:
			var resumable bool
			json.Unmarshal(p.D, &resumable)
			c.close(closeResumable)
			return ending{err: errors.New("discord: op 9 Invalid Session"), established: established, fresh: !resumable, now: resumable}
		}
	}
}

// readEnding classifies the error that ended a connection.
func (a *Adapter) readEnding(err error, established bool) ending {
	end := ending{err: err, established: established, fatal: fatal(err)}
	var ce *websocket.CloseError
	if errors.As(err, &ce) && (ce.Code == 4007 || ce.Code == 4009) {
		end.fresh = true // invalid sequence, session timed out
	}
	return end
}

// gatewayURL returns the gateway's address, asked once (GET gateway).
func (a *Adapter) gatewayURL(ctx context.Context) (string, error) {
	if a.gwURL == "" {
		u, err := a.dg.Gateway(discordgo.WithContext(ctx))
		if err != nil {
			return "", err
		}
		a.gwURL = u
	}
	return a.gwURL, nil
}

// wsURL adds the version and encoding to a gateway address.
func wsURL(base string) string {
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return base + "?v=" + discordgo.APIVersion + "&encoding=json"
}

func seqOrNil(seq int64) any {
	if seq == 0 {
		return nil
	}
	return seq
}

// dispatch hands an event to its handler; channel and guild events feed
// discordgo's state, which place lookups read.
func (a *Adapter) dispatch(t string, d json.RawMessage) {
	var ev any
	switch t {
	case "READY":
		ev = &discordgo.Ready{}
	case "RESUMED":
		a.onResumed(a.dg, &discordgo.Resumed{})
		return
	case "MESSAGE_CREATE":
		ev = &discordgo.MessageCreate{}
	case "INTERACTION_CREATE":
		ev = &discordgo.InteractionCreate{}
	case "GUILD_CREATE":
		ev = &discordgo.GuildCreate{}
	case "GUILD_UPDATE":
		ev = &discordgo.GuildUpdate{}
	case "GUILD_DELETE":
		ev = &discordgo.GuildDelete{}
	case "CHANNEL_CREATE":
		ev = &discordgo.ChannelCreate{}
	case "CHANNEL_UPDATE":
		ev = &discordgo.ChannelUpdate{}
	case "CHANNEL_DELETE":
		ev = &discordgo.ChannelDelete{}
	case "THREAD_CREATE":
		ev = &discordgo.ThreadCreate{}
	case "THREAD_UPDATE":
		ev = &discordgo.ThreadUpdate{}
	case "THREAD_DELETE":
		ev = &discordgo.ThreadDelete{}
	case "THREAD_LIST_SYNC":
		ev = &discordgo.ThreadListSync{}
	default:
		return
	}
	if err := json.Unmarshal(d, ev); err != nil {
		a.log.Warn("undecodable gateway event", "type", t, "err", err)
		if t != "READY" {
			return
		}
	}
	switch e := ev.(type) {
	case *discordgo.Ready:
		a.state(e)
		a.onReady(a.dg, e)
	case *discordgo.MessageCreate:
		a.onMessage(a.dg, e)
	case *discordgo.InteractionCreate:
		a.onInteraction(a.dg, e)
	case *discordgo.GuildCreate:
		if e.Guild != nil {
			guildIDs(e.Guild)
			a.state(e)
		}
	case *discordgo.GuildUpdate:
		if e.Guild != nil {
			guildIDs(e.Guild)
			a.state(e)
		}
	case *discordgo.GuildDelete:
		if e.Guild != nil {
			a.state(e)
		}
	case *discordgo.ChannelCreate:
		if e.Channel != nil {
			a.state(e)
		}
	case *discordgo.ChannelUpdate:
		if e.Channel != nil {
			a.state(e)
		}
	case *discordgo.ChannelDelete:
		if e.Channel != nil {
			a.state(e)
		}
	case *discordgo.ThreadCreate:
		if e.Channel != nil {
			a.state(e)
		}
	case *discordgo.ThreadUpdate:
		if e.Channel != nil {
			a.state(e)
		}
	case *discordgo.ThreadDelete:
		if e.Channel != nil {
			a.state(e)
		}
	default:
		a.state(ev)
	}
}

// state feeds an event to discordgo's state.
func (a *Adapter) state(ev any) {
	if err := a.dg.State.OnInterface(a.dg, ev); err != nil {
		a.log.Debug("gateway state", "err", err)
	}
}

// guildIDs sets the guild id of a guild's channels and threads, which
// GUILD_CREATE leaves out.
func guildIDs(g *discordgo.Guild) {
	for _, c := range g.Channels {
		c.GuildID = g.ID
	}
	for _, c := range g.Threads {
		c.GuildID = g.ID
	}
}

func (a *Adapter) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	a.mu.Lock()
	if r.User != nil {
		a.botID = r.User.ID
	}
	if a.appID == "" && r.Application != nil {
		a.appID = r.Application.ID
	}
	a.mu.Unlock()
	name := ""
	if r.User != nil {
		name = r.User.Username
	}
	a.log.Info("connected to the Discord gateway", "bot", name, "guilds", len(r.Guilds))
}

func (a *Adapter) onResumed(_ *discordgo.Session, _ *discordgo.Resumed) {
	a.log.Info("gateway session resumed")
}

// gwConn is one gateway websocket. Its reader is the connection's
// goroutine; writes (identify, heartbeats) are serialised, and close may
// come from any goroutine (gorilla allows it alongside a writer).
type gwConn struct {
	ws    *websocket.Conn
	wmu   sync.Mutex
	acked atomic.Bool // the last heartbeat was acknowledged
}

// payload is a gateway message.
type payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  int64           `json:"s"`
	T  string          `json:"t"`
}

func (c *gwConn) read() (payload, error) {
	typ, data, err := c.ws.ReadMessage()
	if err != nil {
		return payload{}, err
	}
	if typ == websocket.BinaryMessage { // zlib-compressed payload
		z, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			return payload{}, fmt.Errorf("discord: gateway payload: %w", err)
		}
		data, err = io.ReadAll(z)
		z.Close()
		if err != nil {
			return payload{}, fmt.Errorf("discord: gateway payload: %w", err)
		}
	}
	var p payload
	if err := json.Unmarshal(data, &p); err != nil {
		return payload{}, fmt.Errorf("discord: gateway payload: %w", err)
	}
	return p, nil
}

func (c *gwConn) send(op int, d any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteJSON(map[string]any{"op": op, "d": d})
}

// close sends a close frame with code and closes the socket, which ends
// the reader. Closing twice does nothing more.
func (c *gwConn) close(code int) {
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
	c.ws.Close()
}

// heartbeat sends a heartbeat every interval (the first after a random
// part of it, as Discord asks) until stop is closed. A heartbeat not
// acknowledged by the time of the next one means the connection is dead
// (a zombie): it is closed, to be resumed.
func (c *gwConn) heartbeat(interval time.Duration, seq *atomic.Int64, stop <-chan struct{}, a *Adapter) {
	t := time.NewTimer(rand.N(interval))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !c.acked.Swap(false) {
			a.log.Warn("the gateway did not acknowledge a heartbeat; reconnecting", "interval", interval)
			c.close(closeResumable)
			return
		}
		if c.send(opHeartbeat, seqOrNil(seq.Load())) != nil {
			return // the reader sees the connection end
		}
		t.Reset(interval)
	}
}
