//go:build tools

// Package etcd pins the etcd server that ../build.sh builds; importing it
// lets go mod tidy record every go.sum entry.
package etcd

import _ "go.etcd.io/etcd/server/v3"
