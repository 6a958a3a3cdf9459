//go:build tools

// Package etcdutl pins the etcdutl that bench/run and the space tests
// compare `etcdscope du --db` with (`etcdutl snapshot status`): etcdutl at
// the etcd version etcdscope is built with, in a module of its own so that
// its dependencies do not move the main module's.
package etcdutl

import _ "go.etcd.io/etcd/etcdutl/v3"
