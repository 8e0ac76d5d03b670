package slack

// Health reports whether the adapter receives from Slack, for /readyz: in
// Socket Mode, whether the websocket is connected (slack-go reconnects it
// by itself; the detail says since when it is down and why); in HTTP mode,
// whether auth.test succeeded at start, after which Slack's requests reach
// Handler without any connection of ours to watch.
func (a *Adapter) Health() (ok bool, detail string) { return a.link.Health(0) }
