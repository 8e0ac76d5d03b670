package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// A replica's liveness (DESIGN §16) is a session advisory lock on
// 'opsgate:lease:replica:<name>', held on a connection of its own, plus
// the heartbeat that renews its holds (conv_holders.expires_at) while the
// lock is held. The rule another replica applies before it takes up a
// conversation (and so its interrupted run) is:
//
//	the holder is dead  ⇔  its lock is absent
//	                     ∧ its hold has lapsed (expires_at < now())
//	                     ∧ the judge has itself held its own lock for
//	                       at least holdFor
//
// The lock alone is not enough: after a PostgreSQL restart every lock is
// gone at once, and the replica that reconnects first would see all the
// others dead before they could re-take theirs. The lapse alone is not
// enough either: the heartbeat cannot run while the store is down, so
// every hold has lapsed when it returns. The judge's own grace covers
// that window: a replica that (re)takes its lock waits holdFor before it
// judges anyone, time enough for every live replica to re-take its lock
// (a lost lock is re-taken within a few seconds of the store answering),
// after which a replica is dead only if its lock stays absent.
//
// A replica that cannot show it is alive (its lock's connection broke,
// or has not answered for livenessUnsure) stops claiming, taking up and
// firing, renews nothing, and says so (Alive, for /readyz and the
// opsgate_replica_liveness gauge) until it has re-taken the lock. Its
// holds are renewed at once when it does, before anyone could judge it.
const (
	// livenessPing is how often the lock's connection is checked.
	livenessPing = time.Second
	// livenessUnsure: a ping unanswered this long means this replica
	// cannot show it is alive (the connection may be silently dropped),
	// although the server may still hold its lock.
	livenessUnsure = 2 * time.Second
	// livenessGiveUp: a ping unanswered this long ends the connection
	// (a silent path); the lock is then taken again on a new one. Until
	// then the server keeps the lock, so a path that drops packets for a
	// while does not make this replica look dead to the others.
	livenessGiveUp = 30 * time.Second
	// staleSession: a session holding this replica's lock that has not
	// spoken for this long is a stale one of this replica (see
	// takeLiveness).
	staleSession = 10 * time.Second
	// livenessRetryMax bounds the wait between attempts to re-take it.
	livenessRetryMax = 2 * time.Second
	// claimWaitsAlive is how long a claim made while this replica is not
	// alive waits for it to be again (as store calls wait for the store),
	// so that a message or a decision in the moment after an outage is not
	// left to a later sweep.
	claimWaitsAlive = 5 * time.Second
)

// errNotAlive is Claim's answer while this replica cannot show it is
// alive.
var errNotAlive = errors.New("this replica cannot show it is alive (its liveness lock is not held); it claims nothing until it re-takes it")

// liveness is the state of this replica's lock.
type liveness struct {
	mu     sync.Mutex
	alive  bool
	since  time.Time // when alive last became true
	detail string    // why not alive
	// back is closed (and replaced) when alive becomes true.
	back chan struct{}
}

// awaitAlive waits up to claimWaitsAlive, or until ctx ends, for this
// replica to be alive.
func (c *Coordinator) awaitAlive(ctx context.Context) {
	c.live.mu.Lock()
	alive, back := c.live.alive, c.live.back
	c.live.mu.Unlock()
	if alive {
		return
	}
	t := time.NewTimer(claimWaitsAlive)
	defer t.Stop()
	select {
	case <-back:
	case <-ctx.Done():
	case <-t.C:
	}
}

// Alive reports whether this replica holds its liveness lock, and why not
// when it does not (for /readyz).
func (c *Coordinator) Alive() (bool, string) {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	if c.live.alive {
		return true, "holds its liveness lock since " + c.live.since.UTC().Format(time.RFC3339)
	}
	return false, c.live.detail
}

// judging reports whether this replica is alive and has been for holdFor,
// so that it may judge another replica dead (see the rule above).
func (c *Coordinator) judging() (alive, judge bool) {
	c.live.mu.Lock()
	defer c.live.mu.Unlock()
	return c.live.alive, c.live.alive && time.Since(c.live.since) >= c.grace
}

func (c *Coordinator) setAlive() {
	c.live.mu.Lock()
	was := c.live.alive
	if !was {
		c.live.alive, c.live.since, c.live.detail = true, time.Now(), ""
		close(c.live.back)
		c.live.back = make(chan struct{})
	}
	c.live.mu.Unlock()
	if !was {
		c.log.Info("replica liveness held", "replica", c.replica)
	}
}

