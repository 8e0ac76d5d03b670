package chats

import (
	"context"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// Qualify returns the identity of id on platform, "platform:id"
// (docs/design.md §11); an id that has the prefix already is kept, as is "".
func Qualify(platform, id string) string {
	if id == "" || strings.HasPrefix(id, platform+":") {
		return id
	}
	return platform + ":" + id
}

// Options are what [As] adds to the engine besides identities.
type Options struct {
	// Decided, when set, is told what each decision attempt came to.
	Decided func(platform string, err error)
}

// As returns e as platform's adapters see it: the actors of the messages
// and decisions they pass on are qualified ([Qualify]). When e is a
// [Keeper], so is the engine returned.
func As(platform string, e Engine, o Options) Engine {
	p := &asPlatform{e: e, platform: platform, o: o}
	if k, ok := e.(Keeper); ok {
		return &keeperEngine{asPlatform: p, k: k}
	}
	return p
}

type asPlatform struct {
	e        Engine
	platform string
	o        Options
}

func (p *asPlatform) qualify(a core.Actor) core.Actor {
	a.ID = Qualify(p.platform, a.ID)
	return a
}

func (p *asPlatform) Handle(ctx context.Context, in core.Inbound) error {
	in.User = p.qualify(in.User)
	return p.e.Handle(ctx, in)
}

func (p *asPlatform) Stop(ctx context.Context, key string) bool { return p.e.Stop(ctx, key) }

func (p *asPlatform) Decide(ctx context.Context, d core.Decision) (core.Approval, error) {
	d.Actor = p.qualify(d.Actor)
	a, err := p.e.Decide(ctx, d)
	if p.o.Decided != nil {
		p.o.Decided(p.platform, err)
	}
	return a, err
}

func (p *asPlatform) Status(ctx context.Context, key string) (core.Status, error) {
	return p.e.Status(ctx, key)
}

type keeperEngine struct {
	*asPlatform
	k Keeper
}

func (k *keeperEngine) StartConversation(ctx context.Context, key string) error {
	return k.k.StartConversation(ctx, key)
}

func (k *keeperEngine) ConversationKeys(ctx context.Context, prefix string) ([]string, error) {
	return k.k.ConversationKeys(ctx, prefix)
}
