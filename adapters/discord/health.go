package discord

// Health reports whether the gateway connection is established (READY or
// RESUMED received, not dropped since), for /readyz. While the adapter
// reconnects, the detail says since when and why the connection ended.
func (a *Adapter) Health() (ok bool, detail string) { return a.link.Health(0) }
