// Package pgtest gives tests a real PostgreSQL: a throw-away cluster started
// from the machine's server binaries once per test binary (Main), and a
// fresh database per test (DB). With OPSGATE_TEST_DATABASE_URL set, it uses
// that server instead and starts nothing.
//
// Without a server and without the binaries, tests that need PostgreSQL
// are skipped, except under CI=true, where that is a failure: CI must never
// report green for a suite it did not run.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names a server to use instead of a throw-away cluster. Its user
// must be allowed to create databases.
const EnvURL = "OPSGATE_TEST_DATABASE_URL"

// EnvBin names the directory of initdb, pg_ctl and postgres when they are
// neither on PATH nor under /usr/lib/postgresql/*/bin.
const EnvBin = "OPSGATE_PG_BIN"

var (
	cluster *Cluster // started by Main
	admin   string   // URL of a database to run CREATE DATABASE in
	missing error    // why there is no server
	dbSeq   atomic.Int64
)

// Main starts a cluster (unless EnvURL is set), runs the tests and stops
// it. Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	if u := os.Getenv(EnvURL); u != "" {
		admin = u
		return m.Run()
	}
	c, err := Start()
	if err != nil {
		missing = err
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "pgtest: CI=true and no PostgreSQL: %v\n", err)
			return 1
		}
		return m.Run()
	}
	cluster, admin = c, c.URL("postgres")
	defer c.Close()
	return m.Run()
}

// Server returns the cluster Main started, skipping (or, under CI, failing)
// the test when there is none; nil with EnvURL set.
func Server(t testing.TB) *Cluster {
	t.Helper()
	need(t)
	return cluster
}

func need(t testing.TB) {
	t.Helper()
	if admin != "" {
		return
	}
	if missing == nil {
		missing = errors.New("pgtest.Main was not called from TestMain")
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL is required: %v", missing)
	}
	t.Skipf("no PostgreSQL (%v); set %s or install the server binaries", missing, EnvURL)
}

// DB creates an empty database for t and returns its URL; the database is
// dropped when t ends.
func DB(t testing.TB) string {
	t.Helper()
	need(t)
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return // the server is gone; nothing to clean
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Cluster is a PostgreSQL server in a temporary directory.
type Cluster struct {
	dir, bin string
	port     int
	asUser   string // run the server binaries as this user ("" = as we are)
	durable  bool
	mu       sync.Mutex
}

// Start initialises and starts a cluster on a free port of 127.0.0.1,
// with durability off (fsync, synchronous_commit): tests need speed, not
// survival of a power cut.
func Start() (*Cluster, error) { return start(false) }

// StartDurable is Start with the server's default durability (fsync on),
// for benchmarks that must pay what production pays.
func StartDurable() (*Cluster, error) { return start(true) }

func start(durable bool) (*Cluster, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, durable: durable}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		c.asUser = "postgres"
		if _, err := user.Lookup(c.asUser); err != nil {
			return nil, fmt.Errorf("running as root and there is no %q user to run the server as: %w", c.asUser, err)
		}
	}
	if c.dir, err = os.MkdirTemp("", "opsgate-pg-"); err != nil {
		return nil, err
	}
	if c.asUser != "" {
		if out, err := exec.Command("chown", c.asUser, c.dir).CombinedOutput(); err != nil {
			os.RemoveAll(c.dir)
			return nil, fmt.Errorf("chown %s: %v: %s", c.dir, err, out)
		}
	}
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		os.RemoveAll(c.dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := c.Restart(); err != nil {
		os.RemoveAll(c.dir)
		return nil, err
	}
	return c, nil
}

// URL returns the URL of database db on the cluster.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// Port is the port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Stop stops the server (fast shutdown: clients are disconnected at once,
// committed data is kept for Restart; with fsync off, an immediate
// shutdown could lose it).
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, err := c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// StopImmediate stops the server as a crash would (immediate shutdown:
// no checkpoint; the next start recovers from the WAL). Committed data
// survives it only on a cluster from StartDurable.
func (c *Cluster) StopImmediate() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, err := c.run("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop -m immediate: %v: %s", err, out)
	}
	return nil
}

// Restart starts the server again on the same port (a first start picks a
// free one).
func (c *Cluster) Restart() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.port == 0 {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.port = port
	}
	flags := []string{
		"-c listen_addresses=127.0.0.1",
		"-p " + strconv.Itoa(c.port),
		"-k " + c.dir,
		"-c max_connections=300",
	}
	if !c.durable {
		// A test server: durability buys nothing and costs seconds.
		flags = append(flags, "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off")
	}
	opts := strings.Join(flags, " ")
	out, err := c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"), "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		return fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, log)
	}
	return nil
}

// Close stops the server and removes its directory.
func (c *Cluster) Close() {
	_ = c.Stop()
	os.RemoveAll(c.dir)
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", c.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.dir
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if cmd.Process != nil {
				cmd.Process.Kill()
			}
		case <-done:
		}
	}()
	out, err := cmd.CombinedOutput()
	close(done)
	return out, err
}

// findBin locates the PostgreSQL server binaries.
func findBin() (string, error) {
	if d := os.Getenv(EnvBin); d != "" {
		return d, nil
	}
	// Debian keeps the server binaries off PATH, under a versioned
	// directory; prefer the newest.
	if ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(ms) > 0 {
		best, bestV := "", -1
		for _, m := range ms {
			v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(m))))
			if v > bestV {
				best, bestV = m, v
			}
		}
		return filepath.Dir(best), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no initdb on PATH or under /usr/lib/postgresql/*/bin (set %s)", EnvBin)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
