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
