package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/opsgate/opsgate/core"
)

var _ core.Leaser = (*Store)(nil)

// leasePing is how often a held lease's connection is checked.
const leasePing = 2 * time.Second

// TryLease takes a session advisory lock on a connection of its own (not
// the pool's: the lock lives as long as the connection). The server drops
// the lock when the connection ends, which it does at once when the
// holder's process dies, even by kill -9.
func (s *Store) TryLease(ctx context.Context, name string) (core.Lease, bool, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, false, fmt.Errorf("postgres: lease %s: %w", name, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, "opsgate:lease:"+name).Scan(&ok); err != nil {
		conn.Close(context.Background())
		return nil, false, fmt.Errorf("postgres: lease %s: %w", name, err)
	}
	if !ok {
		conn.Close(context.Background())
		return nil, false, nil
	}
	l := &lease{conn: conn, lost: make(chan struct{}), stop: make(chan struct{})}
	l.done.Add(1)
	go l.watch()
	return l, true, nil
}

type lease struct {
	conn *pgx.Conn
	lost chan struct{}
	stop chan struct{}
	once sync.Once
	done sync.WaitGroup
}

func (l *lease) Lost() <-chan struct{} { return l.lost }

// watch pings the lock's connection; a failed ping means the server may
// have dropped the lock, so the lease is lost.
func (l *lease) watch() {
	defer l.done.Done()
	t := time.NewTicker(leasePing)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), leasePing)
		err := l.conn.Ping(ctx)
		cancel()
		if err != nil {
			close(l.lost)
			return
		}
	}
}

// Release closes the connection, which drops the lock.
func (l *lease) Release() {
	l.once.Do(func() {
		close(l.stop)
		l.done.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		l.conn.Close(ctx)
	})
}
