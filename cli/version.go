package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	etcdversion "go.etcd.io/etcd/api/v3/version"
)

// version is the release this binary is, stamped by release/build with
// -ldflags -X; empty in any other build, which says what it was built from.
var version string

// versionText is what --version prints: etcdscope's own version (the module
// version, or the commit it was built from), the Go that built it, the etcd
// client it speaks with, and the Kubernetes release whose types it decodes.
func versionText() string {
	info, _ := debug.ReadBuildInfo()
	own := ownVersion(version, info)
	// The staging modules are tagged v0.X.Y for Kubernetes v1.X.Y.
	api := "v0." + strings.TrimPrefix(decode.KubernetesVersion, "v1.")
	return fmt.Sprintf("etcdscope %s\ngo: %s %s/%s\netcd client: %s\nkubernetes: %s (k8s.io/api %s)\n",
		own, runtime.Version(), runtime.GOOS, runtime.GOARCH, etcdversion.Version, decode.KubernetesVersion, api)
}

// ownVersion is the stamped release, with the commit it was built from when
// the build recorded one (a release built from a checkout), or else what the
// build info says (moduleVersion).
func ownVersion(stamped string, info *debug.BuildInfo) string {
	rev := ""
	if info != nil {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	switch {
	case stamped != "" && rev != "":
		return fmt.Sprintf("%s (commit %.12s)", stamped, rev)
	case stamped != "":
		return stamped
	case info == nil:
		return "(unknown)"
	}
	return moduleVersion(info)
}

// moduleVersion is the main module's version as the build info Go embeds
// says it, so that go build, go run and go install each say it without a
// linker flag: the version `go install ...@vX` records; else, for a build
// from a checkout with version control stamping (-buildvcs, on by default
// outside GOFLAGS), the commit, its time and whether the tree had
// uncommitted changes. The go command makes a pseudo-version of the commit
// for such a build (v0.0.0-TIME-COMMIT+dirty), which says the same less
// plainly.
func moduleVersion(info *debug.BuildInfo) string {
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	v, rev := info.Main.Version, vcs["vcs.revision"]
	pseudo := rev != "" && strings.Contains(v, rev[:min(len(rev), 12)])
	switch {
	case v != "" && v != "(devel)" && !pseudo:
		return v
	case rev == "":
		return "(devel): built without version control information (go build -buildvcs=true stamps it)"
	}
	v = fmt.Sprintf("commit %.12s", rev)
	if t, err := time.Parse(time.RFC3339, vcs["vcs.time"]); err == nil {
		v += " of " + t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if vcs["vcs.modified"] == "true" {
		v += ", with uncommitted changes"
	}
	return v
}
