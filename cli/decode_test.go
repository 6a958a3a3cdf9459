package cli

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
)

// runDecode runs `etcdscope decode args... < stdin` through the cobra command.
func runDecode(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runDecodeFrom(t, bytes.NewReader(stdin), args...)
}

func TestDecodeCommandPrintsWhatEtcdctlPiped(t *testing.T) {
	pod, err := os.ReadFile(kube17 + "storage-pod.bin")
	if err != nil {
		t.Fatalf("real values are missing from testdata/kube-1.7: %v", err)
	}
	tests := []struct {
		name    string
		stdin   []byte
		args    []string
		want    string
		wantErr string
	}{
		{"yaml by default", pod, nil, "apiVersion: v1\nkind: Pod\nmetadata:\n", ""},
		{"meta only", pod, []string{"--meta-only"}, "  name: pi-dqtsw\n", ""},
		{"json", pod, []string{"-o", "json"}, "\"nodeName\": \"kubernetes-minion-group-vlql\"", ""},
		{"garbage exits 1 naming it", []byte{0xde, 0xad, 0xbe, 0xef}, []string{"--key", "/registry/pods/a/b"}, "",
			"cannot decode the value of /registry/pods/a/b as a Kubernetes object (4 bytes of binary)"},
		{"encrypted without config asks for it", []byte("k8s:enc:aescbc:v1:key1:0123456789abcdef"), nil, "",
			`encrypted with aescbc key "key1"; pass --encryption-config`},
		{"bad output format", pod, []string{"-o", "xml"}, "", `unknown output format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runDecode(t, tt.stdin, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(out, tt.want) {
				t.Errorf("err = %v, output lacks %q:\n%s", err, tt.want, out)
			}
		})
	}
}

func TestDecodeCommandRejectsABrokenEncryptionConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "enc.yaml")
	cfg := fmt.Sprintf("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - secretbox:\n      keys: [{name: k, secret: %s}]\n",
		base64.StdEncoding.EncodeToString([]byte("too short")))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := runDecode(t, []byte("x"), "--encryption-config", path)
	if err == nil || !strings.Contains(err.Error(), "--encryption-config "+path) {
		t.Errorf("err = %v, want it to name the file", err)
	}
}

// endless is a stdin that never ends, counting what is read of it.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	e.read += len(p)
	return len(p), nil
}

func TestDecodeRefusesMoreThanOneValueCanBe(t *testing.T) {
	in := &endless{}
	_, _, err := runDecodeFrom(t, in)
	if err == nil || !strings.Contains(err.Error(), "stdin holds more than 40 MiB") {
		t.Fatalf("err = %v, want stdin too large", err)
	}
	if in.read > maxValueBytes+1<<20 {
		t.Errorf("read %d bytes of stdin, want at most the cap and a buffer", in.read)
	}
}

// runDecodeFrom runs `etcdscope decode` with stdin read from r.
func runDecodeFrom(t *testing.T, r io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newDecodeCmd()
	var out, errOut bytes.Buffer
	cmd.SetArgs(append([]string{}, args...)) // nil would make cobra read os.Args
	cmd.SetIn(r)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestDecodeOnATerminalIsInert decodes a ConfigMap whose data and
// annotations hold OSC and CSI sequences, and a text value holding them:
// a terminal gets them escaped, a pipe the bytes (escaped only as YAML and
// JSON escape them).
func TestDecodeOnATerminalIsInert(t *testing.T) {
	cm := clitest.TerminalAttackValue(t)
	for _, tc := range []struct {
		value  []byte
		output string
	}{{cm, "yaml"}, {cm, "json"}, {cm, "proto"}, {[]byte("{\"data\": {\"x\": \"\u202e\u009b\"}}"), "yaml"}} {
		var tty, pipe, errOut bytes.Buffer
		err := decodeValue(cmdutil.Printer{Out: &tty, ErrOut: &errOut, P: cmdutil.Palette{TTY: true}, EP: cmdutil.Palette{TTY: true}, Output: tc.output}, bytes.NewReader(tc.value), decode.Decoder{ShowSecrets: true}, "", false)
		if err != nil || tty.Len() == 0 {
			t.Fatalf("-o %s: %v, %q", tc.output, err, tty.String())
		}
		if strings.ContainsAny(tty.String()+errOut.String(), "\x1b\x07\u009b\u202e") {
			t.Errorf("-o %s: the terminal gets %q", tc.output, tty.String())
		}
		decodeValue(cmdutil.Printer{Out: &pipe, ErrOut: io.Discard, Output: tc.output}, bytes.NewReader(tc.value), decode.Decoder{ShowSecrets: true}, "", false)
		if tc.output == "proto" && !bytes.Equal(pipe.Bytes(), cm) {
			t.Errorf("-o proto to a pipe is not the stored value")
		}
	}
}
