//go:build tools

// Package kine pins the kine that tests run as a fifth etcd, k3s' default
// datastore: the etcd API over SQLite. In a module of its own so that its
// dependencies (mattn/go-sqlite3, which needs cgo) never reach the main
// module, which reads SQLite with a pure-Go driver.
package kine

import _ "github.com/k3s-io/kine"
