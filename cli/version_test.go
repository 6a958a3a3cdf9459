package cli

import (
	"runtime/debug"
	"testing"
)

func TestModuleVersionSaysWhatWasBuilt(t *testing.T) {
	stamped := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "b68fd2a603cf6c6b9f1e8da5882e60d9a214334e"},
		{Key: "vcs.time", Value: "2026-12-01T21:58:24Z"},
	}
	dirty := append(stamped[:len(stamped):len(stamped)], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	clean := append(stamped[:len(stamped):len(stamped)], debug.BuildSetting{Key: "vcs.modified", Value: "false"})
	tests := []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"go install of a release", "v1.4.0", nil, "v1.4.0"},
		{"go build of a tagged checkout", "v1.4.0", clean, "v1.4.0"},
		{"go build of a modified checkout", "v0.0.0-20261201215824-b68fd2a603cf+dirty", dirty, "commit b68fd2a603cf of 2026-12-01 21:58:24 UTC, with uncommitted changes"},
		{"go build of a commit", "v0.0.0-20261201215824-b68fd2a603cf", clean, "commit b68fd2a603cf of 2026-12-01 21:58:24 UTC"},
		{"go run, stamped", "(devel)", clean, "commit b68fd2a603cf of 2026-12-01 21:58:24 UTC"},
		{"a build without stamping", "(devel)", nil, "(devel): built without version control information (go build -buildvcs=true stamps it)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/etcdscope/etcdscope", Version: tc.version}, Settings: tc.settings}
			if got := moduleVersion(info); got != tc.want {
				t.Errorf("version %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOwnVersionIsTheStampedReleaseAndItsCommit(t *testing.T) {
	checkout := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201215824-b68fd2a603cf"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "b68fd2a603cf6c6b9f1e8da5882e60d9a214334e"},
		{Key: "vcs.time", Value: "2026-12-01T21:58:24Z"},
	}}
	bare := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	tests := []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"release/build in a checkout", "v1.2.3", checkout, "v1.2.3 (commit b68fd2a603cf)"},
		{"release/build outside a checkout", "v1.2.3", bare, "v1.2.3"},
		{"go build in a checkout", "", checkout, "commit b68fd2a603cf of 2026-12-01 21:58:24 UTC"},
		{"no build info", "", nil, "(unknown)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ownVersion(tc.stamped, tc.info); got != tc.want {
				t.Errorf("version %q, want %q", got, tc.want)
			}
		})
	}
}
