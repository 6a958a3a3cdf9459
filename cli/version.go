package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	etcdversion "go.etcd.io/etcd/api/v3/version"
)

// versionText is what --version prints: etcdscope's own version (the module
// version, or the commit it was built from), the Go that built it, the etcd
// client it speaks with, and the Kubernetes release whose types it decodes.
func versionText() string {
	own := "(unknown)"
	if info, ok := debug.ReadBuildInfo(); ok {
		own = moduleVersion(info)
	}
	// The staging modules are tagged v0.X.Y for Kubernetes v1.X.Y.
	api := "v0." + strings.TrimPrefix(decode.KubernetesVersion, "v1.")
	return fmt.Sprintf("etcdscope %s\ngo: %s %s/%s\netcd client: %s\nkubernetes: %s (k8s.io/api %s)\n",
		own, runtime.Version(), runtime.GOOS, runtime.GOARCH, etcdversion.Version, decode.KubernetesVersion, api)
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
