//go:build tools

// Package etcdctl pins the etcdctl that bench/run compares etcdscope with:
// etcdctl at the etcd version etcdscope is built with, in a module of its
// own so that its dependencies do not move the main module's.
package etcdctl

import _ "go.etcd.io/etcd/etcdctl/v3"
