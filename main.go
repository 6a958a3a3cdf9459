// Command etcdscope explores the Kubernetes cluster state stored in etcd: a
// terminal UI and a scriptable CLI over a live etcd, an offline data file, or
// its own bundled cluster. The commands live in package cli.
package main

import (
	"os"

	"github.com/etcdscope/etcdscope/cli"
)

func main() { os.Exit(cli.Main()) }
