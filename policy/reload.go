package policy

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// ReloadOnHUP reloads the policy file into holder, for serve, on every SIGHUP
// until ctx ends (docs/design.md §11). The swap is atomic; a file that does not
// load keeps the policy in force, and the log says why (FILE:LINE). The
// returned channel receives the outcome of each reload, for tests.
func ReloadOnHUP(ctx context.Context, holder *Holder, file string, log *slog.Logger) <-chan error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan error, 16)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			err := reload(holder, file, log)
			select {
			case done <- err:
			default:
			}
		}
	}()
	return done
}

func reload(holder *Holder, file string, log *slog.Logger) error {
	if file == "" {
		log.Info("SIGHUP: no policy file to reload (policy.file is not set)")
		return nil
	}
	p, err := holder.Reload(file)
	if err != nil {
		log.Error("SIGHUP: policy not reloaded; the policy in force stays", "err", err)
		return err
	}
	people, roles, rules := p.Counts()
	log.Info("SIGHUP: policy reloaded", "file", file, "people", people, "roles", roles, "rules", rules)
	return nil
}
