package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

// holdFor is how long a conversation stays held without a heartbeat: a
// dead replica's conversations are free again after at most this long.
const holdFor = 15 * time.Second

// signalChannel is the LISTEN/NOTIFY channel of every replica; a payload
// names the replica it is for.
const signalChannel = "opsgate_signals"

// Coordinator is core.Coordinator over PostgreSQL: conversations are held
// in conv_holders with a heartbeat, and signals travel by NOTIFY on a
// connection of its own, re-synced from the tables after a reconnect.
type Coordinator struct {
	s       *Store
	replica string
	// live is this replica's liveness (see liveness.go): a lock held on a
	// connection of its own, taken again whenever it is lost.
	live liveness
	// grace is how long this replica holds its lock before it judges
	// another dead (holdFor).
	grace   time.Duration
	log     *slog.Logger
	signals chan core.Signal
	cancel  context.CancelFunc
	done    sync.WaitGroup
	// stopLive ends keepAlive, which drops the lock; liveDone is its end.
	stopLive context.CancelFunc
	liveDone sync.WaitGroup
}

var _ core.Coordinator = (*Coordinator)(nil)

// Coordinator starts the coordination of this replica (named replica, which
// must be unique among live replicas) until Close.
func (s *Store) Coordinator(replica string, log *slog.Logger) (core.Coordinator, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Coordinator{s: s, replica: replica, log: log, signals: make(chan core.Signal, 256), cancel: cancel, grace: holdFor}
	c.live.detail, c.live.back = "not taken yet", make(chan struct{})
	// The first attempt is made here, so that what runs right after
	// (recovery at start) finds this replica alive.
	conn, err := c.takeLiveness(ctx)
	if err != nil {
		c.setDead("take the liveness lock: " + err.Error())
	}
	lctx, stopLive := context.WithCancel(context.Background())
	c.stopLive = stopLive
	c.liveDone.Add(1)
	go func() { defer c.liveDone.Done(); c.keepAlive(lctx, conn) }()
	c.done.Add(2)
	go func() { defer c.done.Done(); c.heartbeat(ctx) }()
	go func() { defer c.done.Done(); c.listen(ctx) }()
	return c, c.Close
}

// Close stops the heartbeat and the listener and releases every
// conversation this replica holds.
func (c *Coordinator) Close() {
	c.cancel()
	c.done.Wait()
	// The lock goes after the holds: never absent while they are there.
	defer func() { c.stopLive(); c.liveDone.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM conv_holders WHERE holder = $1`, c.replica)
		return err
	})
}

// Claim takes the conversation unless another replica holds it and is
// not dead by the rule of liveness.go. It fails while this replica cannot
// show it is alive itself.
func (c *Coordinator) Claim(ctx context.Context, convKey string) (bool, error) {
	c.awaitAlive(ctx)
	alive, judge := c.judging()
	if !alive {
		return false, fmt.Errorf("postgres: claim %s: %w", convKey, errNotAlive)
	}
	var held bool
	err := c.s.inTx(ctx, func(tx pgx.Tx) error {
		var holder string
		err := tx.QueryRow(ctx, `INSERT INTO conv_holders (conv_key, holder, expires_at)
			VALUES ($1, $2, now() + $3::interval)
			ON CONFLICT (conv_key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE conv_holders.holder = excluded.holder
				OR $4 AND conv_holders.expires_at < now() AND NOT `+holderAlive+`
			RETURNING holder`, convKey, c.replica, holdFor.String(), judge).Scan(&holder)
		if errors.Is(err, pgx.ErrNoRows) {
			held = false
			return nil
		}
		held = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: claim %s: %w", convKey, err)
	}
	return held, nil
}

// Release gives the conversation up.
func (c *Coordinator) Release(ctx context.Context, convKey string) {
	err := c.s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM conv_holders WHERE conv_key = $1 AND holder = $2`, convKey, c.replica)
		return err
	})
	if err != nil {
		c.log.Warn("release a conversation (it expires by itself)", "conv", convKey, "err", err)
	}
}

// holderAlive is true while conv_holders.holder's liveness lease is held:
// a session advisory lock on the key hashtextextended('opsgate:lease:
// replica:<holder>'), which pg_locks shows split into classid (high 32
// bits) and objid (low 32 bits).
const holderAlive = `EXISTS (SELECT 1 FROM pg_locks l
	WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended('opsgate:lease:replica:' || conv_holders.holder, 0))`

type signalPayload struct {
	To string `json:"to"`
	core.Signal
}

// Signal notifies the live holder of sig.ConvKey.
func (c *Coordinator) Signal(ctx context.Context, sig core.Signal) (bool, error) {
	delivered := false
	err := c.s.inTx(ctx, func(tx pgx.Tx) error {
		var holder string
		// A holder that is not dead by the rule of liveness.go gets it
		// (one re-taking its lock gets it after a re-sync).
		err := tx.QueryRow(ctx, `SELECT holder FROM conv_holders WHERE conv_key = $1 AND (expires_at > now() OR `+holderAlive+`)`, sig.ConvKey).Scan(&holder)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && holder == c.replica {
			delivered = false
			return nil
		}
		if err != nil {
			return err
		}
		b, err := json.Marshal(signalPayload{To: holder, Signal: sig})
		if err != nil {
			return err
		}
		// Delivered at commit.
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, signalChannel, string(b))
		delivered = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: signal %s to the holder of %s: %w", sig.Kind, sig.ConvKey, err)
	}
	return delivered, nil
}

// Signals delivers the signals for this replica.
func (c *Coordinator) Signals() <-chan core.Signal { return c.signals }

// heartbeat renews this replica's holds while it is alive: a replica
// that cannot show it is alive lets them lapse.
func (c *Coordinator) heartbeat(ctx context.Context) {
	t := time.NewTicker(holdFor / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if alive, _ := c.judging(); alive {
			c.renew(ctx)
		}
	}
}

// renew extends this replica's holds by holdFor.
func (c *Coordinator) renew(ctx context.Context) {
	err := c.s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE conv_holders SET expires_at = now() + $2::interval WHERE holder = $1`, c.replica, holdFor.String())
		return err
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("renew held conversations", "err", err)
	}
}

// listen receives the notifications on a connection of its own; after a
// reconnect it asks for a re-sync, since notifications sent meanwhile are
// lost.
func (c *Coordinator) listen(ctx context.Context) {
	first := true
	for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, 5*time.Second) {
		conn, err := pgx.ConnectConfig(ctx, c.s.pool.Config().ConnConfig.Copy())
		if err == nil {
			_, err = conn.Exec(ctx, "LISTEN "+signalChannel)
		}
		if err != nil {
			if conn != nil {
				conn.Close(context.Background())
			}
			if ctx.Err() == nil {
				c.log.Warn("listen for signals; retrying", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
			continue
		}
		if !first {
			c.deliver(core.Signal{Kind: core.SignalResync})
		}
		first = false
		delay = 100 * time.Millisecond
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				break
			}
			var p signalPayload
			if json.Unmarshal([]byte(n.Payload), &p) != nil || p.To != c.replica {
				continue
			}
			c.deliver(p.Signal)
		}
		conn.Close(context.Background())
	}
}

func (c *Coordinator) deliver(sig core.Signal) {
	select {
	case c.signals <- sig:
	default:
		// Full: the engine is behind; a re-sync covers whatever was dropped.
		select {
		case c.signals <- core.Signal{Kind: core.SignalResync}:
		default:
		}
	}
}
