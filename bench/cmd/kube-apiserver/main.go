// Command kube-apiserver is kube-apiserver itself, from the k8s.io/kubernetes
// release in go.mod, as its own cmd/kube-apiserver builds it: the
// benchmark of creates/s through the bundled control plane's in-process
// kube-apiserver runs it beside, on the same etcd, as a standalone process
// to compare with.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() { os.Exit(cli.Run(app.NewAPIServerCommand())) }
