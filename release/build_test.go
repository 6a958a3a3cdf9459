// Package release tests release/build, the release script, and
// release/Dockerfile, which copies from the script's output. The script runs
// here over a stand-in for the go command, which writes a small file where
// go build would write the binary: what is tested is the script's own work
// (flags, names, archives, sums, the krew manifest), in a second. .ci/run
// runs the real build, and krew's own checks of the manifest.
package release

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// fakeGo is the stand-in for go: go build writes "binary GOOS/GOARCH" at
// its -o path; nothing else is called with --no-check.
const fakeGo = `#!/bin/sh
[ "$1" = build ] || { echo "fake go: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then printf 'binary %s/%s\n' "$GOOS" "$GOARCH" >"$2"; fi
  shift
done
`

// build runs release/build args over the stand-in go, and returns its
// combined output and exit status.
func build(t *testing.T, args ...string) (string, int) {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{"build"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestBuildWritesArchivesSumsAndKrewManifest(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	const version = "v1.2.3-rc.1"
	log, code := build(t, "--version", version, "--platforms", "linux/amd64,darwin/arm64", "--out", out,
		"--url", "https://example.test/dl", "--no-check")
	if code != 0 {
		t.Fatalf("release/build: exit status %d\n%s", code, log)
	}
	sums := readSums(t, filepath.Join(out, "etcdscope_"+version+"_SHA256SUMS"))
	manifest := readManifest(t, filepath.Join(out, "plugins", "etcdscope.yaml"))
	if manifest.Spec.Version != version || manifest.Metadata.Name != "etcdscope" {
		t.Errorf("manifest is of %s %s, want etcdscope %s", manifest.Metadata.Name, manifest.Spec.Version, version)
	}
	var platforms []string
	for _, p := range manifest.Spec.Platforms {
		platforms = append(platforms, p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"])
	}
	if want := []string{"linux/amd64", "darwin/arm64"}; !slices.Equal(platforms, want) {
		t.Fatalf("manifest's platforms %v, want %v", platforms, want)
	}
	for i, p := range manifest.Spec.Platforms {
		goos, goarch, _ := strings.Cut(platforms[i], "/")
		archive := fmt.Sprintf("etcdscope_%s_%s_%s.tar.gz", version, goos, goarch)
		t.Run(archive, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(out, archive))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(body)
			if got := hex.EncodeToString(sum[:]); sums[archive] != got {
				t.Errorf("sums file says %q, the archive's sum is %s", sums[archive], got)
			}
			if p.Sha256 != sums[archive] || p.URI != "https://example.test/dl/"+archive {
				t.Errorf("manifest's platform is %s with sha256 %s, want %s with the sums file's %s",
					p.URI, p.Sha256, "https://example.test/dl/"+archive, sums[archive])
			}
			if p.Bin != "etcdscope" {
				t.Errorf("manifest's bin %q, want etcdscope", p.Bin)
			}
			members := readArchive(t, body)
			if want := fmt.Sprintf("binary %s/%s\n", goos, goarch); members["etcdscope"] != want {
				t.Errorf("archive's etcdscope holds %q, want the %s build", members["etcdscope"], platforms[i])
			}
			readme, err := os.ReadFile("../README.md")
			if err != nil {
				t.Fatal(err)
			}
			if members["README.md"] != string(readme) {
				t.Errorf("archive's README.md is not the repository's")
			}
			for _, f := range p.Files {
				if _, ok := members[f.From]; !ok {
					t.Errorf("manifest copies %s, which the archive lacks", f.From)
				}
			}
		})
	}
}

func TestDockerfileCopiesTheLinuxBinaryTheScriptLeaves(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	const version = "v0.9.0"
	if log, code := build(t, "--version", version, "--platforms", "linux/arm64,linux/amd64", "--out", out, "--no-check"); code != 0 {
		t.Fatalf("release/build: exit status %d\n%s", code, log)
	}
	args, copies, labels := readDockerfile(t, "Dockerfile")
	if len(copies) != 1 {
		t.Fatalf("Dockerfile has %d COPY lines, want 1: %q", len(copies), copies)
	}
	// buildx sets TARGETOS and TARGETARCH for each platform.
	for _, arch := range []string{"amd64", "arm64"} {
		vars := map[string]string{"VERSION": version, "TARGETOS": "linux", "TARGETARCH": arch}
		src, dst, _ := strings.Cut(copies[0], " ")
		src = expand(src, vars)
		got, err := os.ReadFile(filepath.Join(out, src))
		if err != nil {
			t.Fatalf("COPY %s %s for linux/%s: %v", src, dst, arch, err)
		}
		if want := "binary linux/" + arch + "\n"; string(got) != want {
			t.Errorf("COPY %s for linux/%s copies %q, want that platform's build", src, arch, got)
		}
	}
	// A plain docker build takes the defaults: linux/amd64.
	if args["TARGETOS"] != "linux" || args["TARGETARCH"] != "amd64" {
		t.Errorf("Dockerfile's defaults are %s/%s, want linux/amd64", args["TARGETOS"], args["TARGETARCH"])
	}
	if got := expand(labels["org.opencontainers.image.version"], map[string]string{"VERSION": version}); got != version {
		t.Errorf("image's version label is %q, want %q", got, version)
	}
}

func TestBuildRefusesBadFlagsWithOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no version", nil, "--version must be a semantic version"},
		{"a version without v", []string{"--version", "1.2.3"}, `(got "1.2.3")`},
		{"a version krew cannot order", []string{"--version", "v1.2"}, `(got "v1.2")`},
		{"a platform not built", []string{"--version", "v1.0.0", "--platforms", "linux/amd64,windows/amd64"}, `unsupported platform "windows/amd64"`},
		{"a flag without its value", []string{"--version"}, "--version needs a value"},
		{"an unknown flag", []string{"--version", "v1.0.0", "--sign"}, `unknown argument "--sign"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			log, code := build(t, append([]string{"--out", out}, tc.args...)...)
			if code != 1 || !strings.HasPrefix(log, "release/build: ") || strings.Count(log, "\n") != 1 || !strings.Contains(log, tc.want) {
				t.Errorf("exit status %d, output %q; want 1 and one line with %q", code, log, tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("the refused build wrote %d files", len(entries))
			}
		})
	}
}

// manifest is what the tests read of krew's Plugin type.
type manifest struct {
	Metadata struct{ Name string }
	Spec     struct {
		Version   string
		Platforms []struct {
			URI      string
			Sha256   string
			Bin      string
			Selector struct{ MatchLabels map[string]string }
			Files    []struct{ From, To string }
		}
	}
}

func readManifest(t *testing.T, path string) manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// readSums reads a sha256sum file into the sum of each file it names.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for line := range strings.Lines(string(b)) {
		sum, file, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
		if !ok {
			t.Fatalf("%s: line %q is not sha256sum's", path, line)
		}
		sums[file] = sum
	}
	return sums
}

// readArchive is the contents of each file in a tar.gz.
func readArchive(t *testing.T, body []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]string{}
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return members
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		members[h.Name] = string(b)
	}
}

// readDockerfile is what the tests read of a Dockerfile: the defaults of
// its ARGs, its COPY lines' "SRC DST", and its labels (one per line, as
// release/Dockerfile writes them, continuation lines joined).
func readDockerfile(t *testing.T, path string) (args map[string]string, copies []string, labels map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	args, labels = map[string]string{}, map[string]string{}
	label := regexp.MustCompile(`([\w.]+)="([^"]*)"`)
	for line := range strings.Lines(text) {
		instr, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch instr {
		case "ARG":
			name, def, _ := strings.Cut(rest, "=")
			args[name] = def
		case "COPY":
			copies = append(copies, strings.Join(strings.Fields(rest), " "))
		case "LABEL":
			for _, m := range label.FindAllStringSubmatch(rest, -1) {
				labels[m[1]] = m[2]
			}
		}
	}
	return args, copies, labels
}

// expand replaces ${NAME} as docker build does with the build's values.
func expand(s string, vars map[string]string) string {
	return os.Expand(s, func(name string) string { return vars[name] })
}
