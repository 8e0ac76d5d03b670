package terminal

import (
	"os/user"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
)

// LocalUser is the person at this terminal: the OS user. An OS user named
// like core.SystemActor gets another id: decisions in that id are refused,
// as they must be for anyone but opsgate itself.
func LocalUser(getenv func(string) string) core.Actor {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = getenv("USER")
	}
	if name == "" {
		name = "local"
	}
	// An identity "terminal:<user>" (docs/design.md §11): a policy's people can
	// name it, and it can never be SystemActor's.
	return core.Actor{ID: chats.Qualify("terminal", name), Name: name}
}
