// Command etcd is etcd 3.5 (go.etcd.io/etcd/server/v3 v3.5.35, the newest 3.5
// patch release on the module proxy), etcd's own etcdmain built in a module of
// its own so that its dependencies do not move the main module's. The version
// matrix of the tests (embedded/etcdtest) and bench/run --etcd 3.5 run it as a
// separate process.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
