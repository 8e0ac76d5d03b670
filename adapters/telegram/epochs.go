package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/opsgate/opsgate/adapters/chats"
)

// A chat's current conversation is the one the latest /new started in it
// (key "telegram:BOT:CHAT:EPOCH"), else its plain key. While polling, the
// first chat the adapter does not know yet makes it read, once per Run,
// every chat of this bot a /new moved (loadEpochs), so that no other
// chat's first message needs a store read of its own: a chat that read did
// not find continues its plain key. Only the poller does this: polling
// runs under a lease (docs/design.md §12), so while it runs no other
// replica handles this bot's /new. A webhook, which every replica may
// serve, looks each chat up on its own (convKey). Each polling Run starts
// by forgetting what the last one learnt (forgetEpochs), since another
// replica may have held the lease in between.

// forgetEpochs drops what an earlier Run learnt about the chats'
// conversations; the next chat to need it loads them again.
func (a *Adapter) forgetEpochs() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.epochs = map[int64]string{}
	a.loaded = false
	a.load = new(sync.Once)
	a.gen++
}

// knownEpoch returns chat's epoch when the adapter knows it without asking
// the store for this chat: cached, or read with every other chat's by
// loadEpochs (which it runs, once per polling Run).
func (a *Adapter) knownEpoch(ctx context.Context, k chats.Keeper, chat int64) (string, bool) {
	a.mu.Lock()
	epoch, ok := a.epochs[chat]
	load, gen := a.load, a.gen
	a.mu.Unlock()
	if ok || load == nil {
		return epoch, ok
	}
	load.Do(func() { a.loadEpochs(ctx, k, gen) })
	a.mu.Lock()
	defer a.mu.Unlock()
	epoch, ok = a.epochs[chat]
	return epoch, ok || (a.loaded && a.gen == gen)
}

// loadEpochs reads the keys of this bot's conversations and keeps, for each
// chat a /new moved, its latest epoch (message ids, which grow). If the
// store does not answer, chats are looked up one by one, as before.
func (a *Adapter) loadEpochs(ctx context.Context, k chats.Keeper, gen uint64) {
	prefix := fmt.Sprintf("telegram:%d:", a.botID)
	keys, err := k.ConversationKeys(ctx, prefix)
	if err != nil {
		a.log.Warn("telegram: read the chats' current conversations; looking chats up one by one", "err", err)
		return
	}
	best := map[int64]int64{}
	for _, key := range keys {
		chatStr, epoch, ok := strings.Cut(strings.TrimPrefix(key, prefix), ":")
		if !ok {
			continue
		}
		chat, err1 := strconv.ParseInt(chatStr, 10, 64)
		n, err2 := strconv.ParseInt(epoch, 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if b, seen := best[chat]; !seen || n > b {
			best[chat] = n
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gen != gen { // a later Run forgot what this one read
		return
	}
	for chat, n := range best {
		if _, ok := a.epochs[chat]; !ok { // a /new meanwhile wins
			a.epochs[chat] = strconv.FormatInt(n, 10)
		}
	}
	a.loaded = true
}
