// Command etcd is etcd itself, at the version etcdscope is built with
// (go.etcd.io/etcd/server/v3 in go.mod): bench/run builds it so that the
// figures are taken against the etcd that current Kubernetes releases run
// (3.5 and later), not only Debian's 3.4.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
