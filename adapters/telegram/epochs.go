package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// loadEpochs reads, once per polling Run, which chats of this bot a /new
// moved to a conversation of their own (keys "telegram:BOT:CHAT:EPOCH"),
// so that a chat's first message since the start needs no store read:
// a chat the read did not find continues its plain key, as it did before
// /new existed. Only the poller does this: polling runs under a lease
// (docs/design.md §12), so while it runs no other replica handles this
// bot's /new; a webhook, which every replica may serve, keeps looking a
// chat up in the store (convKey). What an earlier Run cached is dropped
// first (forgetEpochs, before polling starts), since another replica may
// have held the lease in between.
//
// It runs beside the calls Run makes before the first getUpdates, which
// waits for it up to loadWait; until it is done, or if the store does not
// answer, convKey looks chats up one by one as before.
// loadWait bounds how long the first getUpdates waits for loadEpochs.
const loadWait = 2 * time.Second

func (a *Adapter) loadEpochs(ctx context.Context, gen uint64) {
	k := a.keeper()
	if k == nil {
		return
	}
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

// forgetEpochs drops what an earlier Run learnt about the chats'
// conversations; loadEpochs (given the generation it returns) or convKey
// learn it again.
func (a *Adapter) forgetEpochs() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.epochs = map[int64]string{}
	a.loaded = false
	a.gen++
	return a.gen
}
