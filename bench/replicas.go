package bench

import (
	"context"
	"fmt"
	"os"
	"regexp"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// pgReplicas is what figure 9's rows run replicas of the real binary
// against: a throw-away PostgreSQL, the Bot API and model fakes in this
// process, and a directory for the configuration.
type pgReplicas struct {
	path    string // the built cmd/opsgate
	cluster *pgtest.Cluster
	tg      *telegramtest.Server
	model   *llmfake.Server
	dir     string
}

func newPGReplicas(ctx context.Context, bin *binary) (_ *pgReplicas, err error) {
	r := &pgReplicas{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.path, err = bin.get(ctx); err != nil {
		return nil, err
	}
	if r.cluster, err = pgtest.Start(); err != nil {
		return nil, fmt.Errorf("PostgreSQL (needed for figure 9): %w", err)
	}
	r.tg, r.model = telegramtest.NewServer(), llmfake.NewServer()
	if r.dir, err = os.MkdirTemp("", "opsgate-bench-replicas-"); err != nil {
		return nil, err
	}
	return r, nil
}

// config writes serve's configuration for users against the fakes, with
// the store on the cluster.
func (r *pgReplicas) config(users []int64) (string, error) {
	cfg, err := writeServeConfig(r.dir, r.model.URL, r.tg.URL, users)
	if err != nil {
		return "", err
	}
	return cfg, useStore(cfg, r.cluster.URL("postgres"))
}

func (r *pgReplicas) close() {
	if r.model != nil {
		r.model.Close()
	}
	if r.tg != nil {
		r.tg.Close()
	}
	if r.cluster != nil {
		r.cluster.Close()
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

// sqliteStore is writeServeConfig's store line.
var sqliteStore = regexp.MustCompile(`(?m)^  url: sqlite://.*$`)

// useStore points the configuration file cfg at the store url.
func useStore(cfg, url string) error {
	b, err := os.ReadFile(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(cfg, sqliteStore.ReplaceAll(b, []byte("  url: "+url)), 0o600)
}