func (c *Coordinator) setDead(detail string) {
	c.live.mu.Lock()
	was := c.live.alive || c.live.detail == ""
	c.live.alive, c.live.detail = false, detail
	c.live.mu.Unlock()
	if was {
		c.log.Warn("replica liveness lost: not claiming, taking up or firing until it is re-taken", "replica", c.replica, "why", detail)
	}
}

// lockKey is the advisory lock of this replica's liveness (the key
// holderAlive looks for).
func (c *Coordinator) lockKey() string { return "opsgate:lease:replica:" + c.replica }

// keepAlive holds this replica's liveness lock until ctx ends, taking it
// again whenever its connection is lost. conn, when not nil, already
// holds it.
func (c *Coordinator) keepAlive(ctx context.Context, conn *pgx.Conn) {
	for delay := 100 * time.Millisecond; ctx.Err() == nil; delay = min(2*delay, livenessRetryMax) {
		if conn == nil {
			var err error
			if conn, err = c.takeLiveness(ctx); err != nil {
				if ctx.Err() == nil {
					c.setDead("take the liveness lock: " + err.Error())
				}
				select {
				case <-ctx.Done():
				case <-time.After(delay):
				}
				continue
			}
		}
		delay = 100 * time.Millisecond
		c.setAlive()
		err := c.watchLiveness(ctx, conn)
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(cctx)
		cancel()
		conn = nil
		if ctx.Err() == nil {
			c.setDead("the liveness lock's connection broke: " + err.Error())
		}
	}
}

// takeLiveness connects and takes the lock. Its holds are renewed first:
// between the end of an earlier session of this replica that still holds
// the lock and the new lock, the lock is absent, and unlapsed holds keep
// the other replicas from judging this one dead meanwhile.
func (c *Coordinator) takeLiveness(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, c.s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*pgx.Conn, error) {
		conn.Close(context.Background())
		return nil, err
	}
	if _, err := conn.Exec(cctx, `UPDATE conv_holders SET expires_at = now() + $2::interval WHERE holder = $1`, c.replica, holdFor.String()); err != nil {
		return fail(fmt.Errorf("renew holds: %w", err))
	}
	var ok bool
	if err := conn.QueryRow(cctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, c.lockKey()).Scan(&ok); err != nil {
		return fail(err)
	}
	if !ok {
		// Replica names are unique among live processes, so the holder
		// is an earlier session of this one that the server has not seen
		// end (its path went silent): end it and take the lock. A session
		// that spoke lately (a live holder pings every livenessPing) is
		// left alone: two processes under one name must not take the
		// lock from each other in turn.
		if _, err := conn.Exec(cctx, `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
			JOIN pg_stat_activity a ON a.pid = l.pid AND a.state_change < now() - $2::interval
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid <> pg_backend_pid()
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`, c.lockKey(), staleSession.String()); err != nil {
			return fail(fmt.Errorf("end this replica's stale session: %w", err))
		}
		if _, err := conn.Exec(cctx, `SET lock_timeout = '5s'`); err != nil {
			return fail(err)
		}
		if _, err := conn.Exec(cctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, c.lockKey()); err != nil {
			return fail(fmt.Errorf("held by another session of replica %s: %w", c.replica, err))
		}
		if _, err := conn.Exec(cctx, `RESET lock_timeout`); err != nil {
			return fail(err)
		}
	}
	return conn, nil
}

// watchLiveness pings the lock's connection until it fails or ctx ends.
// A ping unanswered for livenessUnsure makes this replica not alive while
// it waits (up to livenessGiveUp) for the answer.
func (c *Coordinator) watchLiveness(ctx context.Context, conn *pgx.Conn) error {
	t := time.NewTicker(livenessPing)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, livenessGiveUp)
		done := make(chan error, 1)
		go func() { done <- conn.Ping(pctx) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(livenessUnsure):
			c.setDead(fmt.Sprintf("the store has not answered the liveness check for %s", livenessUnsure))
			err = <-done
		}
		cancel()
		if err != nil {
			return err
		}
		if alive, _ := c.judging(); !alive {
			// The lock was held throughout; the holds are renewed before
			// this replica claims again.
			c.renew(ctx)
			c.setAlive()
		}
	}
}
