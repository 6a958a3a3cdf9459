package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	etcdversion "go.etcd.io/etcd/api/v3/version"
)

// versionText is what --version prints: etcdscope's own version (the module
// version, or the commit it was built from), the Go that built it, the etcd
// client it speaks with, and the Kubernetes release whose types it decodes.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	own, kube := "(unknown)", "(unknown)"
	if ok {
		own = moduleVersion(info)
		for _, d := range info.Deps {
			if d.Path == "k8s.io/api" {
				kube = kubernetesRelease(d.Version)
			}
		}
	}
	return fmt.Sprintf("etcdscope %s\ngo: %s %s/%s\netcd client: %s\nkubernetes: %s\n",
		own, runtime.Version(), runtime.GOOS, runtime.GOARCH, etcdversion.Version, kube)
}

// moduleVersion is the main module's version, which `go install ...@vX`
// records; a build from a checkout records (devel) and, when git was there,
// the commit.
func moduleVersion(info *debug.BuildInfo) string {
	v := info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if rev != "" {
		v += fmt.Sprintf(" (commit %.12s%s)", rev, modified)
	}
	return v
}

// kubernetesRelease maps k8s.io/api's module version to the Kubernetes
// release it is cut from: the staging modules are tagged v0.X.Y for
// Kubernetes v1.X.Y.
func kubernetesRelease(apiVersion string) string {
	if rest, ok := strings.CutPrefix(apiVersion, "v0."); ok {
		return "v1." + rest + " (k8s.io/api " + apiVersion + ")"
	}
	return "k8s.io/api " + apiVersion
}
