package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/opsgate/opsgate/core"
)

var _ core.Leaser = (*Store)(nil)

// TryLease takes an exclusive flock on a file next to the database: a
// SQLite store is shared only by processes on one machine, and the
// kernel drops the lock when the holder dies, even by kill -9.
func (s *Store) TryLease(ctx context.Context, name string) (core.Lease, bool, error) {
	f, err := os.OpenFile(s.leasePath(name), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("sqlite: lease %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("sqlite: lease %s: %w", name, err)
	}
	return &fileLease{f: f, lost: make(chan struct{})}, true, nil
}

// leasePath is the file whose lock is the lease name.
func (s *Store) leasePath(name string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	return filepath.Join(filepath.Dir(s.path), "."+filepath.Base(s.path)+".lease-"+safe)
}

// leaseHeld reports whether a process (this one included) holds the lease
// name. A lease nobody ever took is not held.
func (s *Store) leaseHeld(name string) bool {
	f, err := os.OpenFile(s.leasePath(name), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	// flock locks belong to the open file: this one conflicts with every
	// other holder, in this process too.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

type fileLease struct {
	f    *os.File
	lost chan struct{} // never closed: a local lock cannot be lost
	once sync.Once
}

func (l *fileLease) Lost() <-chan struct{} { return l.lost }

func (l *fileLease) Release() { l.once.Do(func() { l.f.Close() }) }
